// With BlueALSA (org.bluealsa) on the bus, its PCM list decides which A2DP/HFP
// ports can be opened. A dbusmock template stands in for bluealsad.

import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Testing

@Suite("BlueZ watcher with BlueALSA", .serialized)
struct BluezBluealsaTests {
    static let headset = "00:11:22:33:44:55"
    static let uid = "bt:00:11:22:33:44:55"
    static let device = BluezTestbed.devicePath("hci0", headset)

    func pcm(_ bench: BluezTestbed, _ name: String, transport: String, mode: String = "sink") throws {
        try bench.bus.send([
            "cmd": "bluealsa_pcm", "path": "/org/bluealsa/hci0/dev_00_11_22_33_44_55/\(name)", "device": Self.device,
            "transport": transport, "mode": mode,
        ])
    }

    @Test("BlueALSA's PCMs are the truth for A2DP/HFP; without BlueALSA, BlueZ alone decides")
    func pcmsDecide() async throws {
        try await withBluezTestbed { bench in
            try bench.addAdapter()
            try bench.addDevice(Self.headset, alias: "H")
            try bench.connectHeadset(Self.headset, uuids: [BluezTestbed.a2dp, BluezTestbed.hfp])
            try await bench.until("BlueZ's ports") { bench.uids($0) == [Self.uid + ":a2dp", Self.uid + ":hfp"] }

            // BlueALSA appears with no PCM for the headset: nothing can be opened.
            try bench.bus.send(["cmd": "start_bluealsa"])
            try await bench.until("ports withdrawn") { bench.uids($0).isEmpty }

            // A phone-side PCM (we would receive audio) is not an output port.
            try pcm(bench, "a2dpsnk/source", transport: "A2DP-sink", mode: "source")
            try pcm(bench, "a2dpsrc/sink", transport: "A2DP-source")
            try await bench.until("A2DP PCM") { bench.uids($0) == [Self.uid + ":a2dp"] }
            try pcm(bench, "hfpag/sink", transport: "HFP-AG")
            try pcm(bench, "hfpag/source", transport: "HFP-AG", mode: "source")
            try await bench.until("HFP PCM") { bench.uids($0) == [Self.uid + ":a2dp", Self.uid + ":hfp"] }
            #expect(try bench.setCategory(.playAndRecord, options: .allowBluetooth) == Route(inputs: [Self.uid + ":hfp"], outputs: [Self.uid + ":hfp"]))

            // BlueALSA drops its A2DP PCM: the A2DP port goes.
            try bench.bus.send(["cmd": "bluealsa_pcm_remove", "path": "/org/bluealsa/hci0/dev_00_11_22_33_44_55/a2dpsrc/sink"])
            try await bench.until("A2DP PCM gone") { bench.uids($0) == [Self.uid + ":hfp"] }

            // BlueALSA stops: back to what BlueZ says.
            try bench.bus.send(["cmd": "stop_bluealsa"])
            try await bench.until("BlueZ alone") { bench.uids($0) == [Self.uid + ":a2dp", Self.uid + ":hfp"] }
        }
    }

    @Test("BlueALSA present before the watcher starts is enumerated")
    func enumeratedAtStart() async throws {
        try await withBluezTestbed(startWatcher: false) { bench in
            try bench.addAdapter()
            try bench.addDevice(Self.headset, alias: "H")
            try bench.connectHeadset(Self.headset, uuids: [BluezTestbed.a2dp, BluezTestbed.hfp])
            try bench.bus.send(["cmd": "start_bluealsa"])
            try pcm(bench, "hfpag/sink", transport: "HFP-AG")
            try await bench.startWatcher()
            try await bench.until("HFP only") { bench.uids($0) == [Self.uid + ":hfp"] }
            #expect(bench.delivered.events.count == 1)
        }
    }
}
