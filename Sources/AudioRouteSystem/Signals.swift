// Termination signals without Dispatch: as an AsyncSequence read from a signalfd on the
// daemon's loop, or forwarded from a handler through a pipe (the CLI).
import CLinux
import Glibc
import Synchronization

/// Signals taken synchronously: blocked in every thread, then read where the caller says.
public enum SignalStream {
    /// Blocks `signals` in the calling thread, and so in every thread it starts afterwards,
    /// and returns them, as they arrive, as a stream read by `loop` from a signalfd: no
    /// thread of its own (PipeWire's daemon reads its signals the same way). Call it first
    /// thing in `main`, before any thread exists: a thread started earlier would keep the
    /// default action (terminate). Throws the failed call (pthread_sigmask or signalfd).
    public static func make(_ signals: [Int32], loop: any PollLoop) throws(Errno) -> AsyncStream<Int32> {
        var mask = try block(signals)
        let fd = signalfd(-1, &mask, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        guard fd >= 0 else { throw Errno(Errno.Code(errno), "signalfd", path: "signals") }
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        loop.watch(fd: fd) {
            var info = signalfd_siginfo()
            let size = MemoryLayout<signalfd_siginfo>.size
            while true {
                let count = read(fd, &info, size)
                if count == size {
                    continuation.yield(Int32(bitPattern: info.ssi_signo))
                } else if count < 0 && errno == EINTR {
                    continue
                } else if count < 0 && errno == EAGAIN {
                    return true
                } else {
                    // Cannot happen with a valid signalfd; stop watching rather than spin.
                    close(fd)
                    continuation.finish()
                    return false
                }
            }
        }
        return stream
    }

    /// Blocks `signals` in the calling thread. (A signal the parent left ignored is still
    /// queued while blocked: Linux never discards a blocked signal.)
    private static func block(_ signals: [Int32]) throws(Errno) -> sigset_t {
        var mask = sigset_t()
        sigemptyset(&mask)
        for number in signals { sigaddset(&mask, number) }
        let status = pthread_sigmask(SIG_BLOCK, &mask, nil)
        guard status == 0 else { throw Errno(Errno.Code(status), "pthread_sigmask", path: "signals") }
        return mask
    }
}

/// Calls `action` when one of `signals` arrives, in a process whose threads already exist (the
/// CLI: `SignalStream` must come before any thread). The handler is installed before `init`
/// returns, so a signal that comes right after is never lost: it writes the number to a pipe
/// (async-signal-safe), and one thread reads the pipe and calls the registered actions.
///
/// Why not Dispatch signal sources: they register asynchronously, on Dispatch's manager
/// thread, and the signal must be ignored first; one that arrives in between is dropped (seen:
/// `audioroute monitor` and `play` not stopping on a SIGTERM sent right after their first line).
///
/// Before the first `SignalForward` a signal has its default action. After `cancel`, a signal
/// with no action left is dropped, as an ignored one would be.
public final class SignalForward: Sendable {
    private let id: UInt64

    public init(signals: [Int32], _ action: @escaping @Sendable (Int32) -> Void) {
        id = SignalRelay.register(signals: signals, action)
    }

    /// No more calls to the action (one already under way finishes).
    public func cancel() { SignalRelay.unregister(id) }

    deinit { cancel() }
}

private enum SignalRelay {
    struct Registration {
        var signals: Set<Int32>
        var action: @Sendable (Int32) -> Void
    }

    struct State {
        var nextID: UInt64 = 0
        var registrations: [UInt64: Registration] = [:]
        var installed: Set<Int32> = []
    }

    static let state = Mutex(State())

    /// The pipe the handler writes to; its reading thread starts with it. (-1, -1) if either
    /// could not be made: then no handler is installed and signals keep their default action.
    static let channel: (read: Int32, write: Int32) = {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return (-1, -1) }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        // The handler must never block, even if the reader falls behind.
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        let reader = fds[0]
        if startThread({ relay(from: reader) }) != nil {
            close(fds[0])
            close(fds[1])
            return (-1, -1)
        }
        return (fds[0], fds[1])
    }()

    static func register(signals: [Int32], _ action: @escaping @Sendable (Int32) -> Void) -> UInt64 {
        let writeEnd = channel.write
        return state.withLock { state in
            state.nextID += 1
            state.registrations[state.nextID] = Registration(signals: Set(signals), action: action)
            guard writeEnd >= 0 else { return state.nextID }
            for number in signals where !state.installed.contains(number) {
                var handler = sigaction()
                handler.__sigaction_handler.sa_handler = { number in
                    let saved = errno
                    var byte = UInt8(truncatingIfNeeded: number)
                    _ = write(SignalRelay.channel.write, &byte, 1)
                    errno = saved
                }
                sigemptyset(&handler.sa_mask)
                handler.sa_flags = SA_RESTART
                if sigaction(number, &handler, nil) == 0 { state.installed.insert(number) }
            }
            return state.nextID
        }
    }

    static func unregister(_ id: UInt64) {
        _ = state.withLock { $0.registrations.removeValue(forKey: id) }
    }

    private static func relay(from fd: Int32) {
        var byte: UInt8 = 0
        while true {
            let count = read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else { return }
            let number = Int32(byte)
            let actions = state.withLock { $0.registrations.values.filter { $0.signals.contains(number) }.map(\.action) }
            for action in actions { action(number) }
        }
    }
}
