import ArgumentParser
import AudioRouteDemo
import AudioRouteSystem

/// `audioroute demo`: the story of route changes on a simulated phone (AudioRouteDemo).
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play a story of route changes through audiorouted on a simulated phone (no hardware needed).",
        discussion: """
            Needs dbus-daemon, umockdev-wrapper and Debian's /usr/bin/python3 with gi and dbusmock \
            (scripts/bootstrap installs them), and the fixtures in share/demo/ of the package (found \
            from the executable upwards, or --root). Prints the timeline and, per phase, the frames \
            each device received; exits 1 if any phase is off. Removes everything it started, on \
            Ctrl-C too.
            """
    )

    @Flag(help: "One JSON object per line instead of the timeline.")
    var json = false

    @Flag(help: "Keep the temporary directory (logs of every process, the file PCMs' output) and print its path.")
    var keep = false

    @Option(help: "The package root (holding share/demo and scripts/); default: found from the executable.")
    var root: String?

    @Option(help: "Instead of the story: N cycles of a USB headset plugged and unplugged, timing each plug from its uevent to the music's first frame on the headset (docs/benchmarks.md, Player).")
    var rerouteBench: Int?

    func run() async throws {
        var demo = DemoRunner()
        demo.json = json
        demo.keep = keep
        demo.root = root
        demo.rerouteBench = rerouteBench
        guard await demo.run() else { throw ExitCode(1) }
    }
}

/// `audioroute demo-sink FILE` (hidden): the far end of one of the demo's devices, started by
/// libasound at each open of the device's `file` PCM (see `AudioRouteDemo.DemoSink`).
struct DemoSinkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo-sink", abstract: "The demo's paced device end (started by libasound).", shouldDisplay: false)

    @Argument(help: "The output file (a free FILE.NNNN is taken if it exists).")
    var file: String

    @Option(help: "Bytes a second to read (48 kHz, 16-bit stereo: 192000).")
    var rate = 192_000

    func run() throws {
        do throws(Errno) {
            try DemoSink.run(file: file, rate: rate)
        } catch {
            throw ValidationError("cannot create \(file): \(error.code)")
        }
    }
}
