import AudioRouteSystem
import CUdev

// Owned C handles. Each one belongs to exactly one Swift object, which frees it
// in deinit. None is Sendable: they live on the watcher's event-loop thread.

/// Reads a C string from libudev; reports whether it was valid UTF-8 (invalid
/// bytes become U+FFFD so the value never crashes anything downstream).
func decodeCString(_ pointer: UnsafePointer<CChar>?) -> (value: String, valid: Bool)? {
    guard let pointer else { return nil }
    if let valid = String(validatingCString: pointer) { return (valid, true) }
    return (String(cString: pointer), false)
}

/// `struct udev *`.
final class UdevContext {
    let raw: OpaquePointer

    init() throws(Errno) {
        guard let raw = udev_new() else { throw Errno.current("udev_new") }
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

    init(_ context: UdevContext) throws(Errno) {
        guard let raw = udev_enumerate_new(context.raw) else { throw Errno.current("udev_enumerate_new") }
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

    init(_ context: UdevContext, subsystems: [String]) throws(Errno) {
        guard let raw = udev_monitor_new_from_netlink(context.raw, "udev") else {
            throw Errno.current("udev_monitor_new_from_netlink")
        }
        self.raw = raw
        for subsystem in subsystems {
            let status = udev_monitor_filter_add_match_subsystem_devtype(raw, subsystem, nil)
            if status < 0 { throw Errno(Errno.Code(-status), "udev_monitor_filter_add_match_subsystem_devtype") }
        }
        // A storm of uevents must not overflow the socket: ask for a large buffer.
        _ = udev_monitor_set_receive_buffer_size(raw, 8 * 1024 * 1024)
        let status = udev_monitor_enable_receiving(raw)
        if status < 0 { throw Errno(Errno.Code(-status), "udev_monitor_enable_receiving") }
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
        return Errno.Code.current == .noBufferSpace ? .overflowed : .none
    }

    /// Drops every queued message unread; returns how many. After an overflow they are
    /// older than what sysfs shows, and re-applied after a re-enumeration they would undo it.
    @discardableResult
    func discardQueued() -> Int {
        var count = 0
        while true {
            // A zero-length read consumes one whole datagram.
            do {
                try FileDescriptor.discardDatagram(socket: fd)
                count += 1
            } catch where error.code != .interrupted && error.code != .noBufferSpace {
                return count
            } catch {}
        }
    }
}
