// Layer 2: the real audiorouted under umockdev (the laptop's `Intel` card, then a USB headset's
// `Pro` card) beside a real PulseAudio on the sound-server bench, whose null sinks carry the
// properties PulseAudio's ALSA sinks have (`alsaShapedPulseScript`: `speaker` is card 0's PCM 0,
// `headphones` card 2's). Each route change sets PulseAudio's default sink to the route's sink
// through audioroute-pulse, read back with `pactl get-default-sink`, and a paplay stream on the
// old default moves with it (PulseAudio moves the streams no one pinned) while one the user moved
// stays, read back from `pactl list sink-inputs`; the server's stop stops the helper. Skipped where PulseAudio is not
// installed. Nothing is left running, even on failure (the defers).
import AudioRouteCore
import AudioRouteTestKit
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(2))) struct PulseDefaultsTests {
    static let pulseMissing = SoundServerKind.pulseaudio.missing

    @Test(.enabled(if: pulseMissing == nil, "pulseaudio or pulseaudio-utils not installed"))
    func pulseAudiosDefaultFollowsTheRouteAndTheStreamMoves() throws {
        let support = PipeWireDefaultsTests()
        let setup = try SoundServerDaemon(.pulseaudio)
        defer { setup.close() }
        let (bench, testbed, daemon) = (setup.bench, setup.testbed, setup.daemon)

        // A stream that follows the default, playing before the headset comes: 30 s of silence.
        let wav = bench.directory + "/silence.wav"
        _ = FileManager.default.createFile(atPath: wav, contents: Data(PipeWireDefaultsTests.silenceWAV(seconds: 30)))
        let player = try bench.start("paplay", [wav])
        defer { player.kill() }
        let defaultSink = { bench.run("pactl", ["get-default-sink"]).stdout }
        // By sink input index: the first is the player's; the second, later, the pinned one's.
        let streams = { support.streamSinks(bench).joined(separator: ",") }
        // The laptop's speaker is the route: its sink is `speaker`, by alsa.card 0 and alsa.device 0.
        let helpers = { bench.processesLeft().filter { PipeWireDefaultsTests.command($0) == "audioroute-puls" } }
        let started = support.wait({ "\(helpers().count)" }) { $0 == "1" }
        #expect(started == "1", "the PulseAudio helper is not running: \(started)\ndaemon: \(daemon.stderr)")
        #expect(support.wait({ streams() }) { $0 == "speaker" } == "speaker")
        // A stream the user moved to the headphones (pactl move-sink-input to another sink: PulseAudio
        // keeps it as the stream's preferred sink) is the user's choice: it stays there whatever the route.
        let pinned = try bench.start("paplay", [wav])
        defer { pinned.kill() }
        #expect(support.wait({ streams() }) { $0 == "speaker,speaker" } == "speaker,speaker")
        let index = bench.run("pactl", ["list", "short", "sink-inputs"]).stdoutLines.last.map { String($0.prefix { $0 != "\t" }) } ?? "?"
        #expect(bench.run("pactl", ["move-sink-input", index, "headphones"]).status == 0)
        #expect(support.wait({ streams() }) { $0 == "speaker,headphones" } == "speaker,headphones")

        // The headset's card 2 arrives: the route goes to it, and so does PulseAudio's default.
        try testbed.load("usb-headset-razer-blackshark-v3-pro")
        let plugged = support.wait({ defaultSink() }) { $0 == "headphones\n" }
        #expect(plugged == "headphones\n", "\(plugged)\ndaemon: \(daemon.stderr)")
        let moved = support.wait({ streams() }) { $0 == "headphones,headphones" }
        #expect(moved == "headphones,headphones", "the stream that follows the default did not move: \(moved)")
        #expect(daemon.stderr.contains("the server's defaults follow the route"), "\(daemon.stderr)")
        #expect(daemon.stderr.contains("PulseAudio helper connected"), "\(daemon.stderr)")
        let status = try testbed.run(["status", "--bus-address", bench.bus.address]).stdout
        #expect(status.contains("Server defaults: PulseAudio's default sink follows the route: \(IDs.usbOut) is node 1 \"headphones\""), "\(status)")
        #expect(status.contains("(alsaCardAndDevice: alsa.card 2, alsa.device 0)"), "\(status)")

        // Unplugged: back to the speaker, the stream that follows the default too; the pinned one stays.
        try testbed.send("unplug \(IDs.headsetUSB)")
        let back = support.wait({ defaultSink() }) { $0 == "speaker\n" }
        #expect(back == "speaker\n", "\(back)")
        let after = support.wait({ streams() }) { $0 == "speaker,headphones" }
        #expect(after == "speaker,headphones", "the following stream back on the speaker, the pinned one on the headphones: \(after)")

        // The server stops: so does the helper, and status says why the defaults no longer follow.
        player.kill()
        pinned.kill()
        bench.stopServers()
        let none = support.wait(seconds: 15, { "\(helpers())" }) { $0 == "[]" }
        #expect(none == "[]", "the helper outlived the server: \(none)")
        let stopped = support.wait({ (try? testbed.run(["status", "--bus-address", bench.bus.address]).stdout) ?? "" }) {
            $0.contains("Server defaults: the sound server is neither PipeWire nor PulseAudio")
        }
        #expect(stopped.contains("Server defaults: the sound server is neither PipeWire nor PulseAudio"), "\(stopped)")

        // The daemon stops its helper as it stops: nothing of ours is left with the bench's runtime directory.
        #expect(try daemon.stop(SIGTERM) == 0)
        let left = support.wait({ bench.processesLeft().isEmpty ? "clean" : "\(bench.processesLeft())" }) { $0 == "clean" }
        #expect(left == "clean", "left running: \(left)")
    }
}
