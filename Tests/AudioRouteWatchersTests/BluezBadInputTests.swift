// Wrong data from BlueZ (or from someone pretending to be BlueZ) is logged once
// and ignored: no crash, no stale or phantom ports.

import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Synchronization
import Testing

@Suite("BlueZ watcher: bad input", .serialized)
struct BluezBadInputTests {
    static let headset = "00:11:22:33:44:55"
    static let uid = "bt:00:11:22:33:44:55"
    static let path = BluezTestbed.devicePath("hci0", headset)
    static let expected: Set<String> = [uid + ":a2dp", uid + ":hfp"]

    /// A connected headset to check against, and a barrier: after `barrier`, every
    /// signal sent before it has been handled (D-Bus keeps one connection's order,
    /// and the bench sends each bad signal before asking the mock for the barrier's).
    final class Fixture: Sendable {
        let bench: BluezTestbed
        private let counter = Counter()

        init(_ bench: BluezTestbed) async throws {
            self.bench = bench
            try bench.addAdapter()
            try bench.addDevice(BluezBadInputTests.headset, alias: "Good")
            try bench.connectHeadset(BluezBadInputTests.headset, uuids: [BluezTestbed.a2dp, BluezTestbed.hfp])
            try await bench.until("the headset") { bench.uids($0) == BluezBadInputTests.expected }
        }

        func barrier() async throws {
            let name = "Barrier \(counter.next())"
            try bench.setProperties(BluezBadInputTests.path, ["Alias": ["s", name]])
            try await bench.until("barrier \(name)") { $0.bluetoothPorts.allSatisfy { $0.name == name } }
        }

        /// Sends the bad input twice; checks that ports are as before and the fault was logged once.
        func expectIgnored(
            _ what: String, logged fault: String, times: Int = 1, ports: Set<String> = BluezBadInputTests.expected,
            twice: Bool = true,
            sourceLocation: SourceLocation = #_sourceLocation, _ send: () throws -> Void
        ) async throws {
            try send()
            if twice { try send() }
            try await barrier()
            #expect(bench.uids(bench.delivered) == ports, "\(what): ports changed", sourceLocation: sourceLocation)
            let count = bench.logs.count(containing: fault)
            #expect(count == times, "\(what): '\(fault)' logged \(count) times: \(bench.logs.all)", sourceLocation: sourceLocation)
        }
    }

    final class Counter: Sendable {
        private let value = Mutex(0)
        func next() -> Int {
            value.withLock {
                $0 += 1
                return $0
            }
        }
    }

    @Test("properties of the wrong D-Bus type are ignored")
    func wrongTypes() async throws {
        try await withBluezTestbed { bench in
            let f = try await Fixture(bench)
            try await f.expectIgnored("Connected as a string", logged: "Connected is s, expected b") {
                try bench.setProperties(Self.path, ["Connected": ["s", "no"]])
            }
            try await f.expectIgnored("UUIDs as a string", logged: "UUIDs is s, expected as") {
                try bench.setProperties(Self.path, ["UUIDs": ["s", BluezTestbed.a2dp]])
            }
            try await f.expectIgnored("Address as a number", logged: "Address is u, expected s") {
                try bench.setProperties(Self.path, ["Address": ["u", 7]])
            }
            try await f.expectIgnored("Alias as bytes that are not UTF-8", logged: "Alias is ay, expected s") {
                try bench.setProperties(Self.path, ["Alias": ["ay", [0xff, 0xfe, 0x00, 0xc3]]])
            }
            try await f.expectIgnored("ServicesResolved as a number", logged: "ServicesResolved is i, expected b") {
                try bench.setProperties(Self.path, ["ServicesResolved": ["i", 0]])
            }
            #expect(bench.delivered.bluetoothPorts.allSatisfy { $0.name.hasPrefix("Barrier") })
        }
    }

    @Test("malformed UUIDs are dropped one by one, unknown ones are not audio")
    func uuids() async throws {
        try await withBluezTestbed { bench in
            let f = try await Fixture(bench)
            try await f.expectIgnored(
                "a malformed UUID beside good ones", logged: "UUID \"not-a-uuid\" is malformed"
            ) {
                try bench.setProperties(
                    Self.path,
                    ["UUIDs": ["as", ["not-a-uuid", BluezTestbed.a2dp, "0000110e-0000-1000-8000-00805f9b34fb", BluezTestbed.hfp]]])
            }
            // Unknown (well-formed) UUIDs are logged once, at debug level.
            #expect(bench.logs.count(containing: "debug: bluez: ignored unknownUUID") == 1)
            // A list with only garbage and non-audio UUIDs leaves a connected device without ports.
            try bench.setProperties(Self.path, ["UUIDs": ["as", ["0000110e-0000-1000-8000-00805f9b34fb", "zzzz"]]])
            try await bench.until("no audio profile left") { bench.uids($0).isEmpty }
        }
    }

    @Test("invalid addresses: a device whose Address is not a bdaddr gets no port")
    func invalidAddress() async throws {
        try await withBluezTestbed { bench in
            let f = try await Fixture(bench)
            try await f.expectIgnored("Address changed to garbage", logged: "Address \"nonsense\" is not a Bluetooth address") {
                try bench.setProperties(Self.path, ["Address": ["s", "nonsense"]])
            }
            try await f.expectIgnored("a new device with a bad address", logged: "connected device has no valid Address", twice: false) {
                try bench.addObject(
                    "/org/bluez/hci0/dev_bad", interface: "org.bluez.Device1",
                    [
                        "Address": ["s", "ZZ:11:22:33:44:55"], "Adapter": ["o", "/org/bluez/hci0"], "Connected": ["b", true],
                        "ServicesResolved": ["b", true], "UUIDs": ["as", [BluezTestbed.a2dp]],
                    ])
            }
        }
    }

    @Test("a device without an adapter, a transport without a device")
    func orphans() async throws {
        try await withBluezTestbed { bench in
            let f = try await Fixture(bench)
            try await f.expectIgnored("device on a missing adapter", logged: "device's adapter /org/bluez/hci9 is unknown", twice: false) {
                try bench.addObject(
                    "/org/bluez/hci9/dev_01_02_03_04_05_06", interface: "org.bluez.Device1",
                    [
                        "Address": ["s", "01:02:03:04:05:06"], "Adapter": ["o", "/org/bluez/hci9"], "Connected": ["b", true],
                        "ServicesResolved": ["b", true], "UUIDs": ["as", [BluezTestbed.a2dp]],
                    ])
            }
            try await f.expectIgnored("transport of an unknown device", logged: "transport's device /org/bluez/hci0/dev_FF is unknown", twice: false) {
                try bench.addObject(
                    "/org/bluez/hci0/dev_FF/fd7", interface: "org.bluez.MediaTransport1",
                    ["Device": ["o", "/org/bluez/hci0/dev_FF"], "UUID": ["s", BluezTestbed.localHFPGateway], "State": ["s", "idle"]])
            }
            try await f.expectIgnored("transport with a wrong-typed Device", logged: "Device is s, expected o", twice: false) {
                try bench.addObject(
                    "/org/bluez/hci0/dev_FF/fd8", interface: "org.bluez.MediaTransport1",
                    ["Device": ["s", Self.path], "UUID": ["s", "0000111e"], "State": ["s", "idle"]])
            }
            #expect(bench.logs.count(containing: "UUID \"0000111e\" is malformed") == 1)
        }
    }

    @Test("names of 10,000 bytes are refused and the previous name kept")
    func longNames() async throws {
        try await withBluezTestbed { bench in
            let f = try await Fixture(bench)
            try await f.expectIgnored("10,000-byte Alias", logged: "Alias is 10000 bytes") {
                try bench.setProperties(Self.path, ["Alias": ["s", String(repeating: "é", count: 5000)]])
            }
            #expect(bench.delivered.bluetoothPorts.allSatisfy { $0.name.utf8.count < 100 })
            try await f.expectIgnored("control characters in Name", logged: "Name contains control characters") {
                try bench.setProperties(Self.path, ["Name": ["s", "evil\u{1b}[2Jname"]])
            }
        }
    }

    /// The match rules name org.bluez as the sender, so the bus does not even deliver an impostor's
    /// signals (nor any gdbus client's ObjectManager signals at /): nothing changes, nothing is logged.
    @Test("signals from a sender that is not org.bluez's owner never reach the watcher")
    func foreignSender() async throws {
        try await withBluezTestbed { bench in
            let f = try await Fixture(bench)
            try await f.expectIgnored("an impostor disconnects the headset", logged: "is not from org.bluez's owner", times: 0) {
                try bench.bus.send([
                    "cmd": "foreign_emit", "path": Self.path, "iface": "org.freedesktop.DBus.Properties",
                    "member": "PropertiesChanged",
                    "args": [["s", "org.bluez.Device1"], ["a{sv}", ["Connected": ["b", false]]], ["as", []]],
                ])
            }
            let phantom = BluezTestbed.devicePath("hci0", "AA:AA:AA:AA:AA:AA")
            try await f.expectIgnored("an impostor adds a device", logged: "InterfacesAdded on / is not from", times: 0) {
                try bench.bus.send([
                    "cmd": "foreign_emit", "path": "/", "iface": "org.freedesktop.DBus.ObjectManager", "member": "InterfacesAdded",
                    "args": [
                        ["o", phantom],
                        [
                            "a{sa{sv}}",
                            [
                                "org.bluez.Device1": [
                                    "Address": ["s", "AA:AA:AA:AA:AA:AA"], "Adapter": ["o", "/org/bluez/hci0"],
                                    "Connected": ["b", true], "ServicesResolved": ["b", true],
                                    "UUIDs": ["as", [BluezTestbed.a2dp]],
                                ]
                            ],
                        ],
                    ],
                ])
            }
        }
    }

    @Test("malformed signals from the owner are ignored")
    func malformedSignals() async throws {
        try await withBluezTestbed { bench in
            let f = try await Fixture(bench)
            try await f.expectIgnored("InterfacesAdded with a string", logged: "InterfacesAdded is not (oa{sa{sv}})") {
                try bench.bus.send([
                    "cmd": "mock_emit", "path": "/", "iface": "org.freedesktop.DBus.ObjectManager", "member": "InterfacesAdded",
                    "args": [["s", "hello"]],
                ])
            }
            try await f.expectIgnored("InterfacesRemoved without a list", logged: "InterfacesRemoved is not (oas)") {
                try bench.bus.send([
                    "cmd": "mock_emit", "path": "/", "iface": "org.freedesktop.DBus.ObjectManager", "member": "InterfacesRemoved",
                    "args": [["o", Self.path]],
                ])
            }
            try await f.expectIgnored("PropertiesChanged with a number", logged: "PropertiesChanged is not (sa{sv}as)") {
                try bench.bus.send([
                    "cmd": "mock_emit", "path": Self.path, "iface": "org.freedesktop.DBus.Properties",
                    "member": "PropertiesChanged", "args": [["u", 1]],
                ])
            }
        }
    }
}
