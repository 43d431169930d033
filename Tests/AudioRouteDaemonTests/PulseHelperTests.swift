// The built audioroute-pulse on the sound-server bench's PulseAudio (a private runtime directory
// and bus, null sinks with a real ALSA sink's properties): its hello with the server's name and
// version, the sinks and the source (not the monitors) with the properties the PipeWire mapping
// reads, a defaults request set in the server (pactl reads it back), a stream with its
// application's properties, every bad line answered with its fault named and the helper going on;
// the server gone: an error line and exit 1; without a server, the same. The lines are read
// with AudioRouteCore's decoder, as the daemon reads them.
import AudioRouteCore
import AudioRouteSystem
import AudioRouteTestKit
import Glibc
import Testing

@Suite(.serialized, .timeLimit(.minutes(1))) struct PulseHelperTests {
    static let pulseMissing = SoundServerKind.pulseaudio.missing
    static let helper = productsDirectory + "/audioroute-pulse"

    /// The helper's next line, decoded.
    func next(_ lines: inout LineReader, _ what: String = "a line") throws -> PipeWireHelperEvent {
        guard let line = lines.next(seconds: 10) else { throw TestFailure("no line from the helper in 10 s: \(what)") }
        switch PipeWireHelperProtocol.event(Array(line.utf8)) {
        case .success(let event): return event
        case .failure(let error): throw TestFailure("\(error): \(line)")
        }
    }

    /// `pactl info`'s value for `field` ("Server Name").
    func info(_ bench: SoundServerBench, _ field: String) -> String? {
        bench.run("pactl", ["info"]).stdoutLines.first { $0.hasPrefix(field + ": ") }.map { String($0.dropFirst(field.count + 2)) }
    }

    @Test(.enabled(if: pulseMissing == nil, "pulseaudio or pulseaudio-utils not installed"))
    func itReportsTheDevicesAndSetsTheDefaults() throws {
        let bench = try SoundServerBench(.pulseaudio, pulseScript: SoundServerBench.alsaShapedPulseScript)
        defer { bench.stop() }
        let helper = try ChildProcess(Self.helper, [], environment: bench.environment, removing: SoundServerBench.removedVariables, input: .pipe)
        defer { helper.kill() }
        var lines = LineReader(fd: helper.stdout)
        guard case .hello(let version) = try next(&lines) else { throw TestFailure("no hello first") }
        #expect(version == "\(info(bench, "Server Name") ?? "?") \(info(bench, "Server Version") ?? "?")")
        // The two sinks, the source and the remapped source's own stream; no monitor.
        var nodes: [String: PipeWireNode] = [:]
        for _ in 0..<4 {
            guard case .node(let node, added: true) = try next(&lines) else { throw TestFailure("not a node added") }
            nodes[node.name ?? node.mediaClass ?? ""] = node
        }
        #expect(nodes.keys.sorted() == ["Stream/Input/Audio", "headphones", "mic", "speaker"], "\(nodes)")
        let headphones = nodes["headphones"]
        #expect(headphones?.properties["alsa.card"] == "2" && headphones?.properties["alsa.device"] == "0", "\(String(describing: headphones))")
        #expect(headphones?.properties["api.alsa.path"] == "front:2" && headphones?.mediaClass == "Audio/Sink")
        #expect(nodes["mic"]?.mediaClass == "Audio/Source" && nodes["mic"]?.properties["alsa.card"] == "0")
        // Sink 1 and source 2 (pactl's indices) are kept apart: the source has bit 30.
        let sinks = bench.run("pactl", ["list", "short", "sinks"]).stdoutLines.map { $0.split(separator: "\t") }
        let sources = bench.run("pactl", ["list", "short", "sources"]).stdoutLines.map { $0.split(separator: "\t") }
        #expect(sinks.first { $0[1] == "headphones" }.map { UInt32($0[0]) } == headphones?.id)
        #expect(sources.first { $0[1] == "mic" }.map { 1 << 30 | UInt32($0[0])! } == nodes["mic"]?.id)

        // Bad lines first: each named, and the helper goes on.
        helper.send(Array("garbage\n[1]\n{\"defaults\": {\"sink\": 3, \"source\": null}}\n{\"volume\": 1}\n".utf8))
        #expect(try next(&lines) == .error("malformed JSON: line 1, column 1: unexpected character"))
        #expect(try next(&lines) == .error("a line is a JSON object, not an array"))
        #expect(try next(&lines) == .error("\"sink\" is a node name or null, not a number"))
        #expect(try next(&lines) == .error(#"unknown request "volume" (a request is {"defaults": {"sink": …, "source": …}}, {"stream": {"id": …, "paused": …, "volume": …}} or {"profile": {"device": …, "index": …}})"#))
        helper.send(Array(String(repeating: "x", count: 70_000).utf8) + [UInt8(ascii: "\n")])
        #expect(try next(&lines) == .error("line over 65536 bytes, discarded"))

        let defaults = PipeWireDefaults(sink: "headphones", source: nil)
        helper.send(PipeWireHelperProtocol.line(.defaults(defaults)).bytes + [UInt8(ascii: "\n")])
        #expect(try next(&lines, "the defaults' reply") == .defaultsSet(defaults))
        #expect(bench.run("pactl", ["get-default-sink"]).stdout == "headphones\n")
        #expect(bench.run("pactl", ["get-default-source"]).stdout == "mic\n", "a null source is left as the server has it")
        // A sink the server does not have: refused, named.
        let unknown = PipeWireDefaults(sink: "nowhere", source: nil)
        helper.send(PipeWireHelperProtocol.line(.defaults(unknown)).bytes + [UInt8(ascii: "\n")])
        #expect(try next(&lines, "the refusal") == .defaultsFailed(unknown, message: "the server refused it: error 2 (no such sink or source)"))
        #expect(bench.run("pactl", ["get-default-sink"]).stdout == "headphones\n")

        // A stream comes and goes, with its application's properties.
        let wav = bench.directory + "/silence.wav"
        try AtomicFile.write(PipeWireDefaultsTests.silenceWAV(seconds: 10), to: wav)
        let player = try bench.start("paplay", ["--property=media.role=music", wav])
        guard case .node(let stream, added: true) = try next(&lines, "the stream's node") else { throw TestFailure("the stream's node was not reported") }
        #expect(stream.mediaClass == "Stream/Output/Audio" && stream.properties["media.role"] == "music", "\(stream)")
        #expect(stream.properties["application.name"] == "paplay" && stream.properties["application.process.id"] == String(player.pid), "\(stream)")
        #expect(stream.id >> 30 == 2, "a sink input's id has the kind 2: \(stream.id)")
        player.kill()
        var removed = false
        while !removed {
            if try next(&lines) == .removed(id: stream.id) { removed = true }
        }

        helper.closeInput()
        #expect(helper.wait(seconds: 5) == 0)
    }

    @Test(.enabled(if: pulseMissing == nil, "pulseaudio or pulseaudio-utils not installed"))
    func theServerGoneIsAnErrorLineAndExit1() throws {
        let bench = try SoundServerBench(.pulseaudio)
        defer { bench.stop() }
        let helper = try ChildProcess(Self.helper, [], environment: bench.environment, removing: SoundServerBench.removedVariables, input: .pipe)
        defer { helper.kill() }
        var lines = LineReader(fd: helper.stdout)
        guard case .hello = try next(&lines) else { throw TestFailure("no hello first") }
        bench.killServers()
        var last: PipeWireHelperEvent?
        while case .some(let event) = try? next(&lines, "the error line") {
            last = event
            if case .error = event { break }
        }
        guard case .error(let message)? = last else { throw TestFailure("no error line: \(String(describing: last))") }
        #expect(message.hasPrefix("disconnected: "), "\(message)")
        #expect(helper.wait(seconds: 5) == 1)
    }

    @Test func withoutAServerItSaysSoAndExits1() throws {
        let runtime = try makeTemporaryDirectory()
        defer { removeTree(runtime) }
        let result = try ChildProcess(Self.helper, [], environment: ["XDG_RUNTIME_DIR": runtime, "HOME": runtime], removing: SoundServerBench.removedVariables)
            .collect()
        #expect(result.status == 1)
        #expect(result.stdoutLines.count == 1 && result.stdout.hasPrefix(#"{"error": "cannot connect to PulseAudio: "#), "\(result.stdout)")
    }

    @Test func aBadCommandLineIsAUsageError() throws {
        let result = try ChildProcess(Self.helper, ["--log-level", "loud"]).collect()
        #expect(result.status == 2 && result.stderr.contains("unknown log level \"loud\""), "\(result.stderr)")
    }
}
