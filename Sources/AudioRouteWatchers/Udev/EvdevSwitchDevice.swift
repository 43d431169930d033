import AudioRouteSystem
import AudioRouteDBus
import CUdev
import CLinux
import Glibc

/// An open evdev device (`/dev/input/eventN`) read for its EV_SW switches.
final class EvdevSwitchDevice {
    let descriptor: FileDescriptor
    let path: String

    init(path: String) throws(UdevError) {
        let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw UdevError("open \(path)", errno: errno) }
        self.descriptor = FileDescriptor(owning: fd)
        self.path = path
    }

    var fd: Int32 { descriptor.raw }

    /// The switches the device supports (EVIOCGBIT), or nil if it has no EV_SW at all.
    func supportedSwitches() -> SwitchSet? {
        var types = [UInt8](repeating: 0, count: 8)
        guard types.withUnsafeMutableBytes({ clinux_eviocgbit(fd, 0, $0.baseAddress, 8) }) >= 0 else { return nil }
        guard Self.bit(Int(EV_SW), in: types) else { return nil }
        var codes = [UInt8](repeating: 0, count: 8)
        guard codes.withUnsafeMutableBytes({ clinux_eviocgbit(fd, UInt32(EV_SW), $0.baseAddress, 8) }) >= 0 else { return nil }
        return Self.switchSet(codes)
    }

    /// The switches that are on now (EVIOCGSW).
    func switchState() -> SwitchSet? {
        var state = [UInt8](repeating: 0, count: 8)
        guard state.withUnsafeMutableBytes({ clinux_eviocgsw(fd, $0.baseAddress, 8) }) >= 0 else { return nil }
        return Self.switchSet(state)
    }

    /// The device's name (EVIOCGNAME).
    func name() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBufferPointer { clinux_eviocgname(fd, $0.baseAddress, 255) }
        guard count > 0 else { return nil }
        return buffer.withUnsafeBufferPointer { decodeCString($0.baseAddress)?.value }
    }

    enum ReadResult {
        /// (type, code, value) of each event read.
        case events([(type: UInt16, code: UInt16, value: Int32)])
        /// Nothing more to read now.
        case drained
        /// The device is gone (ENODEV, EOF) or broken.
        case gone(errno: Int32)
    }

    /// Reads what is queued, without blocking.
    func read(into buffer: inout [input_event]) -> ReadResult {
        let size = MemoryLayout<input_event>.stride
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EAGAIN || errno == EINTR { return .drained }
            return .gone(errno: errno)
        }
        if count == 0 { return .gone(errno: 0) }
        let events = (0..<(count / size)).map { (type: buffer[$0].type, code: buffer[$0].code, value: buffer[$0].value) }
        return .events(events)
    }

    static func bit(_ index: Int, in bytes: [UInt8]) -> Bool {
        index / 8 < bytes.count && bytes[index / 8] & (1 << UInt8(index % 8)) != 0
    }

    static func switchSet(_ bytes: [UInt8]) -> SwitchSet {
        var raw: UInt32 = 0
        for index in 0..<min(4, bytes.count) { raw |= UInt32(bytes[index]) << UInt32(8 * index) }
        return SwitchSet(rawValue: raw)
    }
}
