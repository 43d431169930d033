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

    /// The switches the device supports (EVIOCGBIT), or nil if it has no EV_SW at all.
    func supportedSwitches() -> SwitchSet? {
        guard let types = device.supportedBits(type: nil, bytes: 8), Self.bit(Int(InputEvent.switchEvent), in: types) else { return nil }
        return device.supportedBits(type: InputEvent.switchEvent, bytes: 8).map(Self.switchSet)
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
