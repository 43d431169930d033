import AudioRouteSystem

/// An open evdev device (`/dev/input/eventN`) read for its EV_SW switches.
final class EvdevSwitchDevice {
    let device: EvdevDevice
    let path: String

    init(path: String) throws(Errno) {
        device = try EvdevDevice(path: path)
        self.path = path
    }

    var fd: Int32 { device.fd }

    /// What EVIOCGBIT says of the device's switches.
    enum SwitchCapability {
        /// The ioctl failed: not an evdev device, or not one that answers (a static record).
        case unreadable
        /// An evdev device without EV_SW.
        case none
        case switches(SwitchSet)
    }

    /// The switches the device supports (EVIOCGBIT).
    func switchCapability() -> SwitchCapability {
        guard let types = device.supportedBits(type: nil, bytes: 8) else { return .unreadable }
        guard Self.bit(Int(InputEvent.switchEvent), in: types) else { return .none }
        guard let bits = device.supportedBits(type: InputEvent.switchEvent, bytes: 8) else { return .unreadable }
        return .switches(Self.switchSet(bits))
    }

    /// The switches that are on now (EVIOCGSW).
    func switchState() -> SwitchSet? {
        device.switchBits(bytes: 8).map(Self.switchSet)
    }

    /// The device's name (EVIOCGNAME).
    func name() -> String? { device.name() }

    /// Reads what is queued, without blocking.
    func read() -> EvdevDevice.ReadResult { device.read() }

    static func bit(_ index: Int, in bytes: [UInt8]) -> Bool {
        index / 8 < bytes.count && bytes[index / 8] & (1 << UInt8(index % 8)) != 0
    }

    static func switchSet(_ bytes: [UInt8]) -> SwitchSet {
        var raw: UInt32 = 0
        for index in 0..<min(4, bytes.count) { raw |= UInt32(bytes[index]) << UInt32(8 * index) }
        return SwitchSet(rawValue: raw)
    }
}
