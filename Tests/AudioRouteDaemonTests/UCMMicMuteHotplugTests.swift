import AudioRouteCore
import Foundation
import Testing

/// A UCM card's built-in mic mute through the real audiorouted and the real `audioroute-ucm`: the
/// HP ProBook 440 G8's sof-hda-dsp card under umockdev (its control device emulated, with the
/// `Dmic0 Capture Switch` the SOF DMIC has), whose profile the helper opens on the UCM bench's
/// fake card of the same identity (Tests/Fixtures/ucm2/cards/sofhdadsp-card.conf) with
/// alsa-ucm-conf's stock files: the DMIC (`Mic1`) names `CaptureSwitch "Dmic0 Capture Switch"`
/// (Intel/sof-hda-dsp/HiFi.conf). Turning that control off under an `audioroute session`
/// recording from the built-in mic interrupts it with builtInMicMuted; on again ends it.
@Suite(.serialized) struct UCMMicMuteHotplugTests {
    static var daemonBinary: String { (UmockdevTestbed.binary as NSString).deletingLastPathComponent + "/audiorouted" }
    static var helperBinary: String { (UmockdevTestbed.binary as NSString).deletingLastPathComponent + "/audioroute-ucm" }
    static let fixture = "laptop-hp-probook-440g8-sof-hda-dsp"
    static let mic = "pci-0000:00:1f.3-platform-skl_hda_dsp_generic/mic"
    static let dmicSwitch = 40

    /// The ProBook's record, its control device with `controls` added.
    static func load(_ bench: UmockdevTestbed, controls: [[String: Any]]) throws {
        let source = UmockdevTestbed.fixtures + "/" + fixture
        let target = bench.scratchDirectory + "/" + fixture
        try FileManager.default.copyItem(atPath: source + ".umockdev", toPath: target + ".umockdev")
        var alsa = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: source + ".alsa.json"))) as? [String: Any])
        var cards = try #require(alsa["cards"] as? [[String: Any]])
        cards[0]["controls"] = controls
        alsa["cards"] = cards
        try JSONSerialization.data(withJSONObject: alsa).write(to: URL(fileURLWithPath: target + ".alsa.json"))
        try bench.send("load \(target).umockdev")
    }

    @Test func theDMICsCaptureSwitchInterruptsARecordingSessionAndItsReturnEndsIt() throws {
        // The fake card answers as card 0, the number the ProBook's record gives its card (the
        // daemon opens the profile as hw:0).
        let numbers = try makeTemporaryDirectory()
        defer { removeTree(numbers) }
        try "audioroute_fakecard.sofhdadsp.number 0\n".write(toFile: numbers + "/numbers.conf", atomically: true, encoding: .utf8)
        let ucm = try UCMMachineBench(
            cardFiles: [Subprocess.packageRoot + "/Tests/Fixtures/ucm2/cards/sofhdadsp-card.conf", numbers + "/numbers.conf"], states: ["sofhdadsp"])
        let bus = try PrivateBus()
        defer { bus.close() }
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        try Self.load(bench, controls: [
            ["numid": Self.dmicSwitch, "iface": "mixer", "name": "Dmic0 Capture Switch", "type": "boolean", "access": "read write", "values": [1, 1]]
        ])
        let state = bench.root + "/scratch/daemon"
        let daemon = try bench.start(
            ["--state-dir", state + "/state", "--runtime-dir", state + "/run", "--ucm-root", ucm.environment["ALSA_CONFIG_UCM2"] ?? "",
             "--ucm-helper", Self.helperBinary, "--log-level", "debug"],
            binary: Self.daemonBinary, environment: ucm.environment.merging(["DBUS_SESSION_BUS_ADDRESS": bus.address]) { _, new in new })
        defer { _ = try? daemon.stop(SIGTERM) }
        let address = ["--bus-address", bus.address]
        var ready = false
        for _ in 0..<200 where !ready {
            ready = try bench.run(["status", "--json"] + address).status == 0
            if !ready { usleep(50_000) }
        }
        try #require(ready, "stderr: \(daemon.stderr)")

        let recorder = try bench.start(["session", "--category", "record", "--activate"] + address + ["--", "/bin/sleep", "30"])
        defer { _ = try? recorder.stop(SIGKILL) }
        var inputs: [String] = []
        for _ in 0..<200 where inputs != [Self.mic] {
            let route = try JSON.parse(try bench.run(["status", "--json"] + address).stdout)["route"]
            if case .array(let ports)? = route?["inputs"] { inputs = ports.compactMap { $0["uid"]?.string } }
            if inputs != [Self.mic] { usleep(50_000) }
        }
        try #require(inputs == [Self.mic], "the recorder's inputs: \(inputs); daemon: \(daemon.stderr)")
        // The helper enabled the DMIC (HiFi's Mic1) and said so: its switch is the mic's mute from now on.
        try daemon.waitForStderr("Mic1]")

        try bench.send("ctljack /dev/snd/controlC0 \(Self.dmicSwitch) 0,0")
        try recorder.waitForStderr("interruption began (builtInMicMuted)")
        try daemon.waitForStderr("built-in mic muted by the hardware")
        try bench.send("ctljack /dev/snd/controlC0 \(Self.dmicSwitch) 1,1")
        try recorder.waitForStderr("interruption ended shouldResume")
        #expect(try recorder.stop(SIGTERM) == 128 + SIGTERM)
    }
}
