import AudioRouteCore
import AudioRouteIPC
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import AudioRouteALSA
import AudioSession
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The story's phases. The music app is the product's `AudioPlayer` following its
/// session (`follow`): it reroutes, pauses, resumes and ducks by itself; the story only
/// drives the hardware and the other apps, and watches what reaches the devices.
struct Story {
    let timeline: DemoTimeline
    let bus: AudioSession.Bus
    let music: AudioSession
    let devices: DemoDevices
    let bluez: DemoChild
    let emitter: DemoChild
    let routeFile: String
    let asoundrc: String
    /// Where the music's WAV file is written.
    let musicFile: String

    static let speaker = "platform-sound/speaker"
    static let headphones = "platform-sound/headphones"
    static var a2dp: String { "bt:\(DemoStory.btAddress):a2dp" }
    static var hfp: String { "bt:\(DemoStory.btAddress):hfp" }
    /// The music's level (0...1 of full scale) at unity gain.
    static let musicLevel = 0.5
    /// The player's buffer. What the player has written reaches a device's file up to
    /// `inFlightFrames` later: the file PCM holds a buffer's worth (so that it can be
    /// rewound), then the pipe to the sink (a page once the sink shrank it, 64 KiB if it
    /// could not) and the sink's read.
    static let latencyMicroseconds = 20_000
    static let inFlightFrames = 48_000 * latencyMicroseconds / 1_000_000 + 65_536 / 4 + 1024
    /// How long a paused phase is watched for audio that should not be there.
    static let silenceMilliseconds = 200

    /// One checked phase: the device that must have received audio in it (or none), how
    /// much (at least, or exactly for the call's fixed-length audio), and what it got.
    struct Phase {
        var name: String
        var output: String
        var expected: [String: Int]
        var exact: Bool
        var got: [String: Int]
        var ok: Bool {
            guard Set(got.keys) == Set(expected.keys) else { return false }
            return expected.allSatisfy { exact ? got[$0.key] == $0.value : (got[$0.key] ?? 0) >= $0.value }
        }
    }

    static func tone(frames: Int, frequency: Double, level: Double = 0.5) -> WAVFile {
        // The encoder's own output always decodes.
        try! WAVFile(bytes: toneBytes(frames: frames, frequency: frequency, level: level))
    }

    static func toneBytes(frames: Int, frequency: Double, level: Double = 0.5) -> [UInt8] {
        var samples: [Double] = []
        samples.reserveCapacity(frames * 2)
        for frame in 0..<frames {
            let value = level * sin(2 * Double.pi * frequency * Double(frame) / 48_000)
            samples.append(value)
            samples.append(value)
        }
        return WAVFile.encode(samples, format: WAVFormat(encoding: .signed16, channels: 2, sampleRate: 48_000))
    }

    func config() -> PCMConfigurationSource { .systemPlus(files: [asoundrc, routeFile]) }

    func play() async throws {
        let musicInbox = await DemoInbox(music)
        try await music.setCategory(.playback)
        try await music.setActive(true)
        try await waitForRoute(Self.speaker, "demo_builtin")
        // A 1 s tone played in a loop: the player runs freely for the whole story.
        try AtomicFile.write(Self.toneBytes(frames: 48_000, frequency: 440, level: Self.musicLevel), to: musicFile)
        let player = try AudioPlayer(
            contentsOf: musicFile, device: AlsaRouteConfig.outputPCM, configurationFiles: [asoundrc, routeFile],
            periodFrames: 480, latencyMicroseconds: Self.latencyMicroseconds)
        player.numberOfLoops = -1
        let following = await player.follow(music)
        defer { following.cancel() }
        let log = DemoPlayerLog(player, timeline: timeline)
        defer { log.stop() }
        var phases: [Phase] = []

        /// Records a phase from two snapshots of the files.
        func record(_ name: String, output: String, _ expected: [String: Int], exact: Bool, _ start: [String: Int], _ end: [String: Int], _ text: String) {
            log.flush()
            let got = devices.frames(from: start, to: end)
            phases.append(Phase(name: name, output: output, expected: expected, exact: exact, got: got))
            timeline.event("phase " + name, ["output": .string(output), "frames": Self.framesJSON(got)],
                           "\(text) -> \(output); frames: \(Self.describe(got))")
        }
        /// Music on `device`: waits until it has received `DemoStory.windowFrames` more
        /// frames; nothing else may get any meanwhile. Returns the two snapshots.
        @discardableResult
        func audible(_ name: String, on device: String, output: String, _ text: String) async throws -> ([String: Int], [String: Int]) {
            let start = devices.files()
            _ = try await devices.waitForFrames(on: device, atLeast: DemoStory.windowFrames, since: start)
            let end = devices.files()
            record(name, output: output, [device: DemoStory.windowFrames], exact: false, start, end, text)
            return (start, end)
        }
        /// The music paused: nothing may reach any device for a while.
        func silent(_ name: String, output: String, _ text: String) async throws {
            let start = devices.files()
            try await Task.sleep(for: .milliseconds(Self.silenceMilliseconds))
            let end = devices.files()
            record(name, output: output, [:], exact: true, start, end, text)
        }
        /// Waits for the player to stop by itself (unplug, interruption).
        func pauses(_ why: String) async throws {
            try await waitUntil("the music player to pause (\(why))") { !player.isPlaying }
            log.flush()
        }
        /// Waits for the music to arrive on `device` after a change (the transition: the
        /// old device may get frames until the player has rerouted; not checked per phase,
        /// but counted in the total).
        func arrives(on device: String, since mark: [String: Int], _ why: String) async throws {
            _ = try await devices.waitForFrames(on: device, atLeast: 1, since: mark, what: "music on \(device) after \(why)")
            log.flush()
        }

        // 1. Music on the speaker.
        var mark = devices.files()
        try player.play()
        timeline.event("session", ["event": .string("play")], "music app: AudioPlayer.play() (a 440 Hz tone, looping), following its session")
        try await arrives(on: "demo_builtin", since: mark, "play")
        let (speakerStart, _) = try await audible("speaker", on: "demo_builtin", output: Self.speaker, "music plays on the speaker")
        let fullPeak = devices.peak(of: "demo_builtin", since: speakerStart)

        // 2. A wired headset plugged: the player reroutes by itself.
        mark = devices.files()
        try expectOK(emitter, "jacks /dev/input/event20 2:1,4:1")
        timeline.event("hardware", ["event": .string("wired headset plugged")], "wired headset plugged into the jack")
        try await arrives(on: "demo_headphones", since: mark, "the plug")
        try await audible("wired", on: "demo_headphones", output: Self.headphones, "music on the wired headset")

        // 3. A Bluetooth headset connects: last in wins.
        mark = devices.files()
        let device = try bluez.ask(#"{"cmd": "device", "adapter": "hci0", "address": "\#(DemoStory.btAddress)", "alias": "Demo BT Headset"}"#)
        guard device.hasPrefix("ok") else { throw DemoError("bluez: \(device)") }
        try expectOK(bluez, #"{"cmd": "connect", "adapter": "hci0", "address": "\#(DemoStory.btAddress)"}"#)
        let path = "/org/bluez/hci0/dev_" + DemoStory.btAddress.replacingColons()
        try expectOK(bluez, #"{"cmd": "props", "path": "\#(path)", "iface": "org.bluez.Device1", "props": {"UUIDs": ["as", ["0000110b-0000-1000-8000-00805f9b34fb", "0000111e-0000-1000-8000-00805f9b34fb"]], "Class": ["u", 2360324], "ServicesResolved": ["b", true]}}"#)
        timeline.event("hardware", ["event": .string("bluetooth headset connected")], "Bluetooth headset \(DemoStory.btAddress) connected (A2DP, HFP)")
        try await arrives(on: "bluealsa_a2dp", since: mark, "the Bluetooth connection")
        try await audible("bluetooth", on: "bluealsa_a2dp", output: Self.a2dp, "music on the Bluetooth headset (A2DP)")

        // 4. A navigation prompt ducks the music.
        let navigation = AudioSession(bus: bus, appName: "navigation")
        try await navigation.setCategory(.playback, mode: .voicePrompt, options: [.duckOthers])
        try await navigation.setActive(true)
        _ = try await musicInbox.take("ducked") { $0 == .ducked }
        try await waitUntil("the music player to duck") { player.sessionGain == duckGain }
        timeline.event("session", ["event": .string("ducked")], "navigation prompt active: the music player ducks to \(duckGain)")
        let duckStart = devices.files()
        // A buffer's worth may still be undimmed music on its way to the file.
        _ = try await devices.waitForFrames(on: "bluealsa_a2dp", atLeast: Self.inFlightFrames + DemoStory.windowFrames, since: duckStart)
        let prompt = try PlaybackEngine(
            file: Self.tone(frames: DemoStory.promptFrames, frequency: 880), device: "audioroute", configuration: config(), periodFrames: 400)
        while try prompt.writeNextPeriod() > 0 {}
        try prompt.drain()
        prompt.close()
        let duckEnd = devices.files()
        try await navigation.setActive(false, options: .notifyOthersOnDeactivation)
        _ = try await musicInbox.take("unducked") { $0 == .unducked }
        try await waitUntil("the music player to unduck") { player.sessionGain == 1 }
        await navigation.close()
        record("prompt", output: Self.a2dp, ["bluealsa_a2dp": Self.inFlightFrames + DemoStory.windowFrames + DemoStory.promptFrames], exact: false,
               duckStart, duckEnd, "prompt over ducked music, then unducked")
        // The music's file is the one that was already being written when the ducking began.
        let musicA2DP = duckEnd.keys.filter { devices.device(of: $0) == "bluealsa_a2dp" && duckStart[$0] != nil && duckEnd[$0] != duckStart[$0] }
        let promptA2DP = duckEnd.keys.filter { devices.device(of: $0) == "bluealsa_a2dp" && duckStart[$0] == nil }
        let duckedPeak = musicA2DP.count == 1 ? devices.peak(musicA2DP[0], from: duckStart[musicA2DP[0]]! + Self.inFlightFrames, to: duckEnd[musicA2DP[0]]!) : 0
        let promptPeak = promptA2DP.count == 1 && duckEnd[promptA2DP[0]] == DemoStory.promptFrames ? devices.peak(promptA2DP[0], from: 0) : 0

        // 5. A call (allowBluetooth) takes HFP and interrupts the music. 6. The caller taps
        // "speaker" (the override; playAndRecord only). The call ends with shouldResume.
        let phone = AudioSession(bus: bus, appName: "phone")
        try await phone.setCategory(.playAndRecord, mode: .voiceChat, options: [.allowBluetooth])
        try await phone.setActive(true)
        _ = try await musicInbox.take("interruption") {
            if case .interruption(let info) = $0 { return info.type == .began }
            return false
        }
        try await pauses("interruption")
        timeline.event("session", ["event": .string("interrupted")], "call active: music interrupted, the player paused")
        try await waitForRoute(Self.hfp, "bluealsa:DEV=\(DemoStory.btAddress),PROFILE=sco")
        var start = devices.files()
        let call = try PlaybackEngine(
            file: Self.tone(frames: 2 * DemoStory.callFrames, frequency: 350), device: "audioroute", configuration: config(), periodFrames: 400)
        call.rerouteStrategy = .drain
        while call.position < DemoStory.callFrames { try call.writeNextPeriod() }
        call.pause()
        record("call", output: Self.hfp, ["bluealsa_sco": DemoStory.callFrames], exact: true, start, devices.files(),
               "call audio on the Bluetooth headset (HFP), the music silent")
        start = devices.files()
        try await phone.overrideOutputAudioPort(.speaker)
        try await waitForRoute(Self.speaker, "demo_builtin")
        timeline.event("session", ["event": .string("speaker override")], "the caller taps speaker: override to the built-in speaker")
        while try call.writeNextPeriod() > 0 {}
        call.close()
        record("override", output: Self.speaker, ["demo_builtin": DemoStory.callFrames], exact: true, start, devices.files(),
               "call audio on the speaker, the music silent")
        mark = devices.files()
        try await phone.setActive(false, options: .notifyOthersOnDeactivation)
        await phone.close()
        let ended = try await musicInbox.take("interruption ended") {
            if case .interruption(let info) = $0 { return info.type == .ended }
            return false
        }
        guard case .interruption(let info) = ended, info.options.contains(.shouldResume) else {
            throw DemoError("the call's interruption ended without shouldResume")
        }
        // The app reactivates its session (interrupted sessions are inactive); the player
        // resumes by itself, since it was playing when the call came.
        try await music.setActive(true)
        timeline.event("session", ["event": .string("call ended")], "call ended (shouldResume): the music app reactivates its session")
        try await arrives(on: "bluealsa_a2dp", since: mark, "the call's end")
        let (resumedStart, _) = try await audible("resumed", on: "bluealsa_a2dp", output: Self.a2dp, "the player resumed by itself on the Bluetooth headset")
        let unduckedPeak = devices.peak(of: "bluealsa_a2dp", since: resumedStart)

        // 7. The Bluetooth headset switches off: the player pauses (routeDisconnected).
        try expectOK(bluez, #"{"cmd": "props", "path": "\#(path)", "iface": "org.bluez.Device1", "props": {"ServicesResolved": ["b", false]}}"#)
        try expectOK(bluez, #"{"cmd": "disconnect", "adapter": "hci0", "address": "\#(DemoStory.btAddress)"}"#)
        timeline.event("hardware", ["event": .string("bluetooth headset disconnected")], "Bluetooth headset switched off")
        try await pauses("Bluetooth headset gone")
        try await waitForRoute(Self.headphones, "demo_headphones")
        try await silent("bluetooth off", output: Self.headphones, "music paused: nothing plays")

        // 8. A call while the music is paused: its end (shouldResume) must not start it (seed 003).
        try await music.setActive(true)
        let phone2 = AudioSession(bus: bus, appName: "phone")
        try await phone2.setCategory(.playAndRecord, mode: .voiceChat)
        try await phone2.setActive(true)
        _ = try await musicInbox.take("interruption") {
            if case .interruption(let info) = $0 { return info.type == .began }
            return false
        }
        try await phone2.setActive(false, options: .notifyOthersOnDeactivation)
        await phone2.close()
        _ = try await musicInbox.take("interruption ended") {
            if case .interruption(let info) = $0 { return info.type == .ended && info.options.contains(.shouldResume) }
            return false
        }
        timeline.event("session", ["event": .string("call while paused")], "a call comes and ends (shouldResume) while the music is paused")
        try await silent("call while paused", output: Self.headphones, "the music stays paused")

        // 9. Play pressed: the wired headset.
        try await music.setActive(true)
        mark = devices.files()
        try player.play()
        timeline.event("session", ["event": .string("play")], "play pressed")
        try await arrives(on: "demo_headphones", since: mark, "play")
        try await audible("wired again", on: "demo_headphones", output: Self.headphones, "music on the wired headset")

        // 10. The wired headset unplugged: the player pauses (oldDeviceUnavailable).
        try expectOK(emitter, "jacks /dev/input/event20 2:0,4:0")
        timeline.event("hardware", ["event": .string("wired headset unplugged")], "wired headset unplugged")
        try await pauses("headset unplugged")
        try await waitForRoute(Self.speaker, "demo_builtin")
        try await silent("unplugged", output: Self.speaker, "music paused: nothing reaches the speaker")
        following.cancel()
        musicInbox.stop()
        await music.close()
        log.flush()

        // Verification.
        var failures = 0
        for phase in phases {
            if !phase.ok { failures += 1 }
            let expected = phase.expected.isEmpty ? "no frames" : phase.expected.sorted { $0.key < $1.key }
                .map { "\($0.key)\(phase.exact ? "=" : ">=")\($0.value)" }.joined(separator: " ")
            timeline.event(
                "verify", ["phase": .string(phase.name), "ok": .bool(phase.ok), "output": .string(phase.output),
                           "expected": Self.framesJSON(phase.expected), "exact": .bool(phase.exact), "got": Self.framesJSON(phase.got)],
                "\(phase.ok ? "OK  " : "FAIL") \(phase.name): expected \(expected), got \(Self.describe(phase.got))")
        }
        // Ducking, from the samples: while ducked the music peaks at 0.3 of its level on the
        // speaker, the prompt at full level, and after the call the music is back at full level.
        let ratio = fullPeak > 0 ? duckedPeak / fullPeak : 0
        let ducked = fullPeak > 0.1 && abs(ratio - duckGain) < 0.01 && abs(promptPeak - fullPeak) < 0.01 && abs(unduckedPeak - fullPeak) < 0.01
        if !ducked { failures += 1 }
        let level = { (value: Double) in String(Int((value * 1000).rounded())) }
        timeline.event(
            "verify", ["phase": .string("ducking"), "ok": .bool(ducked), "musicPeak": .double(fullPeak), "duckedPeak": .double(duckedPeak),
                       "promptPeak": .double(promptPeak), "unduckedPeak": .double(unduckedPeak)],
            "\(ducked ? "OK  " : "FAIL") ducking: music peak \(level(fullPeak))/1000 of full scale, ducked \(level(duckedPeak))/1000 (expected \(duckGain) of it), prompt \(level(promptPeak))/1000, after the call \(level(unduckedPeak))/1000")
        // No frame lost or repeated: what all the files hold, less the prompt's and the
        // call's, is how far the player advanced (across loops, reroutes and pauses).
        let total = devices.frames().values.reduce(0, +)
        let musicFrames = total - DemoStory.promptFrames - 2 * DemoStory.callFrames
        let delivered = player.framesPlayed
        let conserved = musicFrames == delivered && delivered > 0
        if !conserved { failures += 1 }
        timeline.event(
            "verify", ["phase": .string("frames"), "ok": .bool(conserved), "played": .integer(Int64(delivered)), "inFiles": .integer(Int64(musicFrames))],
            "\(conserved ? "OK  " : "FAIL") frames: the player advanced \(delivered) frames, the devices' files hold \(musicFrames) of music")
        let checks = phases.count + 2
        timeline.event("result", ["ok": .bool(failures == 0), "checks": .integer(Int64(checks)), "failures": .integer(Int64(failures))],
                       failures == 0 ? "all \(checks) checks passed" : "\(failures) of \(checks) checks failed")
        if failures > 0 { throw DemoError("verification failed") }
    }

    /// Frames by device, as a JSON object in name order.
    static func framesJSON(_ frames: [String: Int]) -> JSON {
        .object(frames.sorted { $0.key < $1.key }.map { .init($0.key, .integer(Int64($0.value))) })
    }

    static func describe(_ frames: [String: Int]) -> String {
        frames.isEmpty ? "none" : frames.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    /// Polls `condition` every millisecond for up to `seconds`.
    func waitUntil(_ what: String, seconds: Double = 10, _ condition: () -> Bool) async throws {
        let deadline = MonotonicClock.milliseconds() + Int64(seconds * 1000)
        while !condition() {
            guard MonotonicClock.milliseconds() < deadline else { throw DemoError("waited \(seconds) s for \(what)") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Waits until the daemon's route file points `audioroute` at `pcm` (and says so).
    func waitForRoute(_ port: String, _ pcm: String) async throws {
        for _ in 0..<1500 {
            if routedPCM() == pcm { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw DemoError("the route file never named \(pcm) for \(port)")
    }

    /// The PCM `audioroute` plays to in the daemon's route file as libasound reads it, or nil.
    func routedPCM() -> String? {
        guard var configuration = try? ALSAConfiguration(), (try? configuration.load(file: routeFile)) != nil else { return nil }
        return configuration.string(at: "pcm.\(AlsaRouteConfig.outputPCM).slave.pcm")
    }

    func expectOK(_ child: DemoChild, _ command: String) throws {
        let answer = try child.ask(command)
        guard answer.lowercased().hasPrefix("ok") else { throw DemoError("\(child.name): \(command): \(answer)") }
    }
}

/// The music player's events (reroutes, pauses), printed on the timeline as the story
/// goes (`flush`, from the story's own flow: the timeline is not shared across tasks).
final class DemoPlayerLog: @unchecked Sendable {
    private let items = Mutex<[AudioPlayerEvent]>([])
    private var task: Task<Void, Never>?
    private let timeline: DemoTimeline

    init(_ player: AudioPlayer, timeline: DemoTimeline) {
        self.timeline = timeline
        let events = player.events
        task = Task { [weak self] in
            for await event in events { self?.items.withLock { $0.append(event) } }
        }
    }

    func flush() {
        let pending = items.withLock { items in
            defer { items.removeAll() }
            return items
        }
        for event in pending {
            switch event {
            case .rerouted(let report):
                timeline.event(
                    "music follows", ["resumeFrame": .integer(Int64(report.resumeFrame)), "rewound": .integer(Int64(report.rewoundFrames))],
                    "the player reopened audioroute on the new route, continuing at frame \(report.resumeFrame) of its loop (\(report.rewoundFrames) frames taken back from the old device)")
            case .playingChanged(let playing):
                timeline.event("player", ["playing": .bool(playing)], playing ? "the player plays" : "the player paused")
            case .decodeError(let error):
                timeline.event("player", ["error": .string(error.description)], "the player failed: \(error)")
            case .finished(let successfully):
                timeline.event("player", ["finished": .bool(successfully)], "the player finished")
            }
        }
    }

    func stop() { task?.cancel() }
}

extension String {
    func replacingColons() -> String { String(map { $0 == ":" ? "_" : $0 }) }
}
