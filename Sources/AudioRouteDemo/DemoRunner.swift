import AudioRouteCore
import AudioRouteSystem

/// `audioroute demo`: the whole stack on a machine with no audio hardware. It starts a
/// private session bus, a private system bus with the BlueZ mock, a umockdev testbed of a
/// phone-like machine and the real `audiorouted`, drives the hardware, prints a timeline,
/// and stops and removes everything it started, on Ctrl-C, SIGTERM and failure too.
public struct DemoRunner {
    /// One JSON object per line instead of the timeline.
    public var json = false
    /// Keep the temporary directory (logs of every process, the file PCMs' output).
    public var keep = false
    /// The package root (holding share/demo and scripts/); nil: found from the executable.
    public var root: String?
    /// Instead of the story: this many cycles of a USB headset plugged and unplugged, timed.
    public var rerouteBench: Int?

    public init() {}

    /// Runs the story (or the bench) and cleans up; false if it failed (the timeline said why).
    /// Exits the process with 128+N on signal N, after cleaning up.
    public func run() async -> Bool {
        let signals = DemoSignals.install()
        defer { signals.cancel() }
        if keep { demoRegistry.keepDirectories() }
        let timeline = DemoTimeline(json: json)
        do {
            try await DemoStory(root: try locateRoot(), timeline: timeline, benchCycles: rerouteBench).run()
        } catch {
            timeline.event("failed", ["error": .string("\(error)")], "\(error)")
            demoRegistry.cleanup()
            return false
        }
        demoRegistry.cleanup()
        return true
    }

    /// The package root: `root`, or the first ancestor of the executable with share/demo.
    func locateRoot() throws -> String {
        if let root { return root }
        var dir = Directory.currentExecutable() ?? ""
        while dir.contains("/") {
            dir = String(dir[..<dir.lastIndex(of: "/")!])
            if FileInfo.isReadable(dir + "/share/demo/emitter.py") { return dir }
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
    private func emit(_ line: String) { StandardStream.output.write(line + "\n") }
}
