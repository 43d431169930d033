// The built audioroute-pulse on the sound-server bench's PulseAudio (a private runtime directory
// and bus, null sinks with a real ALSA sink's properties): its hello with the server's name and
// version, the sinks and the source (not the monitors) with the properties the PipeWire mapping
// reads, a defaults request set in the server (pactl reads it back), a stream with its
// application's properties, every bad line answered with its fault named and the helper going on;
// a stream's pause as its mute and a duck as its volume, the user's volume and mute given back
// (read with pactl), a request for a stream it does not have refused;
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
        // A profile of a card it did not report (the null sinks are no cards, and it reported
        // none): refused, named, and the helper goes on.
        let profile = PipeWireProfileRequest(device: 99, index: 0)
        helper.send(PipeWireHelperProtocol.line(.profile(profile)).bytes + [UInt8(ascii: "\n")])
        #expect(try next(&lines, "the profile's refusal") == .profileFailed(profile, message: "no device 99 (no ALSA card of that index)"))

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

    /// The next reply to a stream request (node lines before it are skipped).
    func streamReply(_ lines: inout LineReader) throws -> PipeWireHelperEvent {
        while true {
            let event = try next(&lines, "a stream reply")
            switch event {
            case .streamSet, .streamFailed: return event
            default: continue
            }
        }
    }

    /// The next stream of `mediaClass` added (other lines skipped).
    func streamAdded(_ lines: inout LineReader, _ mediaClass: String) throws -> PipeWireNode {
        while true {
            if case .node(let node, added: true) = try next(&lines, "a \(mediaClass) node"), node.mediaClass == mediaClass { return node }
        }
    }

    func control(_ helper: ChildProcess, _ id: UInt32, paused: Bool, volume: Double) {
        helper.send(PipeWireHelperProtocol.line(.stream(PipeWireStreamControl(id: id, paused: paused, volume: volume))).bytes + [UInt8(ascii: "\n")])
    }

    /// A sink input's (`Sink Input`) or source output's (`Source Output`) mute and volume, as pactl lists them.
    func pactlStream(_ bench: SoundServerBench, _ kind: String, _ index: UInt32) -> (muted: Bool, volume: [UInt32])? {
        let list = kind == "Sink Input" ? "sink-inputs" : "source-outputs"
        var inBlock = false
        var muted: Bool?
        for line in bench.run("pactl", ["list", list]).stdoutLines {
            if line.hasPrefix(kind + " #") { inBlock = line == "\(kind) #\(index)" }
            guard inBlock else { continue }
            let text = line.drop { $0 == "\t" || $0 == " " }
            if text.hasPrefix("Mute: ") { muted = text == "Mute: yes" }
            if text.hasPrefix("Volume: "), let muted {
                // "Volume: front-left: 65536 / 100% / 0.00 dB,   front-right: 65536 / 100% / 0.00 dB"
                let values = text.dropFirst(8).split(separator: ",").compactMap { channel in
                    channel.split(separator: ":").dropFirst().first.flatMap { UInt32($0.split(separator: "/").first?.filter { $0 != " " } ?? "") }
                }
                return (muted, values)
            }
        }
        return nil
    }

    /// Reads the helper's stderr (it logs at info level) until it has said `text`.
    func waitForLog(_ helper: ChildProcess, _ log: inout String, _ text: String) -> Bool {
        for _ in 0..<100 {
            log += helper.availableStderr()
            if log.contains(text) { return true }
            usleep(100_000)
        }
        return false
    }

    @Test(.enabled(if: pulseMissing == nil, "pulseaudio or pulseaudio-utils not installed"))
    func aPauseIsAMuteADuckTheVolumeAndTheUsersVolumeComesBack() throws {
        let bench = try SoundServerBench(.pulseaudio)
        defer { bench.stop() }
        let helper = try ChildProcess(Self.helper, ["--log-level", "info"], environment: bench.environment, removing: SoundServerBench.removedVariables, input: .pipe)
        defer { helper.kill() }
        var lines = LineReader(fd: helper.stdout)
        var log = ""
        guard case .hello = try next(&lines) else { throw TestFailure("no hello first") }

        // Refused, named: a sink (id 0 is the speaker) and a sink input the server does not have.
        control(helper, 0, paused: true, volume: 1)
        #expect(try streamReply(&lines) == .streamFailed(id: 0, message: "no client stream 0 (no sink input or source output of that id)"))
        let missing = PulseFacility.sinkInput.nodeID(999)!
        control(helper, missing, paused: false, volume: 0.3)
        #expect(try streamReply(&lines) == .streamFailed(id: missing, message: "no client stream \(missing) (no sink input or source output of that id)"))

        let wav = bench.directory + "/silence.wav"
        try AtomicFile.write(PipeWireDefaultsTests.silenceWAV(seconds: 30), to: wav)
        let player = try bench.start("paplay", ["--property=media.role=music", wav])
        defer { player.kill() }
        let stream = try streamAdded(&lines, "Stream/Output/Audio")
        let index = stream.id & PulseFacility.maximumIndex
        let sinkInput = { pactlStream(bench, "Sink Input", index) }
        // The user's volume, 50000, seen by the helper before anything is asked.
        #expect(bench.run("pactl", ["set-sink-input-volume", "\(index)", "50000"]).status == 0)
        #expect(waitForLog(helper, &log, "stream \(stream.id) is now unmuted at volume [50000, 50000]"), "\(log)")

        // A duck: the user's volume times the gain (pa_sw_volume_from_linear(0.3) is 43872), then back exactly.
        let gain: UInt32 = 43872
        control(helper, stream.id, paused: false, volume: 0.3)
        #expect(try streamReply(&lines) == .streamSet(id: stream.id))
        let ducked = PulseVolume.multiply(50000, gain)
        #expect(sinkInput()?.volume == [ducked, ducked], "\(String(describing: sinkInput()))")
        control(helper, stream.id, paused: false, volume: 1)
        #expect(try streamReply(&lines) == .streamSet(id: stream.id))
        #expect(sinkInput()?.volume == [50000, 50000], "\(String(describing: sinkInput()))")

        // The user turns it to 20000 while ducked: that is their 20000 / gain, given back after.
        control(helper, stream.id, paused: false, volume: 0.3)
        #expect(try streamReply(&lines) == .streamSet(id: stream.id))
        #expect(bench.run("pactl", ["set-sink-input-volume", "\(index)", "20000"]).status == 0)
        #expect(waitForLog(helper, &log, "stream \(stream.id): its volume changed while lowered"), "\(log)")
        control(helper, stream.id, paused: false, volume: 1)
        #expect(try streamReply(&lines) == .streamSet(id: stream.id))
        let theirs = PulseVolume.divide(20000, gain)
        #expect(sinkInput()?.volume == [theirs, theirs], "\(String(describing: sinkInput()))")

        // A pause is a mute; its end unmutes.
        control(helper, stream.id, paused: true, volume: 1)
        #expect(try streamReply(&lines) == .streamSet(id: stream.id))
        #expect(sinkInput()?.muted == true)
        control(helper, stream.id, paused: false, volume: 1)
        #expect(try streamReply(&lines) == .streamSet(id: stream.id))
        #expect(sinkInput()?.muted == false)
        // A stream its user muted stays muted after the pause.
        #expect(bench.run("pactl", ["set-sink-input-mute", "\(index)", "1"]).status == 0)
        #expect(waitForLog(helper, &log, "stream \(stream.id) is now muted"), "\(log)")
        control(helper, stream.id, paused: true, volume: 1)
        #expect(try streamReply(&lines) == .streamSet(id: stream.id))
        control(helper, stream.id, paused: false, volume: 1)
        #expect(try streamReply(&lines) == .streamSet(id: stream.id))
        #expect(sinkInput()?.muted == true, "the user's mute was undone")

        // A recording stream (a source output) the same way.
        let recorder = try bench.start("parec", ["--property=media.role=phone", "-d", "mic", bench.directory + "/rec.raw"])
        defer { recorder.kill() }
        let recording = try streamAdded(&lines, "Stream/Input/Audio")
        #expect(recording.id >> 30 == 3 && recording.properties["media.role"] == "phone", "\(recording)")
        let sourceOutput = { pactlStream(bench, "Source Output", recording.id & PulseFacility.maximumIndex) }
        let before = sourceOutput()
        control(helper, recording.id, paused: true, volume: 0.3)
        #expect(try streamReply(&lines) == .streamSet(id: recording.id))
        let held = sourceOutput()
        #expect(held?.muted == true && held?.volume == before?.volume.map { PulseVolume.multiply($0, gain) }, "\(String(describing: held)), before \(String(describing: before))")
        control(helper, recording.id, paused: false, volume: 1)
        #expect(try streamReply(&lines) == .streamSet(id: recording.id))
        let after = sourceOutput()
        #expect(after?.muted == false && after?.volume == before?.volume, "\(String(describing: after)), before \(String(describing: before))")

        // A stream gone is forgotten: a request for it is refused.
        player.kill()
        while try next(&lines, "the stream's removal") != .removed(id: stream.id) {}
        control(helper, stream.id, paused: false, volume: 1)
        #expect(try streamReply(&lines) == .streamFailed(id: stream.id, message: "no client stream \(stream.id) (no sink input or source output of that id)"))
        recorder.kill()
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
        #expect(helper.wait(seconds: 5) == 69)
    }

    @Test func withoutAServerItSaysSoAndExitsUnavailable() throws {
        let runtime = try makeTemporaryDirectory()
        defer { removeTree(runtime) }
        let result = try ChildProcess(Self.helper, [], environment: ["XDG_RUNTIME_DIR": runtime, "HOME": runtime], removing: SoundServerBench.removedVariables)
            .collect()
        #expect(result.status == 69)
        #expect(result.stdoutLines.count == 1 && result.stdout.hasPrefix(#"{"error": "cannot connect to PulseAudio: "#), "\(result.stdout)")
    }

    @Test func aBadCommandLineIsAUsageError() throws {
        let result = try ChildProcess(Self.helper, ["--log-level", "loud"]).collect()
        #expect(result.status == 64 && result.stderr.contains("unknown log level \"loud\""), "\(result.stderr)")
    }
}
