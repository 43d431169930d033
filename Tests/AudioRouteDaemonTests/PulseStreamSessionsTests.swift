// Layer 2: the real audiorouted beside a real PulseAudio 16 on the sound-server bench (null sinks
// shaped as ALSA sinks: `speaker` is the laptop's route), with audioroute-pulse. Real clients,
// paplay with a `media.role`: a music stream (a 440 Hz tone at 0.3 of full scale, its user's
// volume 90 %), then a phone stream: the music is muted (PulseAudio lets no client cork another's
// stream), read as the speaker's monitor level (parec); the call ends: back at its level. A
// navigation stream ducks the music to the tower's duck gain, and its end gives the user's
// sink-input volume back exactly (pactl); a volume the user sets during a duck is kept. Silent
// mode silences an event stream. Skipped where PulseAudio is not installed.
import AudioRouteCore
import AudioRouteTestKit
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(3))) struct PulseStreamSessionsTests {
    static let pulseMissing = SoundServerKind.pulseaudio.missing
    static let amplitude = PipeWireStreamSessionsTests.amplitude

    func wait<T>(seconds: Double = 10, _ read: () -> T, until accept: (T) -> Bool) -> T { SoundServerDaemon.wait(seconds: seconds, read, until: accept) }

    /// The sink input of the stream whose application is `name`: its index and volume (pactl's
    /// raw values), nil when there is none.
    func sinkInput(_ bench: SoundServerBench, application name: String) -> (index: String, volume: [UInt32], muted: Bool)? {
        var index: String?
        var volume: [UInt32] = []
        var muted = false
        for line in bench.run("pactl", ["list", "sink-inputs"]).stdoutLines {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("Sink Input #") {
                index = String(text.dropFirst(12))
                volume = []
                muted = false
            }
            if text.hasPrefix("Mute: ") { muted = text == "Mute: yes" }
            if text.hasPrefix("Volume: ") {
                volume = text.dropFirst(8).split(separator: ",").compactMap { channel in
                    channel.split(separator: ":").dropFirst().first.flatMap { UInt32($0.split(separator: "/").first?.trimmingCharacters(in: .whitespaces) ?? "") }
                }
            }
            if text == "application.name = \"\(name)\"", let index { return (index, volume, muted) }
        }
        return nil
    }

    @Test(.enabled(if: pulseMissing == nil, "pulseaudio or pulseaudio-utils not installed"))
    func aCallMutesTheMusicAndNavigationDucksIt() throws {
        let setup = try SoundServerDaemon(.pulseaudio)
        defer { setup.close() }
        let (bench, testbed, daemon) = (setup.bench, setup.testbed, setup.daemon)
        let status = setup.status
        let level = { SoundServerDaemon.level(bench) }
        let first = wait({ bench.run("pactl", ["get-default-sink"]).stdout }) { $0 == "speaker\n" }
        #expect(first == "speaker\n", "\(first)\ndaemon: \(daemon.stderr)")

        let tone = bench.directory + "/tone.wav"
        let silence = bench.directory + "/silence.wav"
        _ = FileManager.default.createFile(atPath: tone, contents: Data(PipeWireStreamSessionsTests.toneWAV(seconds: 60, amplitude: Self.amplitude)))
        _ = FileManager.default.createFile(atPath: silence, contents: Data(PipeWireDefaultsTests.silenceWAV(seconds: 60)))
        let player = { (role: String, name: String, file: String) in try bench.start("paplay", PipeWireStreamSessionsTests.player("paplay", role: role, name: name, file)) }
        let music = try player("Music", "Bench music", tone)
        defer { music.kill() }
        let listed = wait({ status() }) { $0.contains("Bench music  playback/default  active") }
        #expect(listed.contains("Bench music  playback/default  active  owner=pipewire"), "\(listed)\ndaemon: \(daemon.stderr)")
        // The user's volume for the music: 90 % (58982), a level of 0.3 * 0.9^3.
        let index = wait({ sinkInput(bench, application: "Bench music")?.index }) { $0 != nil }
        guard let index else { throw TestFailure("no sink input for the music: \(bench.run("pactl", ["list", "sink-inputs"]).stdout)") }
        // `status` names the stream's session by its sink input, as pactl does, not by its node id
        // (which carries the kind in its top bits), with paplay's process.
        #expect(status().contains(" sink-input \(index)  Bench music  playback/default  active  owner=pipewire  pid=\(music.pid)  program=paplay"), "\(status())")
        #expect(bench.run("pactl", ["set-sink-input-volume", index, "58982"]).status == 0)
        let userLevel = Self.amplitude * 0.729
        let playing = wait({ level() }) { $0 != nil && abs($0! - userLevel) < 0.02 }
        #expect(playing.map { abs($0 - userLevel) < 0.02 } == true, "the music's level: \(String(describing: playing))")

        // A call: the music's session is interrupted and its sink input muted.
        let phone = try player("Phone", "Bench phone", silence)
        defer { phone.kill() }
        let inCall = wait({ status() }) { $0.contains("Bench phone  playAndRecord/voiceChat  active") && $0.contains("Bench music  playback/default  interrupted") }
        #expect(inCall.contains("Bench phone  playAndRecord/voiceChat  active"), "\(inCall)\ndaemon: \(daemon.stderr)")
        #expect(inCall.contains("Bench music  playback/default  interrupted"), "\(inCall)")
        let muted = wait({ level() }) { $0 != nil && $0! < 0.01 }
        #expect(muted.map { $0 < 0.01 } == true, "the music during the call: \(String(describing: muted))\ndaemon: \(daemon.stderr)")
        #expect(sinkInput(bench, application: "Bench music")?.muted == true)

        // The call ends: the music is back at its level, unmuted, at the user's volume.
        phone.kill()
        let resumed = wait({ level() }) { $0 != nil && abs($0! - userLevel) < 0.02 }
        #expect(resumed.map { abs($0 - userLevel) < 0.02 } == true, "the music after the call: \(String(describing: resumed))\ndaemon: \(daemon.stderr)")
        let afterCall = wait({ status() }) { !$0.contains("Bench phone") && $0.contains("Bench music  playback/default  active") }
        #expect(afterCall.contains("Bench music  playback/default  active") && !afterCall.contains("Bench phone"), "\(afterCall)")
        let unmuted = sinkInput(bench, application: "Bench music")
        #expect(unmuted?.muted == false && unmuted?.volume == [58982, 58982], "\(String(describing: unmuted))")

        // Directions: the music is ducked to the tower's gain, then the user's volume is back exactly.
        let before = resumed ?? userLevel
        let navigation = try player("Navigation", "Bench directions", silence)
        defer { navigation.kill() }
        let expected = before * SessionEvent.duckedGain
        let ducked = wait({ level() }) { $0 != nil && abs($0! - expected) < 0.02 }
        #expect(ducked.map { abs($0 - expected) < 0.02 } == true, "ducked: \(String(describing: ducked)), expected \(expected)\ndaemon: \(daemon.stderr)")
        let duckStatus = status()
        #expect(duckStatus.contains("Bench directions  playback/default [mixWithOthers,duckOthers]  active"), "\(duckStatus)")
        #expect(duckStatus.contains("Bench music  playback/default  active"), "\(duckStatus)")
        navigation.kill()
        let restored = wait({ sinkInput(bench, application: "Bench music")?.volume }) { $0 == [58982, 58982] }
        #expect(restored == [58982, 58982], "the user's volume after the directions: \(String(describing: restored))")
        let unducked = wait({ level() }) { $0 != nil && abs($0! - before) < 0.02 }
        #expect(unducked.map { abs($0 - before) < 0.02 } == true, "after the directions: \(String(describing: unducked))")

        // The user turns the music down to 30000 during a duck: that volume is kept (it is theirs,
        // the gain taken out: 30000 / pa_sw_volume_from_linear(0.3)), not the one before.
        let again = try player("Navigation", "Bench directions again", silence)
        defer { again.kill() }
        let duckedVolume = PulseVolume.multiply(58982, 43872)
        let lowered = wait({ sinkInput(bench, application: "Bench music")?.volume }) { $0 == [duckedVolume, duckedVolume] }
        #expect(lowered == [duckedVolume, duckedVolume], "ducked volume: \(String(describing: lowered))\ndaemon: \(daemon.stderr)")
        #expect(bench.run("pactl", ["set-sink-input-volume", index, "30000"]).status == 0)
        // A moment for the helper to hear of it (the server's event) before the duck ends: not a measurement.
        usleep(500_000)
        again.kill()
        let theirs = PulseVolume.divide(30000, 43872)
        let kept = wait({ sinkInput(bench, application: "Bench music")?.volume }) { $0 == [theirs, theirs] }
        #expect(kept == [theirs, theirs], "the user's volume during the duck: \(String(describing: kept)), expected \(theirs)\ndaemon: \(daemon.stderr)")

        // Silent mode silences an ambient stream (an event), and gives it back.
        music.kill()
        _ = wait({ status() }) { !$0.contains("Bench music") }
        let chime = try player("Event", "Bench chime", tone)
        defer { chime.kill() }
        let chiming = wait({ status() }) { $0.contains("Bench chime  ambient/default  active") }
        #expect(chiming.contains("Bench chime  ambient/default  active"), "\(chiming)")
        #expect(wait({ level() }) { ($0 ?? 0) > 0.25 }.map { abs($0 - Self.amplitude) < 0.03 } == true)
        #expect(try testbed.run(["silent", "on", "--bus-address", bench.bus.address]).status == 0)
        let silenced = wait({ level() }) { $0 != nil && $0! < 0.01 }
        #expect(silenced.map { $0 < 0.01 } == true, "silent mode: \(String(describing: silenced))\ndaemon: \(daemon.stderr)")
        #expect(try testbed.run(["silent", "off", "--bus-address", bench.bus.address]).status == 0)
        let unsilenced = wait({ level() }) { ($0 ?? 0) > 0.25 }
        #expect(unsilenced.map { abs($0 - Self.amplitude) < 0.03 } == true, "silent mode off: \(String(describing: unsilenced))")
        chime.kill()
        let gone = wait({ status() }) { !$0.contains("owner=pipewire") }
        #expect(!gone.contains("owner=pipewire"), "\(gone)")

        // Nothing of ours is left with the bench's runtime directory.
        let (code, left) = try setup.stopDaemonAndCheckClean()
        #expect(code == 0)
        #expect(left == "clean", "left running: \(left) (servers: \(bench.serverPIDs))")
    }
}
