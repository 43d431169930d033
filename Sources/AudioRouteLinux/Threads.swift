// One way to start the long-lived threads that block in system calls, and to wake them.
import CSystemd  // eventfd (its shim includes <sys/eventfd.h>; Glibc's module map does not)
import Glibc

/// Starts a detached POSIX thread running `body`: the event loops (udev, BlueZ,
/// the D-Bus server and client) and the player block in poll or ALSA writes and
/// must not hold a thread of Swift's cooperative pool. Returns the errno if it could not.
public func startThread(_ body: @escaping @Sendable () -> Void) -> Int32? {
    final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { raw in
        let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
        box.body()
        return nil
    }, context)
    guard status == 0 else {
        Unmanaged<Box>.fromOpaque(context).release()
        return status
    }
    pthread_detach(thread)
    return nil
}

/// An eventfd that wakes a thread sleeping in poll(2) on it: new work, or a request to stop.
/// Closed when the last owner lets go.
final class WakeSignal: Sendable {
    let fd: Int32

    init() throws(BusError) {
        let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard fd >= 0 else { throw BusError(operation: "create eventfd", errno: errno) }
        self.fd = fd
    }

    func fire() {
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }

    /// Resets it after it fired (the descriptor is non-blocking: nothing to read is fine).
    func drain() {
        var count: UInt64 = 0
        _ = read(fd, &count, 8)
    }

    deinit { close(fd) }
}
