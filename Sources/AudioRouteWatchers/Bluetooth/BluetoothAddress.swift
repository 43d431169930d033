// libbluetooth, wrapped once: device addresses, the class of device, and
// whether this machine has a Bluetooth adapter at all.

import AudioRouteSystem
import CBluetooth

/// A Bluetooth device address (bdaddr), validated and formatted by libbluetooth.
public struct BluetoothAddress: Sendable, Hashable, CustomStringConvertible {
    /// The canonical form: six upper-case hex pairs separated by colons.
    public let text: String

    /// Parses `string`; nil unless libbluetooth's `bachk` accepts it.
    public init?(_ string: String) {
        // bachk only checks the shape; it reads at most 17 characters plus the NUL.
        guard string.utf8.count == 17, string.withCString({ bachk($0) }) == 0 else { return nil }
        var address = bdaddr_t()
        guard string.withCString({ str2ba($0, &address) }) == 0 else { return nil }
        // ba2str writes 17 characters and a NUL.
        var buffer = [CChar](repeating: 0, count: 18)
        guard ba2str(&address, &buffer) == 17 else { return nil }
        text = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    public var description: String { text }
}

/// What the class of device (CoD) says a device is: the Audio/Video major class's minor classes.
public enum BluetoothDeviceKind: String, Sendable, Hashable, CaseIterable {
    case wearableHeadset
    case handsFree
    case microphone
    case loudspeaker
    case headphones
    case portableAudio
    case carAudio
    case hifiAudio
    /// Audio/Video, but a minor class we do not name (video devices, set-top boxes).
    case otherAudioVideo

    /// Decodes a 24-bit class of device; nil unless its major class is Audio/Video (0x04).
    public init?(classOfDevice: UInt32) {
        let major = (classOfDevice >> 8) & 0x1F
        guard major == 0x04 else { return nil }
        switch (classOfDevice >> 2) & 0x3F {
        case 0x01: self = .wearableHeadset
        case 0x02: self = .handsFree
        case 0x04: self = .microphone
        case 0x05: self = .loudspeaker
        case 0x06: self = .headphones
        case 0x07: self = .portableAudio
        case 0x08: self = .carAudio
        case 0x0A: self = .hifiAudio
        default: self = .otherAudioVideo
        }
    }

    /// A human name, used for a port when the device has no usable Alias or Name.
    public var displayName: String {
        switch self {
        case .wearableHeadset: return "Bluetooth Headset"
        case .handsFree: return "Bluetooth Hands-Free"
        case .microphone: return "Bluetooth Microphone"
        case .loudspeaker: return "Bluetooth Speaker"
        case .headphones: return "Bluetooth Headphones"
        case .portableAudio: return "Bluetooth Portable Audio"
        case .carAudio: return "Car Audio"
        case .hifiAudio: return "Bluetooth HiFi Audio"
        case .otherAudioVideo: return "Bluetooth Audio"
        }
    }

    /// Whether the device has a microphone by its class: a hint only, the
    /// profiles it offers (UUIDs) decide which ports exist.
    public var suggestsMicrophone: Bool {
        switch self {
        case .wearableHeadset, .handsFree, .microphone, .carAudio: return true
        case .loudspeaker, .headphones, .portableAudio, .hifiAudio, .otherAudioVideo: return false
        }
    }
}

/// Whether this machine has a Bluetooth adapter, asked of the kernel through libbluetooth.
public enum BluetoothAdapterStatus: Sendable, Hashable, CustomStringConvertible {
    /// An adapter exists; `deviceID` is the HCI device of the default route (hci0 is 0).
    case present(deviceID: Int32)
    /// No adapter: the kernel has no Bluetooth (EAFNOSUPPORT) or no HCI device (ENODEV). A normal state.
    case absent(Errno.Code)
    /// The probe failed for another reason.
    case unknown(Errno.Code)

    /// Probes the default HCI route (`hci_get_route`).
    public static func probe() -> BluetoothAdapterStatus {
        Errno.Code.current = .none
        let id = hci_get_route(nil)
        if id >= 0 { return .present(deviceID: id) }
        return classify(.current)
    }

    /// The status that an errno from a failed probe means.
    public static func classify(_ code: Errno.Code) -> BluetoothAdapterStatus {
        switch code {
        case .addressFamilyNotSupported, .noSuchDevice, .protocolNotSupported: return .absent(code)
        default: return .unknown(code)
        }
    }

    public var description: String {
        switch self {
        case .present(let id): return "Bluetooth adapter hci\(id)"
        case .absent: return "no Bluetooth adapter"
        case .unknown(let code): return "Bluetooth adapter status unknown: \(code)"
        }
    }
}
