// The real BluezWatcher (sd-bus) against python-dbusmock's bluez5 template on a
// private system bus. Each test starts and stops its own bus and mock.

import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Synchronization
import Testing

extension AudioRouteCore.Port {
    /// As the watcher reports it: the tower numbers arrivals.
    var unsequenced: Self {
        var port = self
        port.sequence = 0
        return port
    }
}

@Suite("BlueZ watcher against dbusmock", .serialized)
struct BluezWatcherTests {
    static let headset = "00:11:22:33:44:55"
    static let headsetUID = "bt:00:11:22:33:44:55"
    static let second = "66:77:88:99:AA:BB"
    static let secondUID = "bt:66:77:88:99:AA:BB"

    @Test("a headset with A2DP and HFP gives an A2DP output and a duplex HFP port, routed per category")
    func headsetPortsAndRoutes() async throws {
        try await withBluezTestbed { bench in
            try bench.addAdapter()
            try bench.addDevice(Self.headset, alias: "My Headset")
            // Added but not connected: no ports.
            try bench.connectHeadset(Self.headset, uuids: [BluezTestbed.a2dp, BluezTestbed.hfp, BluezTestbed.hsp])
            try await bench.until("the headset's ports") { bench.uids($0) == [Self.headsetUID + ":a2dp", Self.headsetUID + ":hfp"] }

            let ports = bench.delivered.bluetoothPorts
            let a2dp = try #require(ports.first { $0.type == .bluetoothA2DP })
            let hfp = try #require(ports.first { $0.type == .bluetoothHFP })
            #expect(a2dp.direction == .output)
            #expect(hfp.direction == .duplex)
            #expect(a2dp.device == Self.headsetUID && hfp.device == Self.headsetUID)
            #expect(a2dp.name == "My Headset" && hfp.name == "My Headset")
            #expect(a2dp.alsa == "bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp")
            #expect(hfp.alsa == "bluealsa:DEV=00:11:22:33:44:55,PROFILE=sco")
            // The device arrived with all its ports at once.
            #expect(bench.delivered.events.first == .added(ports.map(\.unsequenced)))

            // Default session (soloAmbient) and playback: A2DP.
            #expect(bench.delivered.tower.route == Route(inputs: [], outputs: [a2dp.uid]))
            #expect(try bench.setCategory(.playback) == Route(inputs: [], outputs: [a2dp.uid]))
            // playAndRecord without Bluetooth options: built-in.
            #expect(try bench.setCategory(.playAndRecord) == Route(inputs: ["mic"], outputs: ["spk"]))
            // allowBluetooth: HFP both ways, one uid (as iOS reports it).
            #expect(try bench.setCategory(.playAndRecord, options: .allowBluetooth) == Route(inputs: [hfp.uid], outputs: [hfp.uid]))
            // allowBluetoothA2DP only: A2DP out, built-in mic in.
            #expect(try bench.setCategory(.playAndRecord, options: .allowBluetoothA2DP) == Route(inputs: ["mic"], outputs: [a2dp.uid]))
            // Both: HFP wins on one device (the session needs a duplex link).
            #expect(
                try bench.setCategory(.playAndRecord, options: [.allowBluetooth, .allowBluetoothA2DP])
                    == Route(inputs: [hfp.uid], outputs: [hfp.uid]))

            // Disconnect: ports go, the route falls back with oldDeviceUnavailable.
            try bench.disconnect(Self.headset)
            try await bench.until("the ports to go") { bench.uids($0).isEmpty }
            #expect(bench.delivered.tower.route == Route(inputs: ["mic"], outputs: ["spk"]))
            #expect(bench.delivered.changes.last?.reason == .oldDeviceUnavailable)

            // Reconnect: the same uids come back, as a new arrival.
            try bench.connectHeadset(Self.headset, uuids: [BluezTestbed.a2dp, BluezTestbed.hfp])
            try await bench.until("the ports to return") { bench.uids($0) == [Self.headsetUID + ":a2dp", Self.headsetUID + ":hfp"] }
            #expect(bench.delivered.tower.route == Route(inputs: [hfp.uid], outputs: [hfp.uid]))
            #expect(bench.delivered.changes.last?.reason == .newDeviceAvailable)
        }
    }

    @Test("ports exist only while connected with services resolved")
    func needsServicesResolved() async throws {
        try await withBluezTestbed { bench in
            try bench.addAdapter()
            let path = try bench.addDevice(Self.headset, alias: "H")
            try bench.setProperties(path, ["UUIDs": ["as", [BluezTestbed.a2dp]], "Connected": ["b", true]])
            try bench.setProperties(path, ["Alias": ["s", "Renamed"]])
            // Barrier: a second device that resolves; the first must still have nothing.
            try bench.addDevice(Self.second, alias: "S")
            try bench.connectHeadset(Self.second, uuids: [BluezTestbed.a2dp])
            try await bench.until("the second device") { bench.uids($0) == [Self.secondUID + ":a2dp"] }
            try bench.setProperties(path, ["ServicesResolved": ["b", true]])
            try await bench.until("the first device") { bench.uids($0).contains(Self.headsetUID + ":a2dp") }
            #expect(bench.delivered.bluetoothPorts.first { $0.uid == Self.headsetUID + ":a2dp" }?.name == "Renamed")
        }
    }

    @Test("two headsets connect one after the other: last in wins")
    func lastInWins() async throws {
        try await withBluezTestbed { bench in
            try bench.addAdapter()
            try bench.addDevice(Self.headset, alias: "First")
            try bench.addDevice(Self.second, alias: "Second")
            try bench.connectHeadset(Self.headset, uuids: [BluezTestbed.a2dp, BluezTestbed.hfp])
            try await bench.until("first") { bench.uids($0).count == 2 }
            #expect(try bench.setCategory(.playback) == Route(outputs: [Self.headsetUID + ":a2dp"]))
            try bench.connectHeadset(Self.second, uuids: [BluezTestbed.a2dp, BluezTestbed.hfp])
            try await bench.until("second") { bench.uids($0).count == 4 }
            #expect(bench.delivered.tower.route == Route(outputs: [Self.secondUID + ":a2dp"]))
            #expect(bench.delivered.changes.last?.reason == .newDeviceAvailable)
            #expect(
                try bench.setCategory(.playAndRecord, options: .allowBluetooth)
                    == Route(inputs: [Self.secondUID + ":hfp"], outputs: [Self.secondUID + ":hfp"]))
            // The second goes: back to the first.
            try bench.disconnect(Self.second)
            try await bench.until("second gone") { bench.uids($0).count == 2 }
            #expect(bench.delivered.tower.route == Route(inputs: [Self.headsetUID + ":hfp"], outputs: [Self.headsetUID + ":hfp"]))
        }
    }

    @Test("MediaTransport1 added and removed refines the device's ports")
    func transports() async throws {
        try await withBluezTestbed { bench in
            try bench.addAdapter()
            let device = try bench.addDevice(Self.headset, alias: "H")
            try bench.connectHeadset(Self.headset, uuids: [BluezTestbed.a2dp])
            try await bench.until("A2DP only") { bench.uids($0) == [Self.headsetUID + ":a2dp"] }
            // An HFP transport proves the profile even though the UUIDs did not list it. Its UUID is the
            // local role, HFP AG (111f): this machine is the gateway, the headset is the port.
            let sco = device + "/sco0"
            try bench.addObject(
                sco, interface: "org.bluez.MediaTransport1",
                ["Device": ["o", device], "UUID": ["s", "0000111F-0000-1000-8000-00805F9B34FB"], "State": ["s", "idle"]])
            try await bench.until("HFP from the transport") { bench.uids($0).contains(Self.headsetUID + ":hfp") }
            #expect(try bench.setCategory(.playAndRecord, options: .allowBluetooth).outputs == [Self.headsetUID + ":hfp"])
            try bench.setProperties(sco, ["State": ["s", "active"]], interface: "org.bluez.MediaTransport1")
            try bench.removeObject(sco, interface: "org.bluez.MediaTransport1")
            try await bench.until("HFP gone with its transport") { bench.uids($0) == [Self.headsetUID + ":a2dp"] }
            #expect(bench.delivered.tower.route == Route(inputs: ["mic"], outputs: ["spk"]))
            #expect(bench.delivered.changes.last?.reason == .oldDeviceUnavailable)
        }
    }

    @Test("HFP connecting and dropping on a headset in the route moves the input from the built-in mic and back")
    func hfpTakingTheInputIsANewDevice() async throws {
        try await withBluezTestbed { bench in
            try bench.addAdapter()
            let device = try bench.addDevice(Self.headset, alias: "H")
            try bench.connectHeadset(Self.headset, uuids: [BluezTestbed.a2dp])
            try await bench.until("A2DP only") { bench.uids($0) == [Self.headsetUID + ":a2dp"] }
            #expect(
                try bench.setCategory(.playAndRecord, options: [.allowBluetooth, .allowBluetoothA2DP])
                    == Route(inputs: ["mic"], outputs: [Self.headsetUID + ":a2dp"]))
            let sco = device + "/sco0"
            try bench.addObject(
                sco, interface: "org.bluez.MediaTransport1",
                ["Device": ["o", device], "UUID": ["s", "0000111F-0000-1000-8000-00805F9B34FB"], "State": ["s", "idle"]])
            try await bench.until("HFP from the transport") { bench.uids($0).contains(Self.headsetUID + ":hfp") }
            #expect(bench.delivered.tower.route == Route(inputs: [Self.headsetUID + ":hfp"], outputs: [Self.headsetUID + ":hfp"]))
            // The route's devices go from {headset, built-in} to {headset}: not the same,
            // so a new device, then an old one (docs/decisions.md, profile switches).
            #expect(bench.delivered.changes.last?.reason == .newDeviceAvailable)
            try bench.removeObject(sco, interface: "org.bluez.MediaTransport1")
            try await bench.until("HFP gone with its transport") { bench.uids($0) == [Self.headsetUID + ":a2dp"] }
            #expect(bench.delivered.tower.route == Route(inputs: ["mic"], outputs: [Self.headsetUID + ":a2dp"]))
            #expect(bench.delivered.changes.last?.reason == .oldDeviceUnavailable)
        }
    }

    @Test("an LE Audio device's direction follows its transports (an update, same uid)")
    func leAudioTransports() async throws {
        try await withBluezTestbed { bench in
            try bench.addAdapter()
            let device = try bench.addDevice(Self.headset, alias: "Buds")
            try bench.connectHeadset(Self.headset, uuids: [BluezTestbed.pacs])
            try await bench.until("LE port") { bench.uids($0) == [Self.headsetUID + ":le"] }
            #expect(bench.delivered.bluetoothPorts.first?.direction == .duplex)
            #expect(bench.delivered.bluetoothPorts.first?.type == .bluetoothLE)
            try bench.addObject(
                device + "/fd0", interface: "org.bluez.MediaTransport1",
                ["Device": ["o", device], "UUID": ["s", BluetoothUUID.pacSink], "State": ["s", "idle"]])
            try await bench.until("LE sink only") { $0.bluetoothPorts.first?.direction == .output }
            #expect(bench.delivered.events.last == .updated(bench.delivered.bluetoothPorts[0].unsequenced))
            #expect(bench.delivered.events.count == 2)
            try bench.addObject(
                device + "/fd1", interface: "org.bluez.MediaTransport1",
                ["Device": ["o", device], "UUID": ["s", BluetoothUUID.pacSource], "State": ["s", "idle"]])
            try await bench.until("LE both ways") { $0.bluetoothPorts.first?.direction == .duplex }
        }
    }

    @Test("transports carry this machine's role: A2DP source (110a) makes an output, A2DP sink (110b) does not")
    func transportsNameTheLocalRole() async throws {
        try await withBluezTestbed { bench in
            try bench.addAdapter()
            // A headset whose A2DP service is not (yet) in its UUIDs: the computer's transport, 110a as
            // real bluetoothd 5.66 exports it in the real-kernel guest (issue 18), gives the A2DP port.
            let device = try bench.addDevice(Self.headset, alias: "H")
            try bench.connectHeadset(Self.headset, uuids: [BluezTestbed.hfp])
            try await bench.until("HFP only") { bench.uids($0) == [Self.headsetUID + ":hfp"] }
            let transport = try bench.addTransport(device: device, uuid: BluezTestbed.localA2DPSource)
            try await bench.until("A2DP from the 110a transport") { bench.uids($0) == [Self.headsetUID + ":a2dp", Self.headsetUID + ":hfp"] }
            // A phone playing to us (car kit): it offers A2DP source and HFP gateway, and our transport
            // is A2DP sink. Audio comes in: no port, and a debug line says why.
            let phone = try bench.addDevice(Self.second, alias: "Phone")
            try bench.connectHeadset(
                Self.second, uuids: [BluetoothUUID.a2dpSource, BluetoothUUID.handsFreeAudioGateway], cls: 0x5A020C)
            try bench.addTransport(device: phone, uuid: BluezTestbed.localA2DPSink)
            try bench.addTransport(device: phone, uuid: BluezTestbed.localHandsFree, name: "sco0")
            try bench.removeObject(transport, interface: "org.bluez.MediaTransport1")
            try await bench.until("A2DP gone with its transport") { bench.uids($0) == [Self.headsetUID + ":hfp"] }
            #expect(bench.logs.count(containing: "is a local receiving role") == 2)
            #expect(!bench.delivered.events.contains { "\($0)".contains(Self.secondUID) })
        }
    }

    @Test("two local controllers: the machine as its other controller sees it gives no ports; the headset keeps its own")
    func selfDeviceOfALocalController() async throws {
        try await withBluezTestbed { bench in
            // Real bluetoothd 5.66 with btvirt's linked hci0 and hci1 (issue 18): one bluetoothd, and
            // hci1 (the headset side) shows hci0 as a connected Device1.
            try bench.addAdapter("hci0")
            try bench.addAdapter("hci1")
            let computer = try bench.adapterAddress("hci0"), headset = try bench.adapterAddress("hci1")
            #expect(computer != headset)
            let selfDevice = try bench.addDevice(computer, alias: "audioroute-test", adapter: "hci1")
            try bench.connectHeadset(computer, uuids: [BluezTestbed.a2dp, BluezTestbed.hfp], adapter: "hci1")
            // The headset side's own A2DP sink transport, and the computer's source one.
            try bench.addTransport(device: selfDevice, uuid: BluezTestbed.localA2DPSink)
            let device = try bench.addDevice(headset, alias: "Virtual Headset", adapter: "hci0")
            try bench.connectHeadset(headset, uuids: [BluezTestbed.a2dp, BluezTestbed.hfp], adapter: "hci0")
            try bench.addTransport(device: device, uuid: BluezTestbed.localA2DPSource)
            try await bench.until("the headset's ports") { bench.uids($0) == ["bt:\(headset):a2dp", "bt:\(headset):hfp"] }
            // A barrier: a rename of the self device is handled after everything above.
            try bench.setProperties(selfDevice, ["Alias": ["s", "renamed"]])
            try bench.setProperties(device, ["Alias": ["s", "Barrier"]])
            try await bench.until("barrier") { $0.bluetoothPorts.allSatisfy { $0.name == "Barrier" } }
            #expect(bench.uids(bench.delivered) == ["bt:\(headset):a2dp", "bt:\(headset):hfp"])
            #expect(!bench.delivered.events.contains { "\($0)".contains("bt:\(computer)") })
            #expect(try bench.setCategory(.playback) == Route(outputs: ["bt:\(headset):a2dp"]))
        }
    }

    @Test("bluetoothd stops: every Bluetooth port goes; it returns: ports come back")
    func mockRestart() async throws {
        try await withBluezTestbed { bench in
            try bench.addAdapter()
            try bench.addDevice(Self.headset, alias: "H")
            try bench.connectHeadset(Self.headset, uuids: [BluezTestbed.a2dp, BluezTestbed.hfp])
            try await bench.until("ports") { bench.uids($0).count == 2 }
            try bench.bus.send(["cmd": "kill_mock"])
            try await bench.until("ports gone with bluetoothd") { bench.uids($0).isEmpty }
            #expect(bench.delivered.changes.last?.reason == .oldDeviceUnavailable)
            #expect(bench.delivered.tower.route == Route(outputs: ["spk"]))
            try bench.bus.send(["cmd": "start_mock"])
            try bench.addAdapter()
            try bench.addDevice(Self.headset, alias: "H")
            try bench.connectHeadset(Self.headset, uuids: [BluezTestbed.a2dp, BluezTestbed.hfp])
            try await bench.until("ports back") { bench.uids($0).count == 2 }
            #expect(bench.delivered.tower.route == Route(outputs: [Self.headsetUID + ":a2dp"]))
        }
    }

    @Test("the watcher starts without bluetoothd and picks it up when it appears")
    func startsWithoutBluez() async throws {
        try await withBluezTestbed(startWatcher: false) { bench in
            try bench.bus.send(["cmd": "kill_mock"])
            try await bench.startWatcher()
            try bench.bus.send(["cmd": "start_mock"])
            try bench.addAdapter()
            try bench.addDevice(Self.headset, alias: "H")
            try bench.connectHeadset(Self.headset, uuids: [BluezTestbed.a2dp])
            try await bench.until("ports") { bench.uids($0).count == 1 }
        }
    }

    @Test("an adapter that goes takes its devices' ports with it")
    func adapterRemoved() async throws {
        try await withBluezTestbed { bench in
            try bench.addAdapter()
            try bench.addDevice(Self.headset, alias: "H")
            try bench.connectHeadset(Self.headset, uuids: [BluezTestbed.a2dp])
            try await bench.until("ports") { bench.uids($0).count == 1 }
            try bench.bus.send(["cmd": "remove_adapter", "name": "hci0"])
            try await bench.until("ports gone") { bench.uids($0).isEmpty }
        }
    }

    @Test("the bus itself goes away: every port goes and the event sequence ends")
    func busLost() async throws {
        try await withBluezTestbed { bench in
            try bench.addAdapter()
            try bench.addDevice(Self.headset, alias: "H")
            try bench.connectHeadset(Self.headset, uuids: [BluezTestbed.a2dp])
            try await bench.until("ports") { bench.uids($0).count == 1 }
            try bench.bus.send(["cmd": "kill_bus"])
            try await bench.until("ports gone with the bus") { bench.uids($0).isEmpty }
            try await bench.untilFinished()
            #expect(bench.logs.count(containing: "bluez:") >= 1)
        }
    }

    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        func withLock<R: Sendable>(_ body: (inout [String]) -> R) -> R { lines.withLock { body(&$0) } }
    }

    /// Runs the watcher with both callbacks; `log` gets "added UIDS", "removed UIDS",
    /// "updated UID" and "enumerated", in the order they came.
    private static func runLogged(_ watcher: BluezWatcher, into log: Lines) -> Task<Void, any Error> {
        Task {
            try await watcher.run(
                deliver: { event in
                    let line: String
                    switch event {
                    case .added(let ports): line = "added " + ports.map(\.uid).sorted().joined(separator: ",")
                    case .removed(let uids): line = "removed " + uids.sorted().joined(separator: ",")
                    case .updated(let port): line = "updated " + port.uid
                    case .inputMuted(let device, let muted): line = (muted ? "muted " : "unmuted ") + device
                    }
                    log.withLock { $0.append(line) }
                },
                enumerated: { log.withLock { $0.append("enumerated") } })
        }
    }

    private static func until(_ log: Lines, count: Int) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while log.withLock({ $0.count }) < count {
            if clock.now >= deadline { throw TestbedError(description: "log: \(log.withLock { $0 })") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    @Test("BlueZ's objects present at start are enumerated (GetManagedObjects), then the marker, then later devices")
    func enumerationMarker() async throws {
        try await withBluezTestbed(startWatcher: false) { bench in
            try bench.addAdapter()
            try bench.addDevice(Self.headset, alias: "Early")
            try bench.connectHeadset(Self.headset, uuids: [BluezTestbed.hsp])
            let log = Lines()
            let task = Self.runLogged(bench.watcher, into: log)
            defer { task.cancel() }
            try await Self.until(log, count: 2)
            try bench.addDevice(Self.second, alias: "Late")
            try bench.connectHeadset(Self.second, uuids: [BluezTestbed.hsp])
            try await Self.until(log, count: 3)
            #expect(log.withLock { $0 } == ["added \(Self.headsetUID):hfp", "enumerated", "added \(Self.secondUID):hfp"])
        }
    }

    @Test("without bluetoothd the enumeration is done at once: there is nothing to wait for")
    func enumerationMarkerWithoutBluez() async throws {
        try await withBluezTestbed(startWatcher: false) { bench in
            try bench.bus.send(["cmd": "kill_mock"])
            let log = Lines()
            let task = Self.runLogged(bench.watcher, into: log)
            defer { task.cancel() }
            try await Self.until(log, count: 1)
            #expect(log.withLock { $0 } == ["enumerated"])
            try bench.bus.send(["cmd": "start_mock"])
            try bench.addAdapter()
            try bench.addDevice(Self.headset, alias: "H")
            try bench.connectHeadset(Self.headset, uuids: [BluezTestbed.a2dp])
            try await Self.until(log, count: 2)
            #expect(log.withLock { $0 } == ["enumerated", "added \(Self.headsetUID):a2dp"])
        }
    }

    @Test("no bus at all: run throws a clear error at start")
    func noBus() async throws {
        let watcher = BluezWatcher(bus: .address("unix:path=/nonexistent/audioroute-test/bus"))
        do {
            try await watcher.run { _ in }
            Issue.record("run returned without a bus")
        } catch let error as BluezWatcherError {
            guard case .busUnavailable = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect("\(error)".contains("no D-Bus system bus"))
        }
    }
}

@Suite("BlueZ watcher lifecycle")
struct BluezWatcherLifecycleTests {
    @Test("dropping the event sequence without cancelling stops the watcher (its bus connection closes)")
    func droppedSequenceStopsThread() async throws {
        try await withBluezTestbed(startWatcher: false) { bench in
            let connections = { Int(try bench.bus.send(["cmd": "connections"])) ?? -1 }
            let before = try connections()
            do {
                let events = try await bench.watcher.events()
                _ = events
                #expect(try connections() == before + 1)
            }
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(10)
            while try connections() > before && clock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
            #expect(try connections() == before)
        }
    }
}
