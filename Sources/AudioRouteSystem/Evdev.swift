// evdev (/dev/input/eventN): the ioctls and the event records, for the jack switches.
import CLinux
import Glibc

/// One `struct input_event`, without its timestamp.
public struct InputEvent: Sendable, Hashable {
    public var type: UInt16
    public var code: UInt16
    public var value: Int32

    public init(type: UInt16, code: UInt16, value: Int32) {
        self.type = type
        self.code = code
        self.value = value
    }

    /// EV_SYN: a report boundary (SYN_REPORT) or a note that events were dropped (SYN_DROPPED).
    public static let synchronization = UInt16(EV_SYN)
    /// EV_SW: a switch (a jack's plug detection) changed.
    public static let switchEvent = UInt16(EV_SW)
    public static let report = UInt16(SYN_REPORT)
    /// The kernel's buffer overflowed: the only truth left is the current state.
    public static let dropped = UInt16(SYN_DROPPED)
}

/// An open evdev device, read without blocking.
public struct EvdevDevice: ~Copyable, Sendable {
    public let descriptor: FileDescriptor

    /// Opens `path` read-only and non-blocking.
    public init(path: String) throws(Errno) {
        descriptor = try FileDescriptor.open(path, [.readOnly, .nonBlocking])
    }

    public var fd: Int32 { descriptor.rawValue }

    /// EVIOCGBIT: a bitmap of the event types (`type` nil) or of the codes of `type` the
    /// device supports, `bytes` long; nil if the ioctl fails.
    public func supportedBits(type: UInt16?, bytes: Int) -> [UInt8]? {
        var bits = [UInt8](repeating: 0, count: bytes)
        let r = bits.withUnsafeMutableBytes { clinux_eviocgbit(fd, UInt32(type ?? 0), $0.baseAddress, UInt32(bytes)) }
        return r >= 0 ? bits : nil
    }

    /// EVIOCGSW: a bitmap of the switches that are on now, `bytes` long; nil if it fails.
    public func switchBits(bytes: Int) -> [UInt8]? {
        var bits = [UInt8](repeating: 0, count: bytes)
        let r = bits.withUnsafeMutableBytes { clinux_eviocgsw(fd, $0.baseAddress, UInt32(bytes)) }
        return r >= 0 ? bits : nil
    }

    /// EVIOCGNAME: the device's name, or nil.
    public func name() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBufferPointer { clinux_eviocgname(fd, $0.baseAddress, 255) }
        guard count > 0 else { return nil }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// What one read gives.
    public enum ReadResult: Sendable {
        case events([InputEvent])
        /// Nothing more to read now.
        case drained
        /// The device is gone: the end of the file (nil), ENODEV, or another error.
        case gone(Errno?)
    }

    /// Reads up to `maxCount` queued events, without blocking.
    public func read(maxCount: Int = 64) -> ReadResult {
        withUnsafeTemporaryAllocation(of: input_event.self, capacity: maxCount) { buffer in
            let count = Glibc.read(fd, buffer.baseAddress, maxCount * MemoryLayout<input_event>.stride)
            if count < 0 {
                let code = Errno.Code.current
                if code == .wouldBlock || code == .interrupted { return .drained }
                return .gone(Errno(code, "read"))
            }
            if count == 0 { return .gone(nil) }
            return .events((0..<(count / MemoryLayout<input_event>.stride)).map {
                InputEvent(type: buffer[$0].type, code: buffer[$0].code, value: buffer[$0].value)
            })
        }
    }
}
