// The BlueZ objects the watcher mirrors, and the pure functions that turn them
// into ports. No I/O: the watcher feeds parsed D-Bus values in and logs the
// faults that come back; unit tests feed values directly.

import AudioRouteSystem
import AudioRouteDBus
import AudioRouteCore

/// A model built from a D-Bus object manager's objects (BlueZ's, BlueALSA's): what
/// GetManagedObjects returns is InterfacesAdded for each of its objects.
public protocol ObjectManagerModel {
    /// The object manager's path, named by a fault in its reply.
    static var managerPath: String { get }
    /// InterfacesAdded's `a{sa{sv}}` (also one object of GetManagedObjects).
    mutating func applyInterfacesAdded(path: String, interfaces: DBusValue) -> [BluezFault]
}

extension ObjectManagerModel {
    /// GetManagedObjects' reply body, `a{oa{sa{sv}}}`.
    public mutating func applyManagedObjects(_ body: DBusValue) -> [BluezFault] {
        guard let objects = body.stringKeyed else {
            return [BluezFault(.malformedMessage, Self.managerPath, "GetManagedObjects returned \(body.typeName), not a{oa{sa{sv}}}")]
        }
        var faults: [BluezFault] = []
        for (path, interfaces) in objects { faults += applyInterfacesAdded(path: path, interfaces: interfaces) }
        return faults
    }
}

/// Something wrong in BlueZ's data. The watcher logs each distinct fault once and ignores the datum.
public struct BluezFault: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case wrongType
        case malformedUUID
        case unknownUUID
        case invalidAddress
        case invalidName
        case deviceWithoutAdapter
        case transportWithoutDevice
        case malformedMessage
        case foreignSender
    }

    public var kind: Kind
    /// The object path (or sender) the fault is about.
    public var subject: String
    public var detail: String

    public init(_ kind: Kind, _ subject: String, _ detail: String) {
        self.kind = kind
        self.subject = subject
        self.detail = detail
    }

    public var description: String { "\(kind.rawValue) at \(subject): \(detail)" }
}

/// The audio profiles a port can come from.
public enum BluetoothProfile: String, Sendable, Hashable, CaseIterable, Comparable {
    case a2dp
    case hfp
    case le

    public static func < (a: Self, b: Self) -> Bool { a.order < b.order }
    private var order: Int {
        switch self {
        case .a2dp: return 0
        case .hfp: return 1
        case .le: return 2
        }
    }
}

/// Bluetooth SIG UUIDs that matter here.
public enum BluetoothUUID {
    public static let a2dpSink = "0000110b-0000-1000-8000-00805f9b34fb"
    public static let a2dpSource = "0000110a-0000-1000-8000-00805f9b34fb"
    public static let headset = "00001108-0000-1000-8000-00805f9b34fb"
    public static let headsetAudioGateway = "00001112-0000-1000-8000-00805f9b34fb"
    public static let handsFree = "0000111e-0000-1000-8000-00805f9b34fb"
    public static let handsFreeAudioGateway = "0000111f-0000-1000-8000-00805f9b34fb"
    public static let pacs = "00001850-0000-1000-8000-00805f9b34fb"
    /// BlueZ's BAP transports: PAC sink (we play to it) and PAC source (we record from it).
    public static let pacSink = "00008f96-0000-1000-8000-00805f9b34fb"
    public static let pacSource = "00008f98-0000-1000-8000-00805f9b34fb"

    /// The canonical (lower-case) form of a 128-bit UUID string, or nil if malformed.
    public static func normalize(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                out.append(byte)
                continue
            }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): out.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): out.append(byte + 32)
            default: return nil
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The profile a remote device's service UUID (Device1.UUIDs) offers us as an audio sink/headset.
    public static func deviceProfile(_ uuid: String) -> BluetoothProfile? {
        switch uuid {
        case a2dpSink: return .a2dp
        case handsFree, headset: return .hfp
        case pacs: return .le
        default: return nil
        }
    }

    /// What a MediaTransport1's UUID carries: the profile and the direction it gives us.
    ///
    /// A transport's UUID names the LOCAL endpoint's role, not the remote's (BlueZ 5.66
    /// profiles/audio/transport.c `get_uuid` returns `media_endpoint_get_uuid(transport->endpoint)`,
    /// the endpoint this machine's audio server registered). So A2DP Source (110a) is this machine
    /// playing to a sink: an output port. A2DP Sink (110b) is a phone playing to us (a car kit):
    /// not a port (docs/decisions.md, "Real BlueZ: local roles and local controllers"). Likewise the audio-gateway
    /// roles (111f, 1112) mean the remote is the headset, and the HF/HS roles (111e, 1108) mean this
    /// machine is the headset. BlueZ 5.66 makes no HFP/HSP transports (media.c accepts only A2DP and
    /// PAC endpoints); the gateway reading applies to any BlueZ that does.
    public static func transportProfile(_ uuid: String) -> (profile: BluetoothProfile, direction: PortDirection)? {
        switch uuid {
        case a2dpSource: return (.a2dp, .output)
        case handsFreeAudioGateway, headsetAudioGateway: return (.hfp, .duplex)
        case pacSink: return (.le, .output)
        case pacSource: return (.le, .input)
        default: return nil
        }
    }

    /// Transport UUIDs that say this machine receives the audio (A2DP sink, HFP hands-free,
    /// HSP headset): normal on a car kit, and never a port here.
    public static func isLocalReceiverRole(_ uuid: String) -> Bool {
        uuid == a2dpSink || uuid == handsFree || uuid == headset
    }
}

/// What the watcher knows of one org.bluez.Adapter1: a local controller.
public struct BluezAdapter: Sendable, Hashable {
    /// The controller's own address (Adapter1.Address): the default adapter's is this machine's
    /// (`BluezObjects.ownAddress`).
    public var address: BluetoothAddress?

    public init(address: BluetoothAddress? = nil) { self.address = address }
}

/// What the watcher knows of one org.bluez.Device1.
public struct BluezDevice: Sendable, Hashable {
    public var address: BluetoothAddress?
    public var alias: String?
    public var name: String?
    public var connected = false
    public var servicesResolved = false
    /// Canonical service UUIDs.
    public var uuids: [String] = []
    public var classOfDevice: UInt32?
    public var icon: String?
    public var adapter: String?

    public init() {}

    /// What kind of audio device this is, by its class of device, else by BlueZ's icon name.
    /// A hint for naming; the UUIDs decide which ports exist.
    public var kind: BluetoothDeviceKind? {
        if let kind = classOfDevice.flatMap({ BluetoothDeviceKind(classOfDevice: $0) }) { return kind }
        switch icon {
        case "audio-headset"?: return .wearableHeadset
        case "audio-headphones"?: return .headphones
        case "audio-card"?: return .otherAudioVideo
        default: return nil
        }
    }
}

/// What the watcher knows of one org.bluez.MediaTransport1.
public struct BluezTransport: Sendable, Hashable {
    public var device: String?
    public var uuid: String?
    public var state: String?

    public init() {}
}

/// The mirrored BlueZ object tree: adapters, devices and transports by object path.
public struct BluezObjects: ObjectManagerModel, Sendable, Hashable {
    /// Where BlueZ's object manager is.
    public static let managerPath = "/"

    /// Local controllers by object path.
    public var adapters: [String: BluezAdapter] = [:]
    public var devices: [String: BluezDevice] = [:]
    public var transports: [String: BluezTransport] = [:]

    public init() {}

    public static let deviceInterface = "org.bluez.Device1"
    public static let adapterInterface = "org.bluez.Adapter1"
    public static let transportInterface = "org.bluez.MediaTransport1"

    /// The longest Alias/Name kept (bytes). BlueZ's own limit is 248 (HCI_MAX_NAME_LENGTH).
    public static let maximumNameBytes = 248

    // MARK: Applying BlueZ's messages

    /// InterfacesAdded's `a{sa{sv}}` (also one object of GetManagedObjects).
    public mutating func applyInterfacesAdded(path: String, interfaces: DBusValue) -> [BluezFault] {
        guard let byInterface = interfaces.stringKeyed else {
            return [BluezFault(.malformedMessage, path, "interfaces are \(interfaces.typeName), not a{sa{sv}}")]
        }
        var faults: [BluezFault] = []
        for (interface, properties) in byInterface {
            switch interface {
            case Self.adapterInterface:
                if adapters[path] == nil { adapters[path] = BluezAdapter() }
                faults += applyProperties(path: path, interface: interface, changed: properties, invalidated: [])
            case Self.deviceInterface:
                if devices[path] == nil { devices[path] = BluezDevice() }
                faults += applyProperties(path: path, interface: interface, changed: properties, invalidated: [])
            case Self.transportInterface:
                if transports[path] == nil { transports[path] = BluezTransport() }
                faults += applyProperties(path: path, interface: interface, changed: properties, invalidated: [])
            default:
                continue
            }
        }
        return faults
    }

    /// InterfacesRemoved's interface list.
    public mutating func applyInterfacesRemoved(path: String, interfaces: [String]) {
        for interface in interfaces {
            switch interface {
            case Self.adapterInterface: adapters[path] = nil
            case Self.deviceInterface: devices[path] = nil
            case Self.transportInterface: transports[path] = nil
            default: continue
            }
        }
    }

    /// PropertiesChanged (or the properties of an added interface). A property of
    /// the wrong type, or a value that fails validation, is reported and leaves
    /// what was known before untouched.
    public mutating func applyProperties(
        path: String, interface: String, changed: DBusValue, invalidated: [String]
    ) -> [BluezFault] {
        guard let properties = changed.stringKeyed else {
            return [BluezFault(.malformedMessage, path, "properties are \(changed.typeName), not a{sv}")]
        }
        var faults: [BluezFault] = []
        switch interface {
        case Self.adapterInterface:
            guard var adapter = adapters[path] else { return [] }
            if let value = properties.first(where: { $0.key == "Address" })?.value.unwrapped {
                if let address = Self.address(value, path: path, faults: &faults) { adapter.address = address }
            }
            adapters[path] = adapter
        case Self.deviceInterface:
            guard var device = devices[path] else { return [] }
            for (key, value) in properties { Self.apply(key, value.unwrapped, to: &device, path: path, faults: &faults) }
            for key in invalidated {
                switch key {
                case "Alias": device.alias = nil
                case "Name": device.name = nil
                case "Icon": device.icon = nil
                case "Class": device.classOfDevice = nil
                default: break
                }
            }
            devices[path] = device
        case Self.transportInterface:
            guard var transport = transports[path] else { return [] }
            for (key, value) in properties { Self.apply(key, value.unwrapped, to: &transport, path: path, faults: &faults) }
            transports[path] = transport
        default:
            break
        }
        return faults
    }

    private static func wrongType(_ path: String, _ key: String, _ expected: String, _ value: DBusValue) -> BluezFault {
        BluezFault(.wrongType, path, "\(key) is \(value.typeName), expected \(expected)")
    }

    private static func apply(_ key: String, _ value: DBusValue, to device: inout BluezDevice, path: String, faults: inout [BluezFault]) {
        switch key {
        case "Connected", "ServicesResolved":
            guard case .bool(let flag) = value else { return faults.append(wrongType(path, key, "b", value)) }
            if key == "Connected" { device.connected = flag } else { device.servicesResolved = flag }
        case "Address":
            if let address = address(value, path: path, faults: &faults) { device.address = address }
        case "Alias", "Name":
            guard let name = validName(key, value, path: path, faults: &faults) else { return }
            if key == "Alias" { device.alias = name } else { device.name = name }
        case "Class":
            guard case .uint32(let cls) = value else { return faults.append(wrongType(path, key, "u", value)) }
            device.classOfDevice = cls
        case "Icon":
            guard case .string(let icon) = value else { return faults.append(wrongType(path, key, "s", value)) }
            device.icon = icon
        case "Adapter":
            guard case .objectPath(let adapter) = value else { return faults.append(wrongType(path, key, "o", value)) }
            device.adapter = adapter
        case "UUIDs":
            guard case .array(let items) = value else { return faults.append(wrongType(path, key, "as", value)) }
            var uuids: [String] = []
            for item in items {
                guard case .string(let text) = item else {
                    faults.append(wrongType(path, key, "as", value))
                    return
                }
                guard let uuid = BluetoothUUID.normalize(text) else {
                    faults.append(BluezFault(.malformedUUID, path, "UUID \(clip(text)) is malformed"))
                    continue
                }
                if BluetoothUUID.deviceProfile(uuid) == nil {
                    // Most devices list many services; not audio ones are normal (logged at debug).
                    faults.append(BluezFault(.unknownUUID, path, "UUID \(uuid) is not an audio profile we route to"))
                }
                uuids.append(uuid)
            }
            device.uuids = uuids
        default:
            break
        }
    }

    /// An `Address` property (Adapter1 or Device1), validated by libbluetooth.
    private static func address(_ value: DBusValue, path: String, faults: inout [BluezFault]) -> BluetoothAddress? {
        guard case .string(let text) = value else {
            faults.append(wrongType(path, "Address", "s", value))
            return nil
        }
        guard let address = BluetoothAddress(text) else {
            faults.append(BluezFault(.invalidAddress, path, "Address \(clip(text)) is not a Bluetooth address"))
            return nil
        }
        return address
    }

    private static func apply(_ key: String, _ value: DBusValue, to transport: inout BluezTransport, path: String, faults: inout [BluezFault]) {
        switch key {
        case "Device":
            guard case .objectPath(let device) = value else { return faults.append(wrongType(path, key, "o", value)) }
            transport.device = device
        case "UUID":
            guard case .string(let text) = value else { return faults.append(wrongType(path, key, "s", value)) }
            guard let uuid = BluetoothUUID.normalize(text) else {
                return faults.append(BluezFault(.malformedUUID, path, "UUID \(clip(text)) is malformed"))
            }
            if BluetoothUUID.isLocalReceiverRole(uuid) {
                let detail = "transport UUID \(uuid) is a local receiving role (audio comes to this machine), not a port"
                faults.append(BluezFault(.unknownUUID, path, detail))
            } else if BluetoothUUID.transportProfile(uuid) == nil {
                faults.append(BluezFault(.unknownUUID, path, "transport UUID \(uuid) is not an audio profile we route to"))
            }
            transport.uuid = uuid
        case "State":
            guard case .string(let state) = value else { return faults.append(wrongType(path, key, "s", value)) }
            transport.state = state
        default:
            break
        }
    }

    /// A device name fit to show: a string, valid UTF-8, not empty, at most 248 bytes, no control characters.
    private static func validName(_ key: String, _ value: DBusValue, path: String, faults: inout [BluezFault]) -> String? {
        switch value {
        case .string(let name):
            if name.utf8.count > maximumNameBytes {
                faults.append(BluezFault(.invalidName, path, "\(key) is \(name.utf8.count) bytes, longer than \(maximumNameBytes)"))
                return nil
            }
            if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                faults.append(BluezFault(.invalidName, path, "\(key) contains control characters"))
                return nil
            }
            return name.isEmpty ? nil : name
        case .invalidString:
            faults.append(BluezFault(.invalidName, path, "\(key) is not valid UTF-8"))
            return nil
        default:
            faults.append(wrongType(path, key, "s", value))
            return nil
        }
    }

    /// At most 64 characters of untrusted text, for messages.
    static func clip(_ text: String) -> String {
        text.count <= 64 ? "\"\(text)\"" : "\"\(text.prefix(64))…\" (\(text.utf8.count) bytes)"
    }

    // MARK: Ports

    /// The address of this machine's own controller: the default adapter's, the lowest-numbered
    /// `hciN` (BlueZ's default adapter, and `bluetoothctl`'s and `bluealsa -i`'s default).
    ///
    /// One bluetoothd with two local controllers shows each to the other as a connected Device1
    /// (real bluetoothd 5.66 with btvirt's hci0 and hci1, issue 18). The two views are symmetric, so
    /// an address alone cannot say which is "the machine": hci1's view of hci0 (this address) is, and
    /// gives no ports; hci0's view of hci1 is a controller playing a peripheral (the bench's headset)
    /// and keeps its ports (docs/decisions.md, "Real BlueZ: local roles and local controllers").
    public var ownAddress: BluetoothAddress? {
        let first = adapters.keys.min { a, b in a.utf8.count != b.utf8.count ? a.utf8.count < b.utf8.count : a < b }
        return first.flatMap { adapters[$0]?.address }
    }

    /// The ports BlueZ's state gives now, by device id, and the faults that kept
    /// devices or transports out. A pure function of the mirrored objects.
    /// With `bluealsa` (BlueALSA is on the bus), A2DP and HFP ports exist only for
    /// profiles BlueALSA has a PCM for: its list is the truth for what can be opened.
    public func ports(bluealsa: BluealsaPCMs? = nil) -> (ports: [String: [Port]], faults: [BluezFault]) {
        var faults: [BluezFault] = []
        // Transports refine the profiles of their device (see docs/bluetooth.md).
        var transportsByDevice: [String: [BluezTransport]] = [:]
        for (path, transport) in transports {
            guard let device = transport.device else { continue }
            guard devices[device] != nil else {
                faults.append(BluezFault(.transportWithoutDevice, path, "transport's device \(device) is unknown"))
                continue
            }
            transportsByDevice[device, default: []].append(transport)
        }
        let own = ownAddress
        var result: [String: [Port]] = [:]
        for path in devices.keys.sorted() {
            let device = devices[path]!
            guard device.connected, device.servicesResolved else { continue }
            guard let address = device.address else {
                faults.append(BluezFault(.invalidAddress, path, "connected device has no valid Address"))
                continue
            }
            guard let adapter = device.adapter, adapters[adapter] != nil else {
                faults.append(BluezFault(.deviceWithoutAdapter, path, "device's adapter \(device.adapter ?? "(none)") is unknown"))
                continue
            }
            // This machine seen from another of its controllers is not a port.
            if address == own { continue }
            var ports = Self.ports(for: device, address: address, transports: transportsByDevice[path] ?? [])
            if let bluealsa {
                let usable = bluealsa.profiles(forDevice: path)
                ports.removeAll { port in
                    switch port.type {
                    case .bluetoothA2DP: return !usable.contains(.a2dp)
                    case .bluetoothHFP: return !usable.contains(.hfp)
                    default: return false
                    }
                }
            }
            // Two object paths claiming one address: the first path in order wins, so the result is stable.
            let id = Self.deviceID(address)
            if !ports.isEmpty, result[id] == nil { result[id] = ports }
        }
        return (result, faults)
    }

    /// The device id ports share: `bt:<ADDRESS>`.
    public static func deviceID(_ address: BluetoothAddress) -> String { "bt:" + address.text }

    /// The uid of one profile's port: `bt:<ADDRESS>:<profile>`, stable across reconnects.
    public static func uid(_ address: BluetoothAddress, _ profile: BluetoothProfile) -> String {
        deviceID(address) + ":" + profile.rawValue
    }

    /// The ports of one connected device: one per profile its UUIDs or transports offer.
    public static func ports(for device: BluezDevice, address: BluetoothAddress, transports: [BluezTransport]) -> [Port] {
        var profiles = Set(device.uuids.compactMap(BluetoothUUID.deviceProfile))
        var leDirections: Set<PortDirection> = []
        for transport in transports {
            guard let uuid = transport.uuid, let carried = BluetoothUUID.transportProfile(uuid) else { continue }
            profiles.insert(carried.profile)
            if carried.profile == .le { leDirections.insert(carried.direction) }
        }
        let name = device.alias ?? device.name ?? device.kind?.displayName ?? "Bluetooth \(address.text)"
        return profiles.sorted().map { profile in
            switch profile {
            case .a2dp:
                return Port(
                    uid: uid(address, .a2dp), type: .bluetoothA2DP, device: deviceID(address), name: name, direction: .output,
                    alsa: .bluealsa(BlueALSAPCM(address: address.text, profile: .a2dp)))
            case .hfp:
                return Port(
                    uid: uid(address, .hfp), type: .bluetoothHFP, device: deviceID(address), name: name, direction: .duplex,
                    alsa: .bluealsa(BlueALSAPCM(address: address.text, profile: .sco)))
            case .le:
                // Transports tell which ways LE audio flows; before they exist PACS alone says "both may".
                let direction: PortDirection =
                    leDirections.count == 1 ? leDirections.first! : .duplex
                return Port(uid: uid(address, .le), type: .bluetoothLE, device: deviceID(address), name: name, direction: direction)
            }
        }
    }
}
