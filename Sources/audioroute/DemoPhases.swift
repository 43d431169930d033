import AudioRouteCore
import AudioRouteLinux
import AudioSession

#if canImport(Glibc)
import Glibc
#endif

/// The story's phases, with the music app's player following its session (a minimal
/// player loop over the PlaybackEngine: reopen `audioroute` on a route change, pause on an
/// interruption, resume on `shouldResume`, gain 0.3 while ducked).
struct Story {
    let timeline: DemoTimeline
    let bus: AudioSession.Bus
    let music: AudioSession
    let devices: DemoDevices
    let bluez: DemoChild
    let emitter: DemoChild
    let routeFile: String
    let asoundrc: String

    static let frames = DemoStory.phaseFrames
    static let speaker = "platform-sound/speaker"
    static let headphones = "platform-sound/headphones"
    static var a2dp: String { "bt:\(DemoStory.btAddress):a2dp" }
    static var hfp: String { "bt:\(DemoStory.btAddress):hfp" }

    /// What each phase expects: the output port and the frames each device got in it.
    struct Phase {
        var name: String
        var output: String
        var expected: [String: Int]
        var got: [String: Int] = [:]
        /// What each file written in the phase got: frames and peak level.
        var segments: [(device: String, frames: Int, peak: Double)] = []
    }

    static func tone(frames: Int, frequency: Double) -> WAVFile {
        var samples: [Double] = []
        samples.reserveCapacity(frames * 2)
        for frame in 0..<frames {
            let value = 0.5 * sin(2 * Double.pi * frequency * Double(frame) / 48_000)
            samples.append(value)
            samples.append(value)
        }
        // The encoder's own output always decodes.
        return try! WAVFile(bytes: WAVFile.encode(samples, format: WAVFormat(encoding: .signed16, channels: 2, sampleRate: 48_000)))
    }

    func config() -> PCMConfigurationSource { .systemPlus(files: [asoundrc, routeFile]) }

    func play() async throws {
        let musicInbox = await DemoInbox(music)
        try await music.setCategory(.playback)
        try await music.setActive(true)
        try await waitForRoute(Self.speaker, "demo_builtin")
        let engine = try PlaybackEngine(
            file: Self.tone(frames: 10 * Self.frames, frequency: 440), device: "audioroute", configuration: config(), periodFrames: 400)
        // Drain, not rewind, when the phase ends: every frame written reaches the phase's
        // device, so each phase's count is exact and known in advance.
        engine.rerouteStrategy = .drain
        var phases: [Phase] = []
        var before = devices.files()

        func phase(_ name: String, output: String, _ expected: [String: Int], _ text: String) {
            engine.pause()
            let now = devices.files()
            var got: [String: Int] = [:]
            var segments: [(device: String, frames: Int, peak: Double)] = []
            for (file, count) in now.sorted(by: { $0.key < $1.key }) where count != before[file] {
                guard let device = devices.device(of: file) else { continue }
                let old = before[file] ?? 0
                got[device, default: 0] += count - old
                segments.append((device, count - old, devices.peak(file, from: old)))
            }
            before = now
            phases.append(Phase(name: name, output: output, expected: expected, got: got, segments: segments))
            var fields: [String: JSON] = ["output": .string(output)]
            fields["frames"] = Self.framesJSON(got)
            timeline.event("phase " + name, fields, "\(text) -> \(output); frames: \(got.isEmpty ? "none" : got.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
        }
        func musicPlays(_ frames: Int = Self.frames) throws {
            let target = engine.position + frames
            while engine.position < target { if try engine.writeNextPeriod() == 0 { break } }
        }
        func follow(_ reason: String, to port: String, pcm: String) async throws {
            _ = try await musicInbox.take("route change to \(port)") {
                if case .routeChange(let info) = $0 { return info.currentRoute.outputs.first?.uid == port }
                return false
            }
            try await waitForRoute(port, pcm)
            let report = try engine.reroute(to: "audioroute")
            timeline.event("music follows", ["reason": .string(reason), "to": .string(pcm), "resumeFrame": .integer(Int64(report.resumeFrame))],
                           "music player reopens audioroute (\(reason)) at frame \(report.resumeFrame) on \(pcm)")
        }

        // 1. Music on the speaker.
        try musicPlays()
        phase("speaker", output: Self.speaker, ["demo_builtin": Self.frames], "music plays on the speaker")

        // 2. A wired headset plugged: the route moves to it.
        try expectOK(emitter, "jacks /dev/input/event20 2:1,4:1")
        timeline.event("hardware", ["event": .string("wired headset plugged")], "wired headset plugged into the jack")
        try await follow("newDeviceAvailable", to: Self.headphones, pcm: "demo_headphones")
        try musicPlays()
        phase("wired", output: Self.headphones, ["demo_headphones": Self.frames], "music on the wired headset")

        // 3. A Bluetooth headset connects: last in wins.
        let device = try bluez.ask(#"{"cmd": "device", "adapter": "hci0", "address": "\#(DemoStory.btAddress)", "alias": "Demo BT Headset"}"#)
        guard device.hasPrefix("ok") else { throw DemoError("bluez: \(device)") }
        try expectOK(bluez, #"{"cmd": "connect", "adapter": "hci0", "address": "\#(DemoStory.btAddress)"}"#)
        let path = "/org/bluez/hci0/dev_" + DemoStory.btAddress.replacingColons()
        try expectOK(bluez, #"{"cmd": "props", "path": "\#(path)", "iface": "org.bluez.Device1", "props": {"UUIDs": ["as", ["0000110b-0000-1000-8000-00805f9b34fb", "0000111e-0000-1000-8000-00805f9b34fb"]], "Class": ["u", 2360324], "ServicesResolved": ["b", true]}}"#)
        timeline.event("hardware", ["event": .string("bluetooth headset connected")], "Bluetooth headset \(DemoStory.btAddress) connected (A2DP, HFP)")
        try await follow("newDeviceAvailable", to: Self.a2dp, pcm: "bluealsa:DEV=\(DemoStory.btAddress),PROFILE=a2dp")
        try musicPlays()
        phase("bluetooth", output: Self.a2dp, ["bluealsa_a2dp": Self.frames], "music on the Bluetooth headset (A2DP)")

        // 4. A navigation prompt ducks the music.
        let navigation = AudioSession(bus: bus, appName: "navigation")
        try await navigation.setCategory(.playback, mode: .voicePrompt, options: [.duckOthers])
        try await navigation.setActive(true)
        _ = try await musicInbox.take("ducked") { $0 == .ducked }
        engine.gains.gain = 0.3
        timeline.event("session", ["event": .string("ducked")], "navigation prompt active: music ducked to 0.3")
        let prompt = try PlaybackEngine(
            file: Self.tone(frames: DemoStory.promptFrames, frequency: 880), device: "audioroute", configuration: config(), periodFrames: 400)
        while try prompt.writeNextPeriod() > 0 {}
        try prompt.drain()
        prompt.close()
        try musicPlays()
        try await navigation.setActive(false, options: .notifyOthersOnDeactivation)
        _ = try await musicInbox.take("unducked") { $0 == .unducked }
        engine.gains.gain = 1
        await navigation.close()
        phase("prompt", output: Self.a2dp, ["bluealsa_a2dp": Self.frames + DemoStory.promptFrames], "prompt over ducked music, then unducked")

        // 5. A call (allowBluetooth) takes HFP and interrupts the music. 6. The caller taps
        // "speaker" (the override; playAndRecord only). The call ends with shouldResume.
        let phone = AudioSession(bus: bus, appName: "phone")
        try await phone.setCategory(.playAndRecord, mode: .voiceChat, options: [.allowBluetooth])
        try await phone.setActive(true)
        _ = try await musicInbox.take("interruption") {
            if case .interruption(let info) = $0 { return info.type == .began }
            return false
        }
        engine.pause()
        timeline.event("session", ["event": .string("interrupted")], "call active: music interrupted and paused")
        try await waitForRoute(Self.hfp, "bluealsa:DEV=\(DemoStory.btAddress),PROFILE=sco")
        let call = try PlaybackEngine(
            file: Self.tone(frames: 2 * DemoStory.callFrames, frequency: 350), device: "audioroute", configuration: config(), periodFrames: 400)
        call.rerouteStrategy = .drain
        while call.position < DemoStory.callFrames { try call.writeNextPeriod() }
        call.pause()
        phase("call", output: Self.hfp, ["bluealsa_sco": DemoStory.callFrames], "call audio on the Bluetooth headset (HFP)")
        try await phone.overrideOutputAudioPort(.speaker)
        try await waitForRoute(Self.speaker, "demo_builtin")
        timeline.event("session", ["event": .string("speaker override")], "the caller taps speaker: override to the built-in speaker")
        while try call.writeNextPeriod() > 0 {}
        call.close()
        phase("override", output: Self.speaker, ["demo_builtin": DemoStory.callFrames], "call audio on the speaker")
        try await phone.setActive(false, options: .notifyOthersOnDeactivation)
        await phone.close()
        let ended = try await musicInbox.take("interruption ended") {
            if case .interruption(let info) = $0 { return info.type == .ended }
            return false
        }
        guard case .interruption(let info) = ended, info.options.contains(.shouldResume) else {
            throw DemoError("the call's interruption ended without shouldResume")
        }
        try await music.setActive(true)
        try await waitForRoute(Self.a2dp, "bluealsa:DEV=\(DemoStory.btAddress),PROFILE=a2dp")
        timeline.event("session", ["event": .string("resumed")], "call ended (shouldResume): music resumes")
        try musicPlays()
        phase("resumed", output: Self.a2dp, ["bluealsa_a2dp": Self.frames], "music resumed on the Bluetooth headset")

        // 7. The Bluetooth headset switches off: the music pauses (routeDisconnected); the
        // user presses play again: the wired headset.
        try expectOK(bluez, #"{"cmd": "props", "path": "\#(path)", "iface": "org.bluez.Device1", "props": {"ServicesResolved": ["b", false]}}"#)
        try expectOK(bluez, #"{"cmd": "disconnect", "adapter": "hci0", "address": "\#(DemoStory.btAddress)"}"#)
        timeline.event("hardware", ["event": .string("bluetooth headset disconnected")], "Bluetooth headset switched off")
        try await pausesOnDisconnect(musicInbox, engine)
        try await waitForRoute(Self.headphones, "demo_headphones")
        phase("bluetooth off", output: Self.headphones, [:], "music paused: nothing plays")
        try await music.setActive(true)
        try musicPlays()
        phase("wired again", output: Self.headphones, ["demo_headphones": Self.frames], "play pressed: music on the wired headset")

        // 8. The wired headset unplugged: the music pauses (routeDisconnected).
        try expectOK(emitter, "jacks /dev/input/event20 2:0,4:0")
        timeline.event("hardware", ["event": .string("wired headset unplugged")], "wired headset unplugged")
        try await pausesOnDisconnect(musicInbox, engine)
        try await waitForRoute(Self.speaker, "demo_builtin")
        engine.close()
        phase("unplugged", output: Self.speaker, [:], "music paused: nothing reaches the speaker")
        musicInbox.stop()
        await music.close()

        // Verification.
        var failures = 0
        for phase in phases {
            let ok = phase.got == phase.expected
            if !ok { failures += 1 }
            let expected = phase.expected.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            let got = phase.got.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            timeline.event(
                "verify", ["phase": .string(phase.name), "ok": .bool(ok), "output": .string(phase.output),
                           "expected": Self.framesJSON(phase.expected), "got": Self.framesJSON(phase.got)],
                "\(ok ? "OK  " : "FAIL") \(phase.name): expected \(expected.isEmpty ? "no frames" : expected), got \(got.isEmpty ? "no frames" : got)")
        }
        // Ducking, from the samples: during the prompt the music (its 12000-frame segment)
        // peaks at 0.3 of the undimmed music, the prompt itself at full level.
        let full = phases.first { $0.name == "speaker" }?.segments.first?.peak ?? 0
        let promptPhase = phases.first { $0.name == "prompt" }?.segments ?? []
        let duckedMusic = promptPhase.first { $0.frames == Self.frames }?.peak ?? 0
        let promptPeak = promptPhase.first { $0.frames == DemoStory.promptFrames }?.peak ?? 0
        let ratio = full > 0 ? duckedMusic / full : 0
        let ducked = full > 0.1 && abs(ratio - 0.3) < 0.01 && abs(promptPeak - full) < 0.01
        if !ducked { failures += 1 }
        let level = { (value: Double) in String(Int((value * 1000).rounded())) }
        timeline.event(
            "verify", ["phase": .string("ducking"), "ok": .bool(ducked), "musicPeak": .double(full), "duckedPeak": .double(duckedMusic),
                       "promptPeak": .double(promptPeak)],
            "\(ducked ? "OK  " : "FAIL") ducking: music peak \(level(full))/1000 of full scale, ducked \(level(duckedMusic))/1000 (expected 0.3 of it), prompt \(level(promptPeak))/1000")
        let checks = phases.count + 1
        timeline.event("result", ["ok": .bool(failures == 0), "checks": .integer(Int64(checks)), "failures": .integer(Int64(failures))],
                       failures == 0 ? "all \(checks) checks passed" : "\(failures) of \(checks) checks failed")
        if failures > 0 { throw DemoError("verification failed") }
    }

    /// Frames by device, as a JSON object in name order.
    static func framesJSON(_ frames: [String: Int]) -> JSON {
        .object(frames.sorted { $0.key < $1.key }.map { .init($0.key, .integer(Int64($0.value))) })
    }

    /// The music's interruption(began, routeDisconnected): the player pauses.
    func pausesOnDisconnect(_ inbox: DemoInbox, _ engine: PlaybackEngine) async throws {
        _ = try await inbox.take("interruption (routeDisconnected)") {
            if case .interruption(let info) = $0 { return info.type == .began && info.reason == .routeDisconnected }
            return false
        }
        engine.pause()
        timeline.event("session", ["event": .string("paused")], "music interrupted (routeDisconnected): the player pauses")
    }

    /// Waits until the daemon's route file points `audioroute` at `pcm` (and says so).
    func waitForRoute(_ port: String, _ pcm: String) async throws {
        for _ in 0..<1500 {
            if let text = try? FileIO.readFile(routeFile), String(decoding: text, as: UTF8.self).contains("pcm.audioroute {\n    type plug\n    slave.pcm \"\(pcm)\"") {
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw DemoError("the route file never named \(pcm) for \(port)")
    }

    func expectOK(_ child: DemoChild, _ command: String) throws {
        let answer = try child.ask(command)
        guard answer.lowercased().hasPrefix("ok") else { throw DemoError("\(child.name): \(command): \(answer)") }
    }
}

extension String {
    func replacingColons() -> String { String(map { $0 == ":" ? "_" : $0 }) }
}
