import AudioRouteALSA
import AudioRouteCore
import AudioSession

/// One telling of the story, phase by phase, in the order `Story.play` calls them: each
/// phase drives the hardware or another app, waits for the music player to follow, and
/// records what the devices received. `verify` checks it all at the end.
final class StoryRun {
    let story: Story
    let player: AudioPlayer
    let log: DemoPlayerLog
    let inbox: DemoInbox
    private(set) var phases: [Story.Phase] = []
    /// The plain aplay's part (DemoAplay.swift), checked with the rest; nil when it was skipped.
    var aplay: AplayResult?
    /// The music's peak at full level (speaker), while ducked and the prompt's (Bluetooth),
    /// and after the call (Bluetooth): the ducking check compares them.
    private var fullPeak = 0.0
    private var duckedPeak = 0.0
    private var promptPeak = 0.0
    private var unduckedPeak = 0.0

    init(story: Story, player: AudioPlayer, log: DemoPlayerLog, inbox: DemoInbox) {
        self.story = story
        self.player = player
        self.log = log
        self.inbox = inbox
    }

    var devices: DemoDevices { story.devices }
    var timeline: DemoTimeline { story.timeline }

    // MARK: The phases

    /// 1. Music on the speaker.
    func musicOnTheSpeaker() async throws {
        let mark = devices.files()
        try player.play()
        timeline.event("session", ["event": .string("play")], "music app: AudioPlayer.play() (a 440 Hz tone, looping), following its session")
        try await arrives(on: "demo_builtin", since: mark, "play")
        let (start, _) = try await audible("speaker", on: "demo_builtin", output: Story.speaker, "music plays on the speaker")
        fullPeak = devices.peak(of: "demo_builtin", since: start)
    }

    /// 2. A wired headset plugged: the player reroutes by itself.
    func wiredHeadsetPlugged() async throws {
        let mark = devices.files()
        try story.emitter.expectOK("jacks /dev/input/event20 2:1,4:1")
        timeline.event("hardware", ["event": .string("wired headset plugged")], "wired headset plugged into the jack")
        try await arrives(on: "demo_headphones", since: mark, "the plug")
        try await audible("wired", on: "demo_headphones", output: Story.headphones, "music on the wired headset")
    }

    /// 3. A Bluetooth headset connects: last in wins.
    func bluetoothHeadsetConnects() async throws {
        let mark = devices.files()
        let device = try story.bluez.ask(#"{"cmd": "device", "adapter": "hci0", "address": "\#(DemoStory.btAddress)", "alias": "Demo BT Headset"}"#)
        guard device.hasPrefix("ok") else { throw DemoError("bluez: \(device)") }
        try story.bluez.expectOK(#"{"cmd": "connect", "adapter": "hci0", "address": "\#(DemoStory.btAddress)"}"#)
        try story.bluez.expectOK(#"{"cmd": "props", "path": "\#(Story.btPath)", "iface": "org.bluez.Device1", "props": {"UUIDs": ["as", ["0000110b-0000-1000-8000-00805f9b34fb", "0000111e-0000-1000-8000-00805f9b34fb"]], "Class": ["u", 2360324], "ServicesResolved": ["b", true]}}"#)
        timeline.event("hardware", ["event": .string("bluetooth headset connected")], "Bluetooth headset \(DemoStory.btAddress) connected (A2DP, HFP)")
        try await arrives(on: "bluealsa_a2dp", since: mark, "the Bluetooth connection")
        try await audible("bluetooth", on: "bluealsa_a2dp", output: Story.a2dp, "music on the Bluetooth headset (A2DP)")
    }

    /// 4. A navigation prompt ducks the music.
    func promptDucksTheMusic() async throws {
        let navigation = AudioSession(bus: story.bus, appName: "navigation")
        try await navigation.setCategory(.playback, mode: .voicePrompt, options: [.duckOthers])
        try await navigation.setActive(true)
        _ = try await inbox.take("ducked") { $0 == .ducked }
        try await waitUntil("the music player to duck") { player.sessionGain == duckGain }
        timeline.event("session", ["event": .string("ducked")], "navigation prompt active: the music player ducks to \(duckGain)")
        let duckStart = devices.files()
        // A buffer's worth may still be undimmed music on its way to the file.
        _ = try await devices.waitForFrames(on: "bluealsa_a2dp", atLeast: Story.inFlightFrames + DemoStory.windowFrames, since: duckStart)
        try playToEnd(Story.tone(frames: DemoStory.promptFrames, frequency: 880))
        let duckEnd = devices.files()
        try await navigation.setActive(false, options: .notifyOthersOnDeactivation)
        _ = try await inbox.take("unducked") { $0 == .unducked }
        try await waitUntil("the music player to unduck") { player.sessionGain == 1 }
        await navigation.close()
        record("prompt", output: Story.a2dp, ["bluealsa_a2dp": Story.inFlightFrames + DemoStory.windowFrames + DemoStory.promptFrames], exact: false,
               duckStart, duckEnd, "prompt over ducked music, then unducked")
        measureDucking(from: duckStart, to: duckEnd)
    }

    /// 5. A call (allowBluetooth) takes HFP and interrupts the music. 6. The caller taps
    /// "speaker" (the override; playAndRecord only). The call ends with shouldResume.
    func callInterruptsTheMusic() async throws {
        let phone = AudioSession(bus: story.bus, appName: "phone")
        try await phone.setCategory(.playAndRecord, mode: .voiceChat, options: [.allowBluetooth])
        try await phone.setActive(true)
        _ = try await inbox.take("interruption", Self.interruptionBegan)
        try await pauses("interruption")
        timeline.event("session", ["event": .string("interrupted")], "call active: music interrupted, the player paused")
        try await story.waitForRoute(Story.hfp, "bluealsa:DEV=\(DemoStory.btAddress),PROFILE=sco")
        var start = devices.files()
        let call = try PlaybackEngine(
            file: Story.tone(frames: 2 * DemoStory.callFrames, frequency: 350), device: "audioroute", configuration: story.config(), periodFrames: 400)
        while call.position < DemoStory.callFrames { try call.writeNextPeriod() }
        call.pause()
        record("call", output: Story.hfp, ["bluealsa_sco": DemoStory.callFrames], exact: true, start, devices.files(),
               "call audio on the Bluetooth headset (HFP), the music silent")
        start = devices.files()
        try await phone.overrideOutputAudioPort(.speaker)
        try await story.waitForRoute(Story.speaker, "demo_builtin")
        timeline.event("session", ["event": .string("speaker override")], "the caller taps speaker: override to the built-in speaker")
        while try call.writeNextPeriod() > 0 {}
        call.close()
        record("override", output: Story.speaker, ["demo_builtin": DemoStory.callFrames], exact: true, start, devices.files(),
               "call audio on the speaker, the music silent")
        let mark = devices.files()
        try await phone.setActive(false, options: .notifyOthersOnDeactivation)
        await phone.close()
        try await musicResumesAfterTheCall(since: mark)
    }

    /// The call's interruption ends with shouldResume: the music comes back on its own.
    private func musicResumesAfterTheCall(since mark: [String: Int]) async throws {
        let ended = try await inbox.take("interruption ended") {
            if case .interruption(let info) = $0 { return info.type == .ended }
            return false
        }
        guard case .interruption(let info) = ended, info.options.contains(.shouldResume) else {
            throw DemoError("the call's interruption ended without shouldResume")
        }
        // The app reactivates its session (interrupted sessions are inactive); the player
        // resumes by itself, since it was playing when the call came.
        try await story.music.setActive(true)
        timeline.event("session", ["event": .string("call ended")], "call ended (shouldResume): the music app reactivates its session")
        try await arrives(on: "bluealsa_a2dp", since: mark, "the call's end")
        let (start, _) = try await audible("resumed", on: "bluealsa_a2dp", output: Story.a2dp, "the player resumed by itself on the Bluetooth headset")
        unduckedPeak = devices.peak(of: "bluealsa_a2dp", since: start)
    }

    /// 7. The Bluetooth headset switches off: the player pauses (routeDisconnected).
    func bluetoothHeadsetSwitchesOff() async throws {
        try story.bluez.expectOK(#"{"cmd": "props", "path": "\#(Story.btPath)", "iface": "org.bluez.Device1", "props": {"ServicesResolved": ["b", false]}}"#)
        try story.bluez.expectOK(#"{"cmd": "disconnect", "adapter": "hci0", "address": "\#(DemoStory.btAddress)"}"#)
        timeline.event("hardware", ["event": .string("bluetooth headset disconnected")], "Bluetooth headset switched off")
        try await pauses("Bluetooth headset gone")
        try await story.waitForRoute(Story.headphones, "demo_headphones")
        try await silent("bluetooth off", output: Story.headphones, "music paused: nothing plays")
    }

    /// 8. A call while the music is paused: its end (shouldResume) must not start it (seed 003).
    func callWhileTheMusicIsPaused() async throws {
        try await story.music.setActive(true)
        let phone = AudioSession(bus: story.bus, appName: "phone")
        try await phone.setCategory(.playAndRecord, mode: .voiceChat)
        try await phone.setActive(true)
        _ = try await inbox.take("interruption", Self.interruptionBegan)
        try await phone.setActive(false, options: .notifyOthersOnDeactivation)
        await phone.close()
        _ = try await inbox.take("interruption ended") {
            if case .interruption(let info) = $0 { return info.type == .ended && info.options.contains(.shouldResume) }
            return false
        }
        timeline.event("session", ["event": .string("call while paused")], "a call comes and ends (shouldResume) while the music is paused")
        try await silent("call while paused", output: Story.headphones, "the music stays paused")
    }

    /// 9. Play pressed: the wired headset.
    func playPressedOnTheWiredHeadset() async throws {
        try await story.music.setActive(true)
        let mark = devices.files()
        try player.play()
        timeline.event("session", ["event": .string("play")], "play pressed")
        try await arrives(on: "demo_headphones", since: mark, "play")
        try await audible("wired again", on: "demo_headphones", output: Story.headphones, "music on the wired headset")
    }

    /// 10. The wired headset unplugged: the player pauses (oldDeviceUnavailable).
    func wiredHeadsetUnplugged() async throws {
        try story.emitter.expectOK("jacks /dev/input/event20 2:0,4:0")
        timeline.event("hardware", ["event": .string("wired headset unplugged")], "wired headset unplugged")
        try await pauses("headset unplugged")
        try await story.waitForRoute(Story.speaker, "demo_builtin")
        try await silent("unplugged", output: Story.speaker, "music paused: nothing reaches the speaker")
    }

    // MARK: The checks

    /// Prints a line per check and a result; throws if any failed.
    func verify() throws {
        let results = phases.map(verify) + [verifyDucking(), verifyFrames()] + (aplay.map { [$0.verify(timeline)] } ?? [])
        let failures = results.filter { !$0 }.count
        let checks = results.count
        timeline.event("result", ["ok": .bool(failures == 0), "checks": .integer(Int64(checks)), "failures": .integer(Int64(failures))],
                       failures == 0 ? "all \(checks) checks passed" : "\(failures) of \(checks) checks failed")
        if failures > 0 { throw DemoError("verification failed") }
    }

    private func verify(_ phase: Story.Phase) -> Bool {
        let expected = phase.expected.isEmpty ? "no frames" : phase.expected.sorted { $0.key < $1.key }
            .map { "\($0.key)\(phase.exact ? "=" : ">=")\($0.value)" }.joined(separator: " ")
        timeline.event(
            "verify", ["phase": .string(phase.name), "ok": .bool(phase.ok), "output": .string(phase.output),
                       "expected": Story.framesJSON(phase.expected), "exact": .bool(phase.exact), "got": Story.framesJSON(phase.got)],
            "\(phase.ok ? "OK  " : "FAIL") \(phase.name): expected \(expected), got \(Story.describe(phase.got))")
        return phase.ok
    }

    /// Ducking, from the samples: while ducked the music peaks at 0.3 of its level on the
    /// speaker, the prompt at full level, and after the call the music is back at full level.
    private func verifyDucking() -> Bool {
        let ratio = fullPeak > 0 ? duckedPeak / fullPeak : 0
        let ducked = fullPeak > 0.1 && abs(ratio - duckGain) < 0.01 && abs(promptPeak - fullPeak) < 0.01 && abs(unduckedPeak - fullPeak) < 0.01
        let level = { (value: Double) in String(Int((value * 1000).rounded())) }
        timeline.event(
            "verify", ["phase": .string("ducking"), "ok": .bool(ducked), "musicPeak": .double(fullPeak), "duckedPeak": .double(duckedPeak),
                       "promptPeak": .double(promptPeak), "unduckedPeak": .double(unduckedPeak)],
            "\(ducked ? "OK  " : "FAIL") ducking: music peak \(level(fullPeak))/1000 of full scale, ducked \(level(duckedPeak))/1000 (expected \(duckGain) of it), prompt \(level(promptPeak))/1000, after the call \(level(unduckedPeak))/1000")
        return ducked
    }

    /// No frame lost or repeated: what all the files hold, less the prompt's and the call's,
    /// is how far the player advanced (across loops, reroutes and pauses).
    private func verifyFrames() -> Bool {
        let total = devices.frames().values.reduce(0, +)
        let musicFrames = total - DemoStory.promptFrames - 2 * DemoStory.callFrames
        let delivered = player.framesPlayed
        let conserved = musicFrames == delivered && delivered > 0
        timeline.event(
            "verify", ["phase": .string("frames"), "ok": .bool(conserved), "played": .integer(Int64(delivered)), "inFiles": .integer(Int64(musicFrames))],
            "\(conserved ? "OK  " : "FAIL") frames: the player advanced \(delivered) frames, the devices' files hold \(musicFrames) of music")
        return conserved
    }

    // MARK: Steps the phases share

    /// Records a phase from two snapshots of the files.
    private func record(_ name: String, output: String, _ expected: [String: Int], exact: Bool, _ start: [String: Int], _ end: [String: Int], _ text: String) {
        log.flush()
        let got = devices.frames(from: start, to: end)
        phases.append(Story.Phase(name: name, output: output, expected: expected, exact: exact, got: got))
        timeline.event("phase " + name, ["output": .string(output), "frames": Story.framesJSON(got)],
                       "\(text) -> \(output); frames: \(Story.describe(got))")
    }

    /// Music on `device`: waits until it has received `DemoStory.windowFrames` more
    /// frames; nothing else may get any meanwhile. Returns the two snapshots.
    @discardableResult
    private func audible(_ name: String, on device: String, output: String, _ text: String) async throws -> ([String: Int], [String: Int]) {
        let start = devices.files()
        _ = try await devices.waitForFrames(on: device, atLeast: DemoStory.windowFrames, since: start)
        let end = devices.files()
        record(name, output: output, [device: DemoStory.windowFrames], exact: false, start, end, text)
        return (start, end)
    }

    /// The music paused: nothing may reach any device for a while.
    private func silent(_ name: String, output: String, _ text: String) async throws {
        let start = devices.files()
        try await Task.sleep(for: .milliseconds(Story.silenceMilliseconds))
        let end = devices.files()
        record(name, output: output, [:], exact: true, start, end, text)
    }

    /// Waits for the player to stop by itself (unplug, interruption).
    private func pauses(_ why: String) async throws {
        try await waitUntil("the music player to pause (\(why))") { !player.isPlaying }
        log.flush()
    }

    /// Waits for the music to arrive on `device` after a change (the transition: the
    /// old device may get frames until the player has rerouted; not checked per phase,
    /// but counted in the total).
    private func arrives(on device: String, since mark: [String: Int], _ why: String) async throws {
        _ = try await devices.waitForFrames(on: device, atLeast: 1, since: mark, what: "music on \(device) after \(why)")
        // The device left plays out what it held and is closed 100 ms after the move (the plugin's
        // mover keeps it open for a card's own buffer); its sink writes its last frames then. The
        // next phase counts from when the other devices' files have stopped growing (at most 1 s).
        var before = devices.files()
        for _ in 0..<20 {
            try await Task.sleep(for: .milliseconds(50))
            let now = devices.files()
            if now.filter({ devices.device(of: $0.key) != device }) == before.filter({ devices.device(of: $0.key) != device }) { break }
            before = now
        }
        log.flush()
    }

    /// Another app's sound on the route, written to its end and drained.
    private func playToEnd(_ file: WAVFile) throws {
        let engine = try PlaybackEngine(file: file, device: "audioroute", configuration: story.config(), periodFrames: 400)
        while try engine.writeNextPeriod() > 0 {}
        try engine.drain()
        engine.close()
    }

    /// The ducked music's peak (after what was in flight when the ducking began) and the
    /// prompt's, from the Bluetooth headset's files between the two snapshots.
    private func measureDucking(from duckStart: [String: Int], to duckEnd: [String: Int]) {
        // The music's file is the one that was already being written when the ducking began.
        let musicA2DP = duckEnd.keys.filter { devices.device(of: $0) == "bluealsa_a2dp" && duckStart[$0] != nil && duckEnd[$0] != duckStart[$0] }
        let promptA2DP = duckEnd.keys.filter { devices.device(of: $0) == "bluealsa_a2dp" && duckStart[$0] == nil }
        duckedPeak = musicA2DP.count == 1 ? devices.peak(musicA2DP[0], from: duckStart[musicA2DP[0]]! + Story.inFlightFrames, to: duckEnd[musicA2DP[0]]!) : 0
        promptPeak = promptA2DP.count == 1 && duckEnd[promptA2DP[0]] == DemoStory.promptFrames ? devices.peak(promptA2DP[0], from: 0) : 0
    }

    private static func interruptionBegan(_ notification: AudioSessionNotification) -> Bool {
        if case .interruption(let info) = notification { return info.type == .began }
        return false
    }
}
