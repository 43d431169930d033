// The built audioroute-pipewire on the sound-server bench (a real PipeWire, WirePlumber and
// pipewire-pulse on a private runtime directory and bus): its hello and the bench's nodes with
// the ALSA properties they carry, a defaults request set in the server (pactl reads it back),
// every bad line answered with its fault named and the helper going on, its exit when stdin
// ends; without a server, an error line and exit 1. The lines are read with AudioRouteCore's
// decoder, as the daemon reads them.
import AudioRouteCore
import AudioRouteSystem
import AudioRouteTestKit
import Foundation
import Glibc
import Testing

@Suite(.serialized, .timeLimit(.minutes(1))) struct PipeWireHelperTests {
    static let pipewireMissing = SoundServerKind.pipewire.missing
    static let helper = productsDirectory + "/audioroute-pipewire"

    /// The helper's next line, decoded.
    func next(_ lines: inout LineReader, _ what: String = "a line") throws -> PipeWireHelperEvent {
        guard let line = lines.next(seconds: 10) else { throw TestFailure("no line from the helper in 10 s: \(what)") }
        switch PipeWireHelperProtocol.event(Array(line.utf8)) {
        case .success(let event): return event
        case .failure(let error): throw TestFailure("\(error): \(line)")
        }
    }

    @Test(.enabled(if: pipewireMissing == nil, "pipewire, wireplumber, pipewire-pulse or pulseaudio-utils not installed"))
    func itReportsTheNodesAndSetsTheDefaults() throws {
        let bench = try SoundServerBench(.pipewire, pipewireObjects: SoundServerBench.alsaShapedObjects)
        defer { bench.stop() }
        let helper = try ChildProcess(Self.helper, [], environment: bench.environment, removing: SoundServerBench.removedVariables, input: .pipe)
        defer { helper.kill() }
        var lines = LineReader(fd: helper.stdout)
        guard case .hello(let version) = try next(&lines) else { throw TestFailure("no hello first") }
        #expect(version == bench.run("pw-cli", ["info", "0"]).stdout.split(separator: "\n").first { $0.contains("version") }.map { String($0.split(separator: "\"")[1]) })
        var nodes: [String: PipeWireNode] = [:]
        for _ in 0..<3 {
            guard case .node(let node, added: true) = try next(&lines) else { throw TestFailure("not a node added") }
            nodes[node.name ?? ""] = node
        }
        #expect(nodes.keys.sorted() == ["headphones", "mic", "speaker"])
        #expect(nodes["headphones"]?.properties["alsa.card"] == "2" && nodes["headphones"]?.properties["alsa.device"] == "0")
        #expect(nodes["mic"]?.mediaClass == "Audio/Source" && nodes["mic"]?.properties["api.alsa.pcm.stream"] == "capture")

        // Bad lines first: each named, and the helper goes on.
        helper.send(Array("garbage\n[1]\n{\"defaults\": {\"sink\": 3, \"source\": null}}\n".utf8))
        #expect(try next(&lines) == .error("malformed JSON: line 1, column 1: unexpected character"))
        #expect(try next(&lines) == .error("a line is a JSON object, not an array"))
        #expect(try next(&lines) == .error("\"sink\" is a node name or null, not a number"))
        helper.send(Array(String(repeating: "x", count: 70_000).utf8) + [UInt8(ascii: "\n")])
        #expect(try next(&lines) == .error("line over 65536 bytes, discarded"))

        let defaults = PipeWireDefaults(sink: "headphones", source: nil)
        helper.send(PipeWireHelperProtocol.line(.defaults(defaults)).bytes + [UInt8(ascii: "\n")])
        #expect(try next(&lines, "the defaults' reply") == .defaultsSet(defaults))
        #expect(bench.run("pactl", ["get-default-sink"]).stdout == "headphones\n")
        #expect(bench.run("pactl", ["get-default-source"]).stdout == "mic\n", "a null source is left as the server has it")

        // A stream's node comes and goes, with its application's properties.
        let wav = bench.directory + "/silence.wav"
        try AtomicFile.write(PipeWireDefaultsTests.silenceWAV(seconds: 10), to: wav)
        let player = try bench.start("pw-play", ["--media-role", "Music", wav])
        guard case .node(let stream, added: true) = try next(&lines, "the stream's node") else { throw TestFailure("the stream's node was not reported") }
        #expect(stream.mediaClass == "Stream/Output/Audio" && stream.properties["media.role"] == "Music", "\(stream)")
        #expect(stream.properties["application.name"] == "pw-play", "\(stream)")
        // A stream request: paused and its Props volume set, read back from the server; a node
        // that is not a client's stream, and a bad request, are named.
        helper.send(PipeWireHelperProtocol.line(.stream(PipeWireStreamControl(id: stream.id, paused: true, volume: 0.3))).bytes + [UInt8(ascii: "\n")])
        var reply = try next(&lines, "the stream's reply")
        while case .node = reply { reply = try next(&lines, "the stream's reply") }
        #expect(reply == .streamSet(id: stream.id))
        // The level it plays at is read back by PipeWireStreamSessionsTests (pw-dump's Props of a
        // pw-play node kept saying volume 1.0 while the sink's monitor had the stream at 0.3). The
        // user's own volume is left alone.
        usleep(300_000)
        let props = Self.props(bench, node: stream.id)
        #expect((props?["channelVolumes"] as? [Double])?.allSatisfy { $0 == 1 } == true, "\(String(describing: props))")
        let sinkID = nodes["speaker"]!.id
        helper.send(Array("{\"stream\": {\"id\": \(sinkID), \"paused\": false, \"volume\": 1}}\n{\"stream\": {\"id\": 1, \"paused\": false, \"volume\": 2}}\n".utf8))
        var answers: [PipeWireHelperEvent] = []
        while answers.count < 2 {
            let event = try next(&lines)
            if case .node = event { continue }
            answers.append(event)
        }
        #expect(answers.contains(.streamFailed(id: sinkID, message: "no client stream \(sinkID)")), "\(answers)")
        #expect(answers.contains(.error("\"volume\" of \"stream\" is a number from 0 to 1, not 2.0")), "\(answers)")
        player.kill()
        var removed = false
        while !removed {
            let event = try next(&lines)
            if event == .removed(id: stream.id) { removed = true }
        }

        helper.closeInput()
        #expect(helper.wait(seconds: 5) == 0)
    }

    /// A node's `Props` param as pw-dump shows it (`volume`, `mute`, `channelVolumes`, …).
    static func props(_ bench: SoundServerBench, node id: UInt32) -> [String: Any]? {
        let dump = bench.run("pw-dump", [])
        guard let objects = try? JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [[String: Any]] else { return nil }
        let node = objects.first { ($0["id"] as? Int).map(UInt32.init) == id }
        let params = (node?["info"] as? [String: Any])?["params"] as? [String: Any]
        return (params?["Props"] as? [[String: Any]])?.first
    }

    @Test func withoutAServerItSaysSoAndExitsUnavailable() throws {
        let runtime = try makeTemporaryDirectory()
        defer { removeTree(runtime) }
        let result = try ChildProcess(Self.helper, [], environment: ["XDG_RUNTIME_DIR": runtime], removing: SoundServerBench.removedVariables).collect()
        #expect(result.status == 69)
        #expect(result.stdoutLines.count == 1 && result.stdout.hasPrefix(#"{"error": "cannot connect to PipeWire: "#), "\(result.stdout)")
    }

    @Test func aBadCommandLineIsAUsageError() throws {
        let result = try ChildProcess(Self.helper, ["--log-level", "loud"]).collect()
        #expect(result.status == 64 && result.stderr.contains("unknown log level \"loud\""), "\(result.stderr)")
    }
}
