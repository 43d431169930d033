// One abstraction for "read these descriptors on one thread": a component registers its
// sources once, and whoever runs the loop (the daemon's executor, or a thread of its own)
// is the caller's choice, not a second driver inside the component.
import Synchronization

/// A loop that sleeps in one poll(2) on the descriptors given to it and calls their handlers,
/// and runs the calls given to ``schedule(_:)``, all on one thread. Handlers and calls never
/// run concurrently with each other, so state they alone touch needs no lock.
///
/// Two implementations: ``SingleThreadExecutor`` (the daemon's one thread, which also runs
/// Swift concurrency's jobs) and ``PollThread`` (a thread of its own, for a process without
/// that executor: clients, tests, the CLI). Both sleep with no timeout while idle.
public protocol PollLoop: AnyObject, Sendable {
    /// Calls `handler` on the loop whenever `fd` is ready for what `events` asks (asked
    /// before each poll: POLLOUT while a socket has output queued; empty to not look at it
    /// for now), or reports an error or a hang-up, until it returns false or ``unwatch(_:)``.
    /// The handler must consume what made `fd` ready, or it is called again at once. The
    /// caller keeps `fd` open until then. Returns the source's id.
    @discardableResult
    func watch(fd: Int32, events: @escaping @Sendable () -> PollEvents, _ handler: @escaping @Sendable () -> Bool) -> UInt64

    /// Removes source `id`. From the loop's thread, its handler is not called again; from
    /// another, not once the loop is past its current round.
    func unwatch(_ id: UInt64)

    /// Runs `body` on the loop's thread, after what is already scheduled.
    func schedule(_ body: @escaping @Sendable () -> Void)

    /// Makes a sleeping loop go round: a source's `events` have changed.
    func wakeUp()
}

extension PollLoop {
    /// ``watch(fd:events:_:)`` for input.
    @discardableResult
    public func watch(fd: Int32, _ handler: @escaping @Sendable () -> Bool) -> UInt64 {
        watch(fd: fd, events: { .readable }, handler)
    }
}

/// A ``PollLoop`` on a thread of its own, named for per-thread figures and `top -H`. It runs
/// until ``stop()``; the calls scheduled before `stop` run first, those after it never. Sources
/// still registered then are dropped on the thread (their handlers, and what those own, are released there).
public final class PollThread: PollLoop, @unchecked Sendable {
    private struct Source {
        var id: UInt64
        var fd: Int32
        var events: @Sendable () -> PollEvents
        var handler: @Sendable () -> Bool
    }

    private struct State {
        var sources: [Source] = []
        var calls: [@Sendable () -> Void] = []
        var lastID: UInt64 = 0
        /// In (or about to enter) poll: a new call or source must fire `wake`.
        var sleeping = false
    }

    private let state = Mutex(State())
    private let wake: WakeSignal
    /// Set by the call ``stop()`` schedules; read only on the loop's thread.
    private var stopped = false

    /// Starts the thread, named `name` (15 bytes at most are kept).
    public init(name: String) throws(Errno) {
        wake = try WakeSignal()
        try startThread(name: name) { [self] in run() }
    }

    @discardableResult
    public func watch(fd: Int32, events: @escaping @Sendable () -> PollEvents, _ handler: @escaping @Sendable () -> Bool) -> UInt64 {
        state.withLock { state in
            state.lastID += 1
            state.sources.append(Source(id: state.lastID, fd: fd, events: events, handler: handler))
            wakeIfSleeping(&state)
            return state.lastID
        }
    }

    public func unwatch(_ id: UInt64) {
        // The removed source is released after the lock: its handler may own what takes locks.
        let removed = state.withLock { state in
            let index = state.sources.firstIndex { $0.id == id }
            return index.map { state.sources.remove(at: $0) }
        }
        _ = removed
    }

    public func schedule(_ body: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.calls.append(body)
            wakeIfSleeping(&state)
        }
    }

    public func wakeUp() {
        state.withLock { wakeIfSleeping(&$0) }
    }

    /// Ends the thread once the calls scheduled so far have run.
    public func stop() {
        schedule { [self] in stopped = true }
    }

    private func wakeIfSleeping(_ state: inout State) {
        guard state.sleeping else { return }
        state.sleeping = false
        wake.fire()
    }

    private func run() {
        var descriptors: [PollDescriptor] = []
        while true {
            let calls = state.withLock { state in
                defer { state.calls.removeAll() }
                return state.calls
            }
            // Calls scheduled after `stop` are dropped, unrun.
            for call in calls where !stopped { call() }
            if stopped { break }
            // Sleeps only if nothing was scheduled meanwhile.
            guard let watched = state.withLock({ state -> [Source]? in
                guard state.calls.isEmpty else { return nil }
                state.sleeping = true
                return state.sources
            }) else { continue }
            // The sources' events are asked without the lock: a source may take a lock of its
            // own that is held elsewhere while a call is scheduled.
            descriptors.removeAll(keepingCapacity: true)
            descriptors.append(PollDescriptor(fd: wake.fd, events: .readable))
            for source in watched { descriptors.append(PollDescriptor(fd: source.fd, events: source.events())) }
            // A failure other than EINTR (cannot happen with valid descriptors) is looked at again.
            _ = try? Poll.wait(&descriptors, timeoutMilliseconds: -1)
            state.withLock { $0.sleeping = false }
            if !descriptors[0].returned.isEmpty { wake.drain() }
            for (index, source) in watched.enumerated() where !descriptors[index + 1].returned.isEmpty {
                // Not if removed meanwhile (by an earlier handler of this round).
                guard state.withLock({ state in state.sources.contains { $0.id == source.id } }) else { continue }
                if !source.handler() { unwatch(source.id) }
            }
        }
        let left = state.withLock { state in
            defer { state = State(lastID: state.lastID) }
            return (state.sources, state.calls)
        }
        _ = left  // released here, on the loop's thread
    }
}
