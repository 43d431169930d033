import AudioRouteCore
import Foundation
import Testing

/// `audioroute --direct` runs the udev and BlueZ watchers side by side: the built
/// binary, under umockdev, with its system bus pointed at python-dbusmock's bluez5.
@Suite(.serialized) struct DirectBluezEndToEndTests {
    static let address = "00:11:22:33:44:55"
    static let a2dp = "bt:\(address):a2dp"
    static let hfp = "bt:\(address):hfp"

    @Test func portsListsSoundCardsAndBluetoothHeadsetsTogether() async throws {
        try await withBluezTestbed(startWatcher: false) { bluez in
            _ = try bluez.addAdapter()
            _ = try bluez.addDevice(Self.address, alias: "Travel Headset")
            try bluez.connectHeadset(Self.address, uuids: [BluezTestbed.a2dp, BluezTestbed.hfp])

            let umock = try UmockdevTestbed()
            defer { umock.close() }
            umock.systemBus = bluez.bus.address
            try umock.loadLaptop()
            let result = try umock.run(["ports", "--direct", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            guard case .array(let ports) = try JSON.parse(result.stdout) else {
                Issue.record("not an array: \(result.stdout)")
                return
            }
            let byUID = Dictionary(uniqueKeysWithValues: ports.map { ($0["uid"]?.string ?? "?", $0) })
            // The laptop's jacks are readable and empty: their ports are listed, unavailable.
            #expect(Set(byUID.keys) == [IDs.speaker, IDs.mic, IDs.headphones, IDs.headsetMic, "pci-0000:00:1b.0/line-out", Self.a2dp, Self.hfp])
            #expect(Set(byUID.filter { $0.value["availability"]?.string == "available" }.keys) == [IDs.speaker, IDs.mic, Self.a2dp, Self.hfp])
            #expect(byUID[Self.a2dp]?["alsa"]?.string == "bluealsa:DEV=\(Self.address),PROFILE=a2dp")
            #expect(byUID[Self.hfp]?["alsa"]?.string == "bluealsa:DEV=\(Self.address),PROFILE=sco")
            #expect(byUID[Self.hfp]?["direction"]?.string == "duplex")
            #expect(byUID[Self.a2dp]?["name"]?.string == "Travel Headset")
        }
    }

    @Test func withoutASystemBusTheSoundCardsStillListAndBluetoothIsReportedPlainly() throws {
        let umock = try UmockdevTestbed()
        defer { umock.close() }
        try umock.loadLaptop()
        let result = try umock.run(["ports", "--direct", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        guard case .array(let ports) = try JSON.parse(result.stdout) else {
            Issue.record("not an array: \(result.stdout)")
            return
        }
        let available = ports.filter { $0["availability"]?.string == "available" }
        #expect(Set(available.compactMap { $0["uid"]?.string }) == [IDs.speaker, IDs.mic])
        // The rest are the laptop's empty jacks, unavailable.
        let rest = ports.filter { $0["availability"]?.string != "available" }
        #expect(Set(rest.compactMap { "\($0["uid"]?.string ?? "?") \($0["availability"]?.string ?? "?")" }) == [
            "\(IDs.headphones) unavailable", "\(IDs.headsetMic) unavailable", "pci-0000:00:1b.0/line-out unavailable",
        ])
        #expect(result.stderr.contains("bluez"), "\(result.stderr)")
        #expect(result.stderr.contains("system bus"), "\(result.stderr)")
    }

    @Test func monitorFollowsAHeadsetConnectingAndLeaving() async throws {
        try await withBluezTestbed(startWatcher: false) { bluez in
            _ = try bluez.addAdapter()
            _ = try bluez.addDevice(Self.address, alias: "Travel Headset")

            let umock = try UmockdevTestbed()
            defer { umock.close() }
            umock.systemBus = bluez.bus.address
            try umock.loadLaptop()
            let monitor = try umock.monitor(category: "playback", options: "allowBluetoothA2DP", initialLines: 3)
            // Whether the watcher sees the connection in its enumeration or as a signal,
            // the monitor reports the same two events.

            try bluez.connectHeadset(Self.address, uuids: [BluezTestbed.a2dp])
            var objects = try monitor.waitForLines(5)
            #expect(Array(objects[3...].map(MonitorEvent.init)) == [
                MonitorEvent("portAdded", "newDeviceAvailable", uid: Self.a2dp, outputs: [Self.a2dp]),
                MonitorEvent("routeChange", "newDeviceAvailable", outputs: [Self.a2dp]),
            ])

            try bluez.disconnect(Self.address)
            objects = try monitor.waitForLines(7)
            #expect(MonitorEvent(objects[5]).event == "portRemoved")
            #expect(MonitorEvent(objects[5]).uid == Self.a2dp)
            #expect(MonitorEvent(objects[6]).reason == "oldDeviceUnavailable")
            #expect(MonitorEvent(objects[6]).outputs == [IDs.speaker])
            #expect(try monitor.stop() == 0)
        }
    }
}
