// Layer 2: the real audiorouted beside a real PipeWire, WirePlumber and pipewire-pulse on the
// sound-server bench (null sinks shaped as ALSA nodes: `speaker` is the laptop's route). Real
// clients: a Music stream (`pw-play --media-role Music`, and `paplay` through pipewire-pulse, a
// 440 Hz tone at 0.3 of full scale),
// then a Phone stream (silence): the music's node is paused, read back from the server as the
// speaker's monitor level (parec, as bench/client-libraries/capabilities does); the phone ends:
// the music plays again. A Navigation stream ducks the music to the tower's duck gain, read the
// same way; it ends: back to full. `status` lists the streams' sessions with their application
// names, and `monitor` their changes; silent mode silences a Notification stream and gives it
// back. Skipped where PipeWire is not installed.
import AudioRouteCore
import AudioRouteTestKit
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(3))) struct PipeWireStreamSessionsTests {
    static let pipewireMissing = SoundServerKind.pipewire.missing
    /// The tone's peak, as a fraction of full scale.
    static let amplitude = 0.3

    /// Waits up to `seconds` for `accept` to take what `read` gives; the last reading.
    func wait<T>(seconds: Double = 10, _ read: () -> T, until accept: (T) -> Bool) -> T { SoundServerDaemon.wait(seconds: seconds, read, until: accept) }

    /// The peak of what `sink` plays now, as a fraction of full scale (SoundServerDaemon.level).
    func level(_ bench: SoundServerBench, sink: String = "speaker") -> Double? { SoundServerDaemon.level(bench, sink: sink) }

    /// A player of `file` with `role` and `name`: PipeWire's own `pw-play`, or `paplay` through pipewire-pulse.
    static func player(_ program: String, role: String, name: String, _ file: String) -> [String] {
        program == "paplay"
            ? ["--property=media.role=\(role.lowercased())", "--property=application.name=\(name)", file]
            : ["--media-role", role, "-P", "{ application.name = \"\(name)\" }", file]
    }

    /// The music is played by `program`; the call and the directions by pw-play.
    @Test(.enabled(if: pipewireMissing == nil, "pipewire, wireplumber, pipewire-pulse or pulseaudio-utils not installed"), arguments: ["pw-play", "paplay"])
    func aCallPausesTheMusicAndNavigationDucksIt(_ program: String) throws {
        let setup = try SoundServerDaemon(.pipewire)
        defer { setup.close() }
        let (bench, testbed, daemon) = (setup.bench, setup.testbed, setup.daemon)
        let status = setup.status
        // The route's speaker is the server's default: the players land there.
        let configured = { bench.run("pw-metadata", ["-n", "default", "0", "default.configured.audio.sink"]).stdout }
        let first = wait({ configured() }) { $0.contains(#""name": "speaker""#) }
        #expect(first.contains(#""name": "speaker""#), "\(first)\ndaemon: \(daemon.stderr)")
        // `monitor` shows the server's streams' sessions like any other (checked after the duck).
        let monitor = try testbed.start(["monitor", "--json", "--bus-address", bench.bus.address])
        defer { _ = try? monitor.stop(SIGKILL) }
        try monitor.waitForLines(1)

        let tone = bench.directory + "/tone.wav"
        let silence = bench.directory + "/silence.wav"
        _ = FileManager.default.createFile(atPath: tone, contents: Data(Self.toneWAV(seconds: 60, amplitude: Self.amplitude)))
        _ = FileManager.default.createFile(atPath: silence, contents: Data(PipeWireDefaultsTests.silenceWAV(seconds: 60)))
        let music = try bench.start(program, Self.player(program, role: "Music", name: "Bench music", tone))
        defer { music.kill() }
        let listed = wait({ status() }) { $0.contains("Bench music  playback/default") }
        #expect(listed.contains("Bench music  playback/default  active  owner=pipewire"), "\(listed)\ndaemon: \(daemon.stderr)")
        // Named by its node, with the player's process where the node says it (pipewire-pulse's
        // nodes carry their client's application.process.id; pw-play's native node does not).
        let process = program == "paplay" ? "  pid=\(music.pid)  program=paplay" : ""
        #expect(
            listed.split(separator: "\n").contains { $0.contains("─ node ") && $0.contains("  Bench music  playback/default  active  owner=pipewire\(process)") },
            "\(listed)")
        let playing = wait({ level(bench) }) { ($0 ?? 0) > 0.25 }
        #expect(playing.map { abs($0 - Self.amplitude) < 0.03 } == true, "the music's level: \(String(describing: playing))")

        // A call: the music's session is interrupted and its node paused.
        let phone = try bench.start("pw-play", ["--media-role", "Phone", "-P", "{ application.name = \"Bench phone\" }", silence])
        let inCall = wait({ status() }) { $0.contains("Bench phone  playAndRecord/voiceChat  active") }
        #expect(inCall.contains("Bench phone  playAndRecord/voiceChat  active"), "\(inCall)\ndaemon: \(daemon.stderr)")
        #expect(inCall.contains("Bench music  playback/default  interrupted"), "\(inCall)")
        let paused = wait({ level(bench) }) { $0 != nil && $0! < 0.01 }
        #expect(paused.map { $0 < 0.01 } == true, "the music during the call: \(String(describing: paused))\ndaemon: \(daemon.stderr)")

        // The call ends: its session closes, and the music plays again.
        phone.kill()
        let resumed = wait({ level(bench) }) { ($0 ?? 0) > 0.25 }
        #expect(resumed.map { abs($0 - Self.amplitude) < 0.03 } == true, "the music after the call: \(String(describing: resumed))\ndaemon: \(daemon.stderr)")
        let afterCall = wait({ status() }) { !$0.contains("Bench phone") && $0.contains("Bench music  playback/default  active") }
        #expect(afterCall.contains("Bench music  playback/default  active") && !afterCall.contains("Bench phone"), "\(afterCall)")

        // Directions: the music is ducked to the tower's gain, then back.
        let before = resumed ?? Self.amplitude
        let navigation = try bench.start("pw-play", ["--media-role", "Navigation", "-P", "{ application.name = \"Bench directions\" }", silence])
        let expected = before * SessionEvent.duckedGain
        let ducked = wait({ level(bench) }) { $0 != nil && abs($0! - expected) < 0.02 }
        #expect(ducked.map { abs($0 - expected) < 0.02 } == true, "ducked: \(String(describing: ducked)), expected \(expected)\ndaemon: \(daemon.stderr)")
        let duckStatus = status()
        #expect(duckStatus.contains("Bench directions  playback/default [mixWithOthers,duckOthers]  active"), "\(duckStatus)")
        #expect(duckStatus.contains("Bench music  playback/default  active"), "\(duckStatus)")
        navigation.kill()
        let unducked = wait({ level(bench) }) { ($0 ?? 0) > 0.25 }
        #expect(unducked.map { abs($0 - before) < 0.03 } == true, "after the directions: \(String(describing: unducked))")
        let changes = wait({ monitor.objects.filter { $0["event"] == .string("sessionChanged") } }) {
            $0.contains { $0["app"] == .string("Bench music") && $0["change"] == .string("unducked") }
        }
        let musicChanges = changes.filter { $0["app"] == .string("Bench music") }.compactMap { object -> String? in
            guard case .string(let change)? = object["change"] else { return nil }
            return change
        }
        #expect(
            musicChanges == ["opened", "activated", "deactivated", "interruptionBegan", "interruptionEnded", "activated", "ducked", "unducked"],
            "\(monitor.lines.joined(separator: "\n"))")
        #expect(changes.allSatisfy { ($0["session"].map { "\($0)" } ?? "").contains("/org/audioroute/AudioRoute1/pipewire/") })
        #expect(changes.contains { $0["app"] == .string("Bench phone") && $0["change"] == .string("activated") && $0["detail"] == .string("playAndRecord/voiceChat") })

        // Silent mode silences an ambient stream (a Notification) through its volume, and gives it back.
        music.kill()
        _ = wait({ status() }) { !$0.contains("Bench music") }
        let chime = try bench.start(program, Self.player(program, role: "Notification", name: "Bench chime", tone))
        defer { chime.kill() }
        let chiming = wait({ status() }) { $0.contains("Bench chime  ambient/default  active") }
        #expect(chiming.contains("Bench chime  ambient/default  active"), "\(chiming)")
        #expect(wait({ level(bench) }) { ($0 ?? 0) > 0.25 }.map { abs($0 - Self.amplitude) < 0.03 } == true)
        #expect(try testbed.run(["silent", "on", "--bus-address", bench.bus.address]).status == 0)
        let silenced = wait({ level(bench) }) { $0 != nil && $0! < 0.01 }
        #expect(silenced.map { $0 < 0.01 } == true, "silent mode: \(String(describing: silenced))\ndaemon: \(daemon.stderr)")
        #expect(try testbed.run(["silent", "off", "--bus-address", bench.bus.address]).status == 0)
        let unsilenced = wait({ level(bench) }) { ($0 ?? 0) > 0.25 }
        #expect(unsilenced.map { abs($0 - Self.amplitude) < 0.03 } == true, "silent mode off: \(String(describing: unsilenced))")

        // The helper killed: the streams' sessions close with it, and come back with the helper
        // started again (its hello reports the streams anew).
        let helpers = { bench.processesLeft().filter { PipeWireDefaultsTests.command($0) == "audioroute-pipe" } }
        let opened = { daemon.stderr.split(separator: "\n").filter { $0.contains("PipeWire stream is a session") && $0.contains("Bench chime") }.count }
        #expect(opened() == 1)
        let running = helpers()
        #expect(running.count == 1, "\(running)")
        for pid in running { kill(pid, SIGKILL) }
        let again = wait({ status() }) { $0.contains("Bench chime  ambient/default  active") && !running.contains(where: { helpers().contains($0) }) }
        #expect(again.contains("Bench chime  ambient/default  active"), "\(again)\ndaemon: \(daemon.stderr)")
        #expect(wait({ opened() }) { $0 == 2 } == 2, "the chime's session was not opened again: \(daemon.stderr)")
        chime.kill()
        let gone = wait({ status() }) { !$0.contains("owner=pipewire") }
        #expect(!gone.contains("owner=pipewire"), "\(gone)")

        // Nothing of ours is left with the bench's runtime directory.
        #expect(try daemon.stop(SIGTERM) == 0)
        let left = wait({ bench.processesLeft().count == bench.serverPIDs.count ? "clean" : "\(bench.processesLeft())" }) { $0 == "clean" }
        #expect(left == "clean", "left running: \(left) (servers: \(bench.serverPIDs))")
    }

    /// An AudioRoute client's own stream through the server (its `application.process.id` the
    /// process that holds a D-Bus session: `audioroute session`, whose child paplay says so) is no
    /// second session: it does not interrupt the music, and status lists the client's session only.
    @Test(.enabled(if: pipewireMissing == nil, "pipewire, wireplumber, pipewire-pulse or pulseaudio-utils not installed"))
    func anAudioRouteClientsOwnStreamIsNotASecondSession() throws {
        let setup = try SoundServerDaemon(.pipewire)
        defer { setup.close() }
        let (bench, daemon) = (setup.bench, setup.daemon)
        let status = setup.status
        let tone = bench.directory + "/tone.wav"
        _ = FileManager.default.createFile(atPath: tone, contents: Data(Self.toneWAV(seconds: 60, amplitude: Self.amplitude)))
        let music = try bench.start("pw-play", Self.player("pw-play", role: "Music", name: "Bench music", tone))
        defer { music.kill() }
        let listed = wait({ status() }) { $0.contains("Bench music  playback/default  active") }
        #expect(listed.contains("Bench music  playback/default  active"), "\(listed)\ndaemon: \(daemon.stderr)")

        // The client's session stays inactive; its stream, counted as a session of its own,
        // would interrupt the music.
        let client = try ChildProcess(
            UmockdevTestbed.binary,
            ["session", "--bus-address", bench.bus.address, "--category", "playback", "--app", "Bench own", "--",
             "sh", "-c", "exec paplay --property=media.role=music --property=application.process.id=$PPID \(tone)"],
            environment: bench.environment, removing: SoundServerBench.removedVariables, input: .pipe)
        defer {
            client.signal(SIGTERM)
            _ = client.waitForExit()
        }
        let leftAlone = wait({ daemon.stderr }) { $0.contains("PipeWire stream of a client with a session: left alone") }
        #expect(leftAlone.contains("PipeWire stream of a client with a session: left alone"), "daemon: \(leftAlone)")
        let both = status()
        #expect(both.contains("Bench own  playback/default  inactive"), "\(both)")
        #expect(both.split(separator: "\n").filter { $0.contains("  owner=pipewire") }.count == 1, "\(both)")
        #expect(both.contains("Bench music  playback/default  active"), "\(both)")
        // SIGTERM: the session command passes it on to its paplay, and both end.
        client.signal(SIGTERM)
        _ = client.waitForExit()
        music.kill()
        #expect(try daemon.stop(SIGTERM) == 0)
        let left = wait({ bench.processesLeft().count == bench.serverPIDs.count ? "clean" : "\(bench.processesLeft())" }) { $0 == "clean" }
        #expect(left == "clean", "left running: \(left) (servers: \(bench.serverPIDs))")
    }

    /// An unplug does not pause a server's stream (its interruption has no end): the server moves
    /// it to the speaker, where it plays on. A stream paused by a call stays paused when it moves.
    @Test(.enabled(if: pipewireMissing == nil, "pipewire, wireplumber, pipewire-pulse or pulseaudio-utils not installed"))
    func anUnplugDoesNotPauseAStream() throws {
        let setup = try SoundServerDaemon(.pipewire)
        defer { setup.close() }
        let (bench, testbed, daemon) = (setup.bench, setup.testbed, setup.daemon)
        let status = setup.status
        let configured = { bench.run("pw-metadata", ["-n", "default", "0", "default.configured.audio.sink"]).stdout }
        try testbed.load("usb-headset-razer-blackshark-v3-pro")
        let plugged = wait({ configured() }) { $0.contains(#""name": "headphones""#) }
        #expect(plugged.contains(#""name": "headphones""#), "\(plugged)\ndaemon: \(daemon.stderr)")
        let tone = bench.directory + "/tone.wav"
        _ = FileManager.default.createFile(atPath: tone, contents: Data(Self.toneWAV(seconds: 60, amplitude: Self.amplitude)))
        let music = try bench.start("pw-play", Self.player("pw-play", role: "Music", name: "Bench music", tone))
        defer { music.kill() }
        _ = wait({ status() }) { $0.contains("Bench music  playback/default  active") }
        let onHeadphones = wait({ level(bench, sink: "headphones") }) { ($0 ?? 0) > 0.25 }
        #expect(onHeadphones.map { abs($0 - Self.amplitude) < 0.03 } == true, "on the headphones: \(String(describing: onHeadphones))")

        try testbed.send("unplug \(IDs.headsetUSB)")
        let back = wait({ configured() }) { $0.contains(#""name": "speaker""#) }
        #expect(back.contains(#""name": "speaker""#), "\(back)")
        let onSpeaker = wait({ level(bench) }) { ($0 ?? 0) > 0.25 }
        // In about one run in three the server destroyed pw-play's node as it moved it (the
        // helper reported the node removed, and the daemon closed its session: nothing of
        // AudioRoute's paused it). That is a known issue of the bench's server, not a pass: a
        // stream AudioRoute paused keeps its node and its session.
        if !status().contains("Bench music") && daemon.stderr.contains("PipeWire stream's session closed") {
            withKnownIssue("the server destroyed pw-play's node as it moved it to the speaker (cause not known)", isIntermittent: true) {
                Issue.record("pw-play's node went away at the move: \(music.availableStderr())")
            }
            return
        }
        #expect(onSpeaker.map { abs($0 - Self.amplitude) < 0.03 } == true, "after the unplug: \(String(describing: onSpeaker)); pw-play: \(music.availableStderr())\ndaemon: \(daemon.stderr)")
        #expect(status().contains("Bench music  playback/default  active"))

        // During a call the music is paused, and stays paused when the server moves it to
        // another sink (a move starts a paused node again: the helper pauses it again).
        try testbed.load("usb-headset-razer-blackshark-v3-pro")
        _ = wait({ configured() }) { $0.contains(#""name": "headphones""#) }
        #expect(wait({ level(bench, sink: "headphones") }) { ($0 ?? 0) > 0.25 }.map { $0 > 0.25 } == true, "the music did not move to the headphones")
        let silence = bench.directory + "/silence.wav"
        _ = FileManager.default.createFile(atPath: silence, contents: Data(PipeWireDefaultsTests.silenceWAV(seconds: 60)))
        let phone = try bench.start("pw-play", Self.player("pw-play", role: "Phone", name: "Bench phone", silence))
        defer { phone.kill() }
        let paused = wait({ level(bench, sink: "headphones") }) { $0 != nil && $0! < 0.01 }
        #expect(paused.map { $0 < 0.01 } == true, "the music during the call: \(String(describing: paused))")
        try testbed.send("unplug \(IDs.headsetUSB)")
        _ = wait({ configured() }) { $0.contains(#""name": "speaker""#) }
        usleep(500_000)
        let moved = level(bench)
        #expect(moved.map { $0 < 0.01 } == true, "the paused music moved to the speaker: \(String(describing: moved))\ndaemon: \(daemon.stderr)")
        phone.kill()
        let resumed = wait({ level(bench) }) { ($0 ?? 0) > 0.25 }
        #expect(resumed.map { abs($0 - Self.amplitude) < 0.03 } == true, "after the call: \(String(describing: resumed))")
        music.kill()
        #expect(try daemon.stop(SIGTERM) == 0)
        let left = wait({ bench.processesLeft().count == bench.serverPIDs.count ? "clean" : "\(bench.processesLeft())" }) { $0 == "clean" }
        #expect(left == "clean", "left running: \(left) (servers: \(bench.serverPIDs))")
    }

    /// A 48 kHz stereo s16 WAV of a 440 Hz tone whose peak is `amplitude` of full scale.
    static func toneWAV(seconds: Int, amplitude: Double) -> [UInt8] {
        let frames = 48_000 * seconds
        func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> ($0 * 8)) & 0xFF) } }
        func le16(_ value: Int) -> [UInt8] { (0..<2).map { UInt8((value >> ($0 * 8)) & 0xFF) } }
        var bytes = Array("RIFF".utf8) + le32(36 + frames * 4) + Array("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(2) + le32(48_000)
        bytes += le32(48_000 * 4) + le16(4) + le16(16) + Array("data".utf8) + le32(frames * 4)
        bytes.reserveCapacity(bytes.count + frames * 4)
        // 440 Hz repeats every 1200 frames at 48 kHz (11 periods): one cycle, copied.
        var cycle: [UInt8] = []
        for frame in 0..<1200 {
            let sample = Int(Foundation.sin(2 * Double.pi * 440 * Double(frame) / 48_000) * amplitude * 32767)
            cycle += le16(sample & 0xFFFF) + le16(sample & 0xFFFF)
        }
        for _ in 0..<(frames / 1200) { bytes += cycle }
        return bytes
    }
}
