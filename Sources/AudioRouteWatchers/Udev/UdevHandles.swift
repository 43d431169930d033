import AudioRouteSystem
import AudioRouteDBus
import CUdev
import CLinux
import Glibc

// Owned C handles. Each one belongs to exactly one Swift object, which frees it
// in deinit. None is Sendable: they live on the watcher's event-loop thread.

/// A failed system or libudev call, with its errno.
public struct UdevError: Error, Sendable, Hashable, CustomStringConvertible {
    public var operation: String
    public var errno: Int32

    public init(_ operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String {
        errno == 0 ? "\(operation) failed" : "\(operation) failed: \(String(cString: strerror(errno)))"
    }
}

/// Reads a C string from libudev; reports whether it was valid UTF-8 (invalid
/// bytes become U+FFFD so the value never crashes anything downstream).
func decodeCString(_ pointer: UnsafePointer<CChar>?) -> (value: String, valid: Bool)? {
    guard let pointer else { return nil }
    let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer))
    if let valid = String(validating: bytes, as: UTF8.self) { return (valid, true) }
    return (String(decoding: bytes, as: UTF8.self), false)
}

/// `struct udev *`.
final class UdevContext {
    let raw: OpaquePointer

    init() throws(UdevError) {
        guard let raw = udev_new() else { throw UdevError("udev_new", errno: errno) }
        self.raw = raw
    }

    deinit { udev_unref(raw) }

    func device(syspath: String) -> UdevDevice? {
        udev_device_new_from_syspath(raw, syspath).map(UdevDevice.init(owning:))
    }
}

/// `struct udev_device *`, one reference.
final class UdevDevice {
    let raw: OpaquePointer

    init(owning raw: OpaquePointer) { self.raw = raw }

    deinit { udev_device_unref(raw) }

    var syspath: String { decodeCString(udev_device_get_syspath(raw))?.value ?? "" }
    var sysname: String { decodeCString(udev_device_get_sysname(raw))?.value ?? "" }
    var subsystem: String? { decodeCString(udev_device_get_subsystem(raw))?.value }
    var action: String? { decodeCString(udev_device_get_action(raw))?.value }
    var devnode: String? { decodeCString(udev_device_get_devnode(raw))?.value }
    var driver: String? { decodeCString(udev_device_get_driver(raw))?.value }

    func attribute(_ name: String) -> (value: String, valid: Bool)? {
        decodeCString(udev_device_get_sysattr_value(raw, name))
    }

    /// Every udev property; names of invalid UTF-8 values are listed in `invalid`.
    func properties() -> (values: [String: String], invalid: [String]) {
        var values: [String: String] = [:]
        var invalid: [String] = []
        var entry = udev_device_get_properties_list_entry(raw)
        while let current = entry {
            if let name = decodeCString(udev_list_entry_get_name(current)), let value = decodeCString(udev_list_entry_get_value(current)) {
                values[name.value] = value.value
                if !value.valid || !name.valid { invalid.append(name.value) }
            }
            entry = udev_list_entry_get_next(current)
        }
        return (values, invalid)
    }

    /// The direct parent (a new reference), or nil.
    func parent() -> UdevDevice? {
        guard let parent = udev_device_get_parent(raw) else { return nil }
        return UdevDevice(owning: udev_device_ref(parent))
    }
}

/// `struct udev_enumerate *`.
final class UdevEnumerator {
    let raw: OpaquePointer

    init(_ context: UdevContext) throws(UdevError) {
        guard let raw = udev_enumerate_new(context.raw) else { throw UdevError("udev_enumerate_new", errno: errno) }
        self.raw = raw
    }

    deinit { udev_enumerate_unref(raw) }

    func match(subsystem: String) { udev_enumerate_add_match_subsystem(raw, subsystem) }
    func match(sysname: String) { udev_enumerate_add_match_sysname(raw, sysname) }
    func match(parent: UdevDevice) { udev_enumerate_add_match_parent(raw, parent.raw) }

    /// Scans and returns the syspaths found, sorted.
    func syspaths() -> [String] {
        guard udev_enumerate_scan_devices(raw) >= 0 else { return [] }
        var result: [String] = []
        var entry = udev_enumerate_get_list_entry(raw)
        while let current = entry {
            if let name = decodeCString(udev_list_entry_get_name(current)) { result.append(name.value) }
            entry = udev_list_entry_get_next(current)
        }
        return result.sorted()
    }
}

/// `struct udev_monitor *` on the "udev" netlink group, filtered to sound and input.
final class UdevMonitor {
    let raw: OpaquePointer

    init(_ context: UdevContext, subsystems: [String]) throws(UdevError) {
        guard let raw = udev_monitor_new_from_netlink(context.raw, "udev") else {
            throw UdevError("udev_monitor_new_from_netlink", errno: errno)
        }
        self.raw = raw
        for subsystem in subsystems {
            let status = udev_monitor_filter_add_match_subsystem_devtype(raw, subsystem, nil)
            if status < 0 { throw UdevError("udev_monitor_filter_add_match_subsystem_devtype", errno: -status) }
        }
        // A storm of uevents must not overflow the socket: ask for a large buffer.
        _ = udev_monitor_set_receive_buffer_size(raw, 8 * 1024 * 1024)
        let status = udev_monitor_enable_receiving(raw)
        if status < 0 { throw UdevError("udev_monitor_enable_receiving", errno: -status) }
    }

    deinit { udev_monitor_unref(raw) }

    var fd: Int32 { udev_monitor_get_fd(raw) }

    /// What one read of the monitor gives.
    enum Received {
        case device(UdevDevice)
        /// Nothing is waiting (the socket is non-blocking), or what came was not for us.
        case none
        /// The receive buffer overflowed since the last read: the kernel dropped uevents.
        case overflowed
    }

    /// The next queued device event, if any.
    func receive() -> Received {
        if let device = udev_monitor_receive_device(raw) { return .device(UdevDevice(owning: device)) }
        return errno == ENOBUFS ? .overflowed : .none
    }

    /// Drops every queued message unread; returns how many. After an overflow they are
    /// older than what sysfs shows, and re-applied after a re-enumeration they would undo it.
    @discardableResult
    func discardQueued() -> Int {
        var count = 0
        while true {
            // A zero-length read consumes one whole datagram.
            if recv(fd, nil, 0, Int32(MSG_DONTWAIT)) >= 0 {
                count += 1
            } else if errno != EINTR && errno != ENOBUFS {
                return count
            }
        }
    }
}

/// An owned file descriptor.
final class FileDescriptor {
    let raw: Int32

    init(owning raw: Int32) { self.raw = raw }

    deinit { _ = Glibc.close(raw) }
}

/// An epoll instance.
final class Epoll {
    let descriptor: FileDescriptor

    init() throws(UdevError) {
        let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw UdevError("epoll_create1", errno: errno) }
        descriptor = FileDescriptor(owning: fd)
    }

    /// Watches `fd` for input; `token` comes back with its readiness.
    func add(_ fd: Int32, token: UInt64) throws(UdevError) {
        var event = epoll_event()
        event.events = clinux_epollin
        event.data.u64 = token
        guard epoll_ctl(descriptor.raw, EPOLL_CTL_ADD, fd, &event) == 0 else { throw UdevError("epoll_ctl(ADD)", errno: errno) }
    }

    func remove(_ fd: Int32) {
        var event = epoll_event()
        _ = epoll_ctl(descriptor.raw, EPOLL_CTL_DEL, fd, &event)
    }

    /// Waits until something is ready, at most `timeoutMilliseconds` (-1: no timeout, so
    /// no wake-ups while idle; 0: only what is ready now).
    func wait(into buffer: inout [epoll_event], timeoutMilliseconds: Int32) -> Int {
        let capacity = Int32(buffer.count)
        while true {
            let count = buffer.withUnsafeMutableBufferPointer { epoll_wait(descriptor.raw, $0.baseAddress, capacity, timeoutMilliseconds) }
            if count >= 0 { return Int(count) }
            if errno != EINTR { return -1 }
        }
    }
}

/// An eventfd that wakes the loop to stop. Sendable: writing is thread-safe.
final class StopSignal: Sendable {
    let fd: Int32

    init() throws(UdevError) {
        let fd = clinux_eventfd_cloexec_nonblock()
        guard fd >= 0 else { throw UdevError("eventfd", errno: errno) }
        self.fd = fd
    }

    func fire() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { Glibc.write(fd, $0.baseAddress, 8) }
    }

    deinit { _ = Glibc.close(fd) }
}
