import ArgumentParser
import AudioRouteCore

#if canImport(Glibc)
import Glibc
#endif

/// `audioroute demo`: the whole stack on a machine with no audio hardware. It starts a
/// private session bus, a private system bus with the BlueZ mock, a umockdev testbed of a
/// phone-like machine and the real `audiorouted`, drives the hardware, prints a timeline,
/// and stops and removes everything it started, on Ctrl-C, SIGTERM and failure too.
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
        DemoSignals.install()
        if keep { demoRegistry.keepDirectories() }
        let timeline = DemoTimeline(json: json)
        do {
            try await DemoStory(root: try locateRoot(), timeline: timeline, benchCycles: rerouteBench).run()
        } catch {
            timeline.event("failed", ["error": .string("\(error)")], "\(error)")
            demoRegistry.cleanup()
            throw ExitCode(1)
        }
        demoRegistry.cleanup()
    }

    /// The package root: --root, or the first ancestor of the executable with share/demo.
    func locateRoot() throws -> String {
        if let root { return root }
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        var dir = count > 0 ? String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        while dir.contains("/") {
            dir = String(dir[..<dir.lastIndex(of: "/")!])
            if access(dir + "/share/demo/emitter.py", R_OK) == 0 { return dir }
        }
        throw DemoError(
            "the demo's fixtures (share/demo/emitter.py) are not in any directory above the executable; pass --root <package root>")
    }
}

/// Prints the demo's events as a timeline or as JSON lines.
final class DemoTimeline {
    let json: Bool
    let start = MonotonicClock.milliseconds()
    init(json: Bool) { self.json = json }

    func event(_ name: String, _ fields: [String: JSON] = [:], _ text: String? = nil) {
        let elapsed = Double(MonotonicClock.milliseconds() - start) / 1000
        if json {
            var object = fields
            object["event"] = .string(name)
            object["t"] = .double(elapsed)
            if let text { object["text"] = .string(text) }
            let members = object.sorted { $0.key < $1.key }.map { JSON.Member($0.key, $0.value) }
            emit(JSON.object(members).text)
        } else {
            let stamp = String(Int(elapsed * 1000))
            emit("[+\(stamp) ms] \(name)\(text.map { ": " + $0 } ?? "")")
        }
    }

    /// One line to stdout, unbuffered (the timeline must show before a hang or a signal).
    private func emit(_ line: String) {
        var bytes = Array((line + "\n").utf8)
        bytes.withUnsafeMutableBytes { FileIO.writeAll(fd: 1, UnsafeRawBufferPointer($0)) }
    }
}
