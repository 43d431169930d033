// One way to start the long-lived threads that block in system calls, and to wake them.
import CLinux
import Glibc

/// Starts a detached POSIX thread named `name` running `body`: the event loops (udev, BlueZ,
/// the D-Bus server and client) and the player block in poll or ALSA writes and
/// must not hold a thread of Swift's cooperative pool. The name (15 bytes at most are kept)
/// is set on the thread itself before `body` runs, so per-thread figures (docs/benchmarks.md)
/// and `top -H` find it. Throws pthread_create's error.
public func startThread(name: String, _ body: @escaping @Sendable () -> Void) throws(Errno) {
    let status = startThread {
        _ = name.withCString { clinux_set_thread_name($0) }
        body()
    }
    if let status { throw Errno(Errno.Code(status), "pthread_create", path: name) }
}

/// ``startThread(name:_:)`` for a thread that keeps its process's name. Returns the errno
/// if it could not start.
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
/// Shared by the threads that fire it and the one that polls it; closed when the last owner lets go.
public final class WakeSignal: Sendable {
    private let event: EventFD
    public var fd: Int32 { event.rawValue }

    public init() throws(Errno) { event = try EventFD() }

    public func fire() { event.signal() }

    /// Resets it after it fired (the descriptor is non-blocking: nothing to read is fine).
    public func drain() { event.drain() }
}
