// Pure classification: BlueZ objects in, ports and port events out. No bus.

import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Glibc
import Testing

private func props(_ pairs: [(String, DBusValue)]) -> DBusValue {
    .dictionary(pairs.map { DBusValue.Entry(key: .string($0.0), value: .variant($0.1)) })
}

private func interfaces(_ pairs: [(String, DBusValue)]) -> DBusValue {
    .dictionary(pairs.map { DBusValue.Entry(key: .string($0.0), value: $0.1) })
}

private let adapter = "/org/bluez/hci0"
private let devicePath = "/org/bluez/hci0/dev_00_11_22_33_44_55"

private func connectedDevice(_ uuids: [String], address: String = "00:11:22:33:44:55", alias: String = "Phones") -> DBusValue {
    props([
        ("Address", .string(address)), ("Alias", .string(alias)), ("Adapter", .objectPath(adapter)),
        ("Connected", .bool(true)), ("ServicesResolved", .bool(true)), ("UUIDs", .array(uuids.map { .string($0) })),
    ])
}

/// A MediaTransport1 of `device` carrying `uuid`, as InterfacesAdded gives it.
private func transport(_ uuid: String, of device: String = devicePath) -> DBusValue {
    interfaces([(BluezObjects.transportInterface, props([("Device", .objectPath(device)), ("UUID", .string(uuid))]))])
}

private func objects(_ uuids: [String]) -> BluezObjects {
    var objects = BluezObjects()
    _ = objects.applyInterfacesAdded(path: adapter, interfaces: interfaces([(BluezObjects.adapterInterface, props([]))]))
    _ = objects.applyInterfacesAdded(path: devicePath, interfaces: interfaces([(BluezObjects.deviceInterface, connectedDevice(uuids))]))
    return objects
}

@Suite("BlueZ classification")
struct BluezModelTests {
    @Test("UUIDs normalise to lower case; malformed ones are refused")
    func uuidNormalisation() {
        #expect(BluetoothUUID.normalize("0000110B-0000-1000-8000-00805F9B34FB") == BluetoothUUID.a2dpSink)
        #expect(BluetoothUUID.normalize("0000110b") == nil)
        #expect(BluetoothUUID.normalize("0000110b-0000-1000-8000-00805f9b34fg") == nil)
        #expect(BluetoothUUID.normalize("0000110b_0000-1000-8000-00805f9b34fb") == nil)
        #expect(BluetoothUUID.normalize("") == nil)
    }

    @Test("device UUIDs map to profiles; AG and source roles are not ours")
    func deviceProfiles() {
        #expect(BluetoothUUID.deviceProfile(BluetoothUUID.a2dpSink) == .a2dp)
        #expect(BluetoothUUID.deviceProfile(BluetoothUUID.handsFree) == .hfp)
        #expect(BluetoothUUID.deviceProfile(BluetoothUUID.headset) == .hfp)
        #expect(BluetoothUUID.deviceProfile(BluetoothUUID.pacs) == .le)
        #expect(BluetoothUUID.deviceProfile(BluetoothUUID.a2dpSource) == nil)
        #expect(BluetoothUUID.deviceProfile(BluetoothUUID.handsFreeAudioGateway) == nil)
    }

    @Test("libbluetooth validates and formats addresses")
    func addresses() {
        #expect(BluetoothAddress("00:11:22:33:44:55")?.text == "00:11:22:33:44:55")
        #expect(BluetoothAddress("aa:bb:cc:dd:ee:ff")?.text == "AA:BB:CC:DD:EE:FF")
        #expect(BluetoothAddress("AA:BB:CC:DD:EE") == nil)
        #expect(BluetoothAddress("AA:BB:CC:DD:EE:FG") == nil)
        #expect(BluetoothAddress("AA-BB-CC-DD-EE-FF") == nil)
        #expect(BluetoothAddress("AA:BB:CC:DD:EE:FF:00") == nil)
        #expect(BluetoothAddress("") == nil)
        #expect(BluetoothAddress(String(repeating: "A", count: 10_000)) == nil)
    }

    @Test("the class of device names the kind of audio device")
    func classOfDevice() {
        #expect(BluetoothDeviceKind(classOfDevice: 0x240404) == .wearableHeadset)
        #expect(BluetoothDeviceKind(classOfDevice: 0x240408) == .handsFree)
        #expect(BluetoothDeviceKind(classOfDevice: 0x240414) == .loudspeaker)
        #expect(BluetoothDeviceKind(classOfDevice: 0x240418) == .headphones)
        #expect(BluetoothDeviceKind(classOfDevice: 0x240420) == .carAudio)
        #expect(BluetoothDeviceKind(classOfDevice: 0x5A020C) == nil)  // a phone
        #expect(BluetoothDeviceKind(classOfDevice: 268) == nil)  // a laptop (the mock's adapter)
        #expect(BluetoothDeviceKind(classOfDevice: 0x240418)?.suggestsMicrophone == false)
        #expect(BluetoothDeviceKind(classOfDevice: 0x240404)?.suggestsMicrophone == true)
    }

    @Test("adapter probe: EAFNOSUPPORT and ENODEV mean no adapter, a normal state")
    func adapterStatus() {
        #expect(BluetoothAdapterStatus.classify(.addressFamilyNotSupported) == .absent(.addressFamilyNotSupported))
        #expect(BluetoothAdapterStatus.classify(.noSuchDevice) == .absent(.noSuchDevice))
        #expect(BluetoothAdapterStatus.classify(.permissionDenied) == .unknown(.permissionDenied))
        #expect("\(BluetoothAdapterStatus.absent(.noSuchDevice))" == "no Bluetooth adapter")
        // On this machine (no Bluetooth in the kernel, or no controller) the real probe says so and does not crash.
        switch BluetoothAdapterStatus.probe() {
        case .present(let id): #expect(id >= 0)
        case .absent(let code): #expect([.addressFamilyNotSupported, .noSuchDevice, .protocolNotSupported].contains(code))
        case .unknown(let code): Issue.record("unexpected probe errno \(code)")
        }
    }

    @Test("A2DP + HFP: an A2DP output and one duplex HFP port on the same device")
    func headsetPorts() throws {
        let (ports, faults) = objects([BluetoothUUID.a2dpSink, BluetoothUUID.handsFree, BluetoothUUID.headset]).ports()
        #expect(faults.isEmpty)
        let device = try #require(ports["bt:00:11:22:33:44:55"])
        #expect(device.map(\.uid) == ["bt:00:11:22:33:44:55:a2dp", "bt:00:11:22:33:44:55:hfp"])
        #expect(device.map(\.type) == [.bluetoothA2DP, .bluetoothHFP])
        #expect(device.map(\.direction) == [.output, .duplex])
        #expect(device.map(\.alsa) == ["bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp", "bluealsa:DEV=00:11:22:33:44:55,PROFILE=sco"])
        #expect(device.allSatisfy { $0.name == "Phones" && $0.device == "bt:00:11:22:33:44:55" && $0.sequence == 0 })
    }

    @Test("no audio UUID, not connected or not resolved: no ports")
    func noPorts() {
        #expect(objects(["0000110e-0000-1000-8000-00805f9b34fb"]).ports().ports.isEmpty)
        var unknown = BluezObjects()
        let faults = unknown.applyInterfacesAdded(
            path: devicePath, interfaces: interfaces([(BluezObjects.deviceInterface, connectedDevice(["0000110E-0000-1000-8000-00805f9b34fb", BluetoothUUID.a2dpSink]))]))
        #expect(faults.map(\.kind) == [.unknownUUID])
        #expect(unknown.devices[devicePath]?.uuids == ["0000110e-0000-1000-8000-00805f9b34fb", BluetoothUUID.a2dpSink])
        var o = objects([BluetoothUUID.a2dpSink])
        _ = o.applyProperties(path: devicePath, interface: BluezObjects.deviceInterface, changed: props([("ServicesResolved", .bool(false))]), invalidated: [])
        #expect(o.ports().ports.isEmpty)
    }

    @Test("a name falls back from Alias to Name to the class of device")
    func names() throws {
        var o = objects([BluetoothUUID.a2dpSink])
        _ = o.applyProperties(
            path: devicePath, interface: BluezObjects.deviceInterface, changed: props([("Name", .string("Real Name")), ("Class", .uint32(0x240418))]),
            invalidated: ["Alias"])
        #expect(o.ports().ports.values.first?.first?.name == "Real Name")
        _ = o.applyProperties(path: devicePath, interface: BluezObjects.deviceInterface, changed: props([]), invalidated: ["Name"])
        #expect(o.ports().ports.values.first?.first?.name == "Bluetooth Headphones")
        // No class: BlueZ's icon names the kind; neither: the address.
        _ = o.applyProperties(
            path: devicePath, interface: BluezObjects.deviceInterface, changed: props([("Icon", .string("audio-headset"))]), invalidated: ["Class"])
        #expect(o.ports().ports.values.first?.first?.name == "Bluetooth Headset")
        _ = o.applyProperties(path: devicePath, interface: BluezObjects.deviceInterface, changed: props([]), invalidated: ["Icon"])
        #expect(o.ports().ports.values.first?.first?.name == "Bluetooth 00:11:22:33:44:55")
    }

    @Test("wrong types and invalid values leave what was known untouched")
    func badValues() throws {
        var o = objects([BluetoothUUID.a2dpSink])
        let before = o
        let faults = o.applyProperties(
            path: devicePath, interface: BluezObjects.deviceInterface,
            changed: props([
                ("Connected", .string("yes")), ("Address", .string("nope")), ("Alias", .invalidString),
                ("Name", .string(String(repeating: "n", count: 10_000))), ("Class", .int32(1)), ("Adapter", .string(adapter)),
                ("UUIDs", .array([.uint32(1)])),
            ]), invalidated: [])
        #expect(o == before)
        #expect(Set(faults.map(\.kind)) == [.wrongType, .invalidAddress, .invalidName])
        #expect(faults.count == 7)
        #expect(faults.contains { $0.detail.contains("not valid UTF-8") })
        // A whole message of the wrong shape.
        #expect(o.applyProperties(path: devicePath, interface: BluezObjects.deviceInterface, changed: .string("x"), invalidated: []).first?.kind == .malformedMessage)
        #expect(o.applyManagedObjects(.uint32(3)).first?.kind == .malformedMessage)
        #expect(o == before)
    }

    @Test("a device on an unknown adapter and a transport of an unknown device are faults, not ports")
    func orphans() {
        var o = BluezObjects()
        _ = o.applyInterfacesAdded(path: devicePath, interfaces: interfaces([(BluezObjects.deviceInterface, connectedDevice([BluetoothUUID.a2dpSink]))]))
        _ = o.applyInterfacesAdded(path: "/t", interfaces: transport(BluetoothUUID.handsFreeAudioGateway, of: "/nowhere"))
        let (ports, faults) = o.ports()
        #expect(ports.isEmpty)
        #expect(Set(faults.map(\.kind)) == [.deviceWithoutAdapter, .transportWithoutDevice])
        // The adapter appears: the device's ports follow.
        _ = o.applyInterfacesAdded(path: adapter, interfaces: interfaces([(BluezObjects.adapterInterface, props([]))]))
        #expect(o.ports().ports.count == 1)
    }

    @Test("transports add the profile they carry; LE direction follows sink/source transports")
    func transportRefinement() {
        var o = objects([BluetoothUUID.pacs])
        #expect(o.ports().ports.values.first?.map(\.direction) == [.duplex])
        _ = o.applyInterfacesAdded(path: devicePath + "/fd0", interfaces: transport(BluetoothUUID.pacSource))
        #expect(o.ports().ports.values.first?.map(\.direction) == [.input])
        // The computer's A2DP transport carries the local role, A2DP Source (real bluetoothd 5.66, issue 18).
        _ = o.applyInterfacesAdded(path: devicePath + "/fd1", interfaces: transport(BluetoothUUID.a2dpSource))
        #expect(o.ports().ports.values.first?.map(\.type) == [.bluetoothA2DP, .bluetoothLE])
        o.applyInterfacesRemoved(path: devicePath + "/fd1", interfaces: [BluezObjects.transportInterface])
        #expect(o.ports().ports.values.first?.map(\.type) == [.bluetoothLE])
    }

    @Test("a transport's UUID is this machine's role: source and gateway give ports, sink, HF and HS do not")
    func transportsNameTheLocalRole() {
        // BlueZ 5.66 transport.c: the UUID property is the local media endpoint's.
        let carried = { (uuid: String) in BluetoothUUID.transportProfile(uuid).map { "\($0.profile) \($0.direction)" } }
        #expect(carried(BluetoothUUID.a2dpSource) == "a2dp output")
        #expect(carried(BluetoothUUID.handsFreeAudioGateway) == "hfp duplex")
        #expect(carried(BluetoothUUID.headsetAudioGateway) == "hfp duplex")
        for receiver in [BluetoothUUID.a2dpSink, BluetoothUUID.handsFree, BluetoothUUID.headset] {
            #expect(BluetoothUUID.transportProfile(receiver) == nil)
            #expect(BluetoothUUID.isLocalReceiverRole(receiver))
        }
        #expect(!BluetoothUUID.isLocalReceiverRole(BluetoothUUID.a2dpSource))

        // A device whose UUIDs give nothing (a phone: A2DP source, HFP gateway) gets ports only from
        // transports in which this machine is the source or gateway.
        var o = objects([BluetoothUUID.a2dpSource, BluetoothUUID.handsFreeAudioGateway])
        #expect(o.ports().ports.isEmpty)
        let phoneToUs = [(BluetoothUUID.a2dpSink, "/fd0"), (BluetoothUUID.handsFree, "/fd1"), (BluetoothUUID.headset, "/fd2")]
        for (uuid, name) in phoneToUs {
            let faults = o.applyInterfacesAdded(path: devicePath + name, interfaces: transport(uuid))
            #expect(faults.map(\.kind) == [.unknownUUID])
            #expect(faults.first?.detail.contains("local receiving role") == true)
        }
        #expect(o.ports().ports.isEmpty, "a phone playing to us is not an output")
        _ = o.applyInterfacesAdded(path: devicePath + "/fd3", interfaces: transport(BluetoothUUID.a2dpSource))
        #expect(o.ports().ports.values.first?.map(\.type) == [.bluetoothA2DP])
        _ = o.applyInterfacesAdded(path: devicePath + "/fd4", interfaces: transport(BluetoothUUID.handsFreeAudioGateway))
        #expect(o.ports().ports.values.first?.map(\.type) == [.bluetoothA2DP, .bluetoothHFP])
        #expect(o.ports().ports.values.first?.map(\.direction) == [.output, .duplex])
    }

    @Test("a device with the default adapter's address is this machine (one bluetoothd, two controllers): no ports")
    func selfDevice() throws {
        // Real bluetoothd 5.66 with btvirt's hci0 and hci1 (issue 18): hci1 sees hci0 as a connected device.
        let hci0 = "00:01:02:03:04:05", hci1 = "01:02:03:04:05:06"
        let headsetPath = "/org/bluez/hci0/dev_01_02_03_04_05_06", selfPath = "/org/bluez/hci1/dev_00_01_02_03_04_05"
        var o = BluezObjects()
        _ = o.applyInterfacesAdded(path: adapter, interfaces: interfaces([(BluezObjects.adapterInterface, props([("Address", .string(hci0))]))]))
        _ = o.applyInterfacesAdded(path: "/org/bluez/hci1", interfaces: interfaces([(BluezObjects.adapterInterface, props([("Address", .string(hci1))]))]))
        #expect(o.adapters[adapter]?.address?.text == hci0)
        #expect(o.ownAddress?.text == hci0)
        let uuids = [BluetoothUUID.a2dpSink, BluetoothUUID.handsFree]
        _ = o.applyInterfacesAdded(
            path: headsetPath, interfaces: interfaces([(BluezObjects.deviceInterface, connectedDevice(uuids, address: hci1, alias: "Headset"))]))
        _ = o.applyInterfacesAdded(
            path: selfPath, interfaces: interfaces([(BluezObjects.deviceInterface, connectedDevice(uuids, address: hci0, alias: "Computer"))]))
        _ = o.applyProperties(path: selfPath, interface: BluezObjects.deviceInterface, changed: props([("Adapter", .objectPath("/org/bluez/hci1"))]), invalidated: [])
        // The headset side's own A2DP sink transport points at the self device.
        _ = o.applyInterfacesAdded(path: selfPath + "/fd0", interfaces: transport(BluetoothUUID.a2dpSink, of: selfPath))
        let (ports, faults) = o.ports()
        #expect(faults.isEmpty)
        #expect(Set(ports.keys) == ["bt:" + hci1])
        #expect(ports["bt:" + hci1]?.map(\.type) == [.bluetoothA2DP, .bluetoothHFP])

        // An adapter whose Address arrives later (PropertiesChanged) counts from then on; a bad one is a fault.
        var late = BluezObjects()
        _ = late.applyInterfacesAdded(path: adapter, interfaces: interfaces([(BluezObjects.adapterInterface, props([]))]))
        _ = late.applyInterfacesAdded(
            path: devicePath, interfaces: interfaces([(BluezObjects.deviceInterface, connectedDevice([BluetoothUUID.a2dpSink], address: hci0))]))
        #expect(late.ports().ports.count == 1)
        let bad = late.applyProperties(path: adapter, interface: BluezObjects.adapterInterface, changed: props([("Address", .string("nope"))]), invalidated: [])
        #expect(bad.map(\.kind) == [.invalidAddress])
        #expect(late.ports().ports.count == 1)
        _ = late.applyProperties(path: adapter, interface: BluezObjects.adapterInterface, changed: props([("Address", .string(hci0))]), invalidated: [])
        #expect(late.ports().ports.isEmpty)
        late.applyInterfacesRemoved(path: adapter, interfaces: [BluezObjects.adapterInterface])
        #expect(late.adapters.isEmpty)
        #expect(late.ownAddress == nil)

        // The default adapter is the lowest-numbered: hci9 before hci10.
        var order = BluezObjects()
        for (name, address) in [("hci10", "0A:0A:0A:0A:0A:0A"), ("hci9", "09:09:09:09:09:09")] {
            _ = order.applyInterfacesAdded(
                path: "/org/bluez/" + name, interfaces: interfaces([(BluezObjects.adapterInterface, props([("Address", .string(address))]))]))
        }
        #expect(order.ownAddress?.text == "09:09:09:09:09:09")
    }

    @Test("the same address on two object paths gives one device, deterministically")
    func duplicateAddress() {
        var o = objects([BluetoothUUID.a2dpSink])
        _ = o.applyInterfacesAdded(
            path: "/org/bluez/hci0/dev_copy", interfaces: interfaces([(BluezObjects.deviceInterface, connectedDevice([BluetoothUUID.handsFree]))]))
        let ports = o.ports().ports
        #expect(ports.count == 1)
        #expect(ports.values.first?.map(\.type) == [.bluetoothA2DP])
    }

    @Test("BlueALSA PCMs: host-side roles map to profiles and filter A2DP/HFP, never LE")
    func bluealsaFilter() {
        #expect(BluealsaPCM(transport: "A2DP-source").profile == .a2dp)
        #expect(BluealsaPCM(transport: "HFP-AG").profile == .hfp)
        #expect(BluealsaPCM(transport: "HSP-AG").profile == .hfp)
        #expect(BluealsaPCM(transport: "A2DP-sink").profile == nil)
        #expect(BluealsaPCM(transport: "HFP-HF").profile == nil)
        let o = objects([BluetoothUUID.a2dpSink, BluetoothUUID.handsFree, BluetoothUUID.pacs])
        var pcms = BluealsaPCMs()
        #expect(o.ports(bluealsa: pcms).ports.values.first?.map(\.type) == [.bluetoothLE])
        let faults = pcms.applyInterfacesAdded(
            path: "/org/bluealsa/p", interfaces: interfaces([(BluealsaPCMs.pcmInterface, props([("Device", .objectPath(devicePath)), ("Transport", .string("HFP-AG")), ("Mode", .uint32(1))]))]))
        #expect(faults.map(\.kind) == [.wrongType])
        #expect(o.ports(bluealsa: pcms).ports.values.first?.map(\.type) == [.bluetoothHFP, .bluetoothLE])
        #expect(o.ports().ports.values.first?.map(\.type) == [.bluetoothA2DP, .bluetoothHFP, .bluetoothLE])
    }
}
