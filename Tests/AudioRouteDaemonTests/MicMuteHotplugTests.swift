import AudioRouteCore
import Foundation
import Testing

/// The built-in mic's hardware mute through the real audiorouted under umockdev: the laptop's
/// card gets an emulated control device (share/demo/emitter.py, "ControlDevice") with a
/// `Capture Switch`; flipping it (as a mic-mute key does through PipeWire) interrupts an
/// `audioroute session` recording from the built-in mic with builtInMicMuted, and switching it
/// back on ends the interruption with shouldResume.
@Suite(.serialized) struct MicMuteHotplugTests {
    static var daemonBinary: String { (UmockdevTestbed.binary as NSString).deletingLastPathComponent + "/audiorouted" }
    static let captureSwitch = 5

    /// The laptop record with its card's control device emulated: no jack controls, a stereo
    /// `Capture Switch` on, as HDA makes it.
    static func loadLaptopWithCaptureSwitch(_ bench: UmockdevTestbed) throws {
        let card: [String: Any] = [
            "control": "/dev/snd/controlC0", "card": 0,
            "info": ["id": "Intel", "driver": "HDA-Intel", "name": "HDA Intel PCH"],
            "controls": [["numid": captureSwitch, "iface": "mixer", "name": "Capture Switch", "type": "boolean", "access": "read write", "values": [1, 1]]],
        ]
        let path = bench.scratchDirectory + "/control.json"
        try JSONSerialization.data(withJSONObject: ["cards": [card]]).write(to: URL(fileURLWithPath: path))
        try bench.send("alsa \(path)")
        try bench.loadLaptop()
    }

    @Test func theCaptureSwitchInterruptsARecordingSessionAndItsReturnEndsIt() throws {
        let bus = try PrivateBus()
        defer { bus.close() }
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        try Self.loadLaptopWithCaptureSwitch(bench)
        let state = bench.root + "/scratch/daemon"
        let daemon = try bench.start(
            ["--state-dir", state + "/state", "--runtime-dir", state + "/run", "--log-level", "info"] + UmockdevTestbed.noUCMHelper, binary: Self.daemonBinary,
            environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer { _ = try? daemon.stop(SIGTERM) }
        let address = ["--bus-address", bus.address]
        var ready = false
        for _ in 0..<200 where !ready {
            ready = try bench.run(["status", "--json"] + address).status == 0
            if !ready { usleep(50_000) }
        }
        try #require(ready, "stderr: \(daemon.stderr)")

        let recorder = try bench.start(["session", "--category", "record", "--activate"] + address + ["--", "/bin/sleep", "30"])
        var inputs: [String] = []
        for _ in 0..<200 where inputs != [IDs.mic] {
            let route = try JSON.parse(try bench.run(["status", "--json"] + address).stdout)["route"]
            if case .array(let ports)? = route?["inputs"] { inputs = ports.compactMap { $0["uid"]?.string } }
            if inputs != [IDs.mic] { usleep(50_000) }
        }
        try #require(inputs == [IDs.mic], "the recorder's inputs: \(inputs); daemon: \(daemon.stderr)")

        try bench.send("ctljack /dev/snd/controlC0 \(Self.captureSwitch) 0,0")
        try recorder.waitForStderr("interruption began (builtInMicMuted)")
        try daemon.waitForStderr("built-in mic muted by the hardware")
        try bench.send("ctljack /dev/snd/controlC0 \(Self.captureSwitch) 1,1")
        try recorder.waitForStderr("interruption ended shouldResume")
        #expect(try recorder.stop(SIGTERM) == 128 + SIGTERM)
    }
}
