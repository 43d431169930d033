// One thread for every Swift-concurrency job of a process that must not wake while idle.
import CSwiftConcurrency
import Glibc
import Synchronization

/// Swift concurrency's executor for `audiorouted`: the main actor's jobs and the global
/// executor's jobs all run, in the order they were enqueued, on the one thread that calls
/// ``run()``. That thread sleeps in a single poll(2), with no timeout unless a
/// ``sleep(for:)`` is due, so an idle daemon makes no wake-ups.
///
/// The same poll waits on the descriptors given to ``watch(fd:events:_:)``: it is a
/// ``PollLoop``, so a source such as the udev monitor, the D-Bus connection or a signalfd is
/// read on the loop thread itself, and its events reach the daemon's tasks without waking
/// another thread first (PipeWire's daemon works the same way: one loop). Without this
/// executor, the same components run on a ``PollThread``.
///
/// Why not Dispatch, Swift's default executor on Linux: once one of its worker threads
/// exists it arms a 1 Hz timer (its worker-pool monitor) that runs for the life of the
/// process (docs/benchmarks.md). The daemon's work is small and event driven.
///
/// ``install()`` replaces the runtime's default executors through its hooks
/// (swift/Runtime/ConcurrencyHooks.def; swift-nio uses the same hooks to run Swift
/// concurrency on its event loops). Call it before the first task is created.
///
/// With one thread, a job must never block waiting for another job: it would wait forever.
/// `Task.sleep` still works but is timed by Dispatch (it starts Dispatch's threads and
/// their monitor); code that runs under this executor sleeps with ``sleep(for:)``.
public final class SingleThreadExecutor: TaskExecutor, PollLoop, @unchecked Sendable {
    /// The process's executor (there is one main thread to run it).
    public static let shared = SingleThreadExecutor()

    private enum Work {
        case global(UnownedJob)
        case main(UnownedJob)
        case resume(UnsafeContinuation<Void, any Error>, cancelled: Bool)
        case call(@Sendable () -> Void)
    }

    private struct Source {
        var id: UInt64
        var fd: Int32
        /// The poll(2) events to wait for, asked before each poll (outside the executor's lock).
        var events: @Sendable () -> PollEvents
        /// Runs on the loop when `fd` is ready (or in error); false removes the source.
        var handler: @Sendable () -> Bool
    }

    private enum Sleeper {
        /// Between `sleep`'s start and its continuation's registration.
        case starting
        /// Cancelled before the continuation was registered.
        case cancelled
        case waiting(UnsafeContinuation<Void, any Error>)
    }

    private struct Timer {
        var deadline: UInt64
        var id: UInt64
    }

    /// What the threads that enqueue work share with the loop. `wake` (an eventfd in the
    /// loop's poll set) is written when work or a new timer arrives while the loop sleeps.
    private struct State {
        var sleeping = false
        var ready: [Work] = []
        var sources: [Source] = []
        /// Sorted by deadline, then id: the first is the next due.
        var timers: [Timer] = []
        var sleepers: [UInt64: Sleeper] = [:]
        var lastID: UInt64 = 0
        var jobs: UInt64 = 0
        var loopThread: pthread_t?
    }

    private let state = Mutex(State())
    private let wake: WakeSignal

    /// A new executor; most code wants ``shared``.
    public init() {
        // Without it the loop could not sleep at all: a process that cannot make one eventfd
        // (EMFILE at start) cannot run.
        do { wake = try WakeSignal() } catch { preconditionFailure("\(error)") }
    }

    /// Makes this executor the process's main and global executor. Returns false, and
    /// changes nothing, if another executor's hooks are already installed.
    @discardableResult
    public func install() -> Bool {
        guard audioroute_executor_hooks_installed() == 0 else { return false }
        precondition(self === Self.shared, "only the shared executor is installed")
        // Hooks receive their arguments and the runtime's own implementation, not used here.
        typealias Original = @convention(thin) (UnownedJob) -> Void
        typealias Hook = @convention(thin) (UnownedJob, Original) -> Void
        typealias GetMainOriginal = @convention(thin) () -> UnownedSerialExecutor
        typealias GetMainHook = @convention(thin) (GetMainOriginal) -> UnownedSerialExecutor
        let global: Hook = { job, _ in SingleThreadExecutor.shared.push(.global(job)) }
        let main: Hook = { job, _ in SingleThreadExecutor.shared.push(.main(job)) }
        // The main actor's executor is Dispatch's main queue, which nothing would drain:
        // it becomes the loop's main-actor side.
        let getMain: GetMainHook = { _ in SingleThreadExecutor.mainActorExecutor.asUnownedSerialExecutor() }
        audioroute_set_executor_hooks(
            unsafeBitCast(global, to: UnsafeMutableRawPointer.self), unsafeBitCast(main, to: UnsafeMutableRawPointer.self),
            unsafeBitCast(getMain, to: UnsafeMutableRawPointer.self))
        return true
    }

    /// The main actor's jobs, run on the loop with the main actor's identity.
    private final class MainActorExecutor: SerialExecutor, @unchecked Sendable {
        func enqueue(_ job: consuming ExecutorJob) { SingleThreadExecutor.shared.push(.main(UnownedJob(job))) }
        func isIsolatingCurrentContext() -> Bool? { SingleThreadExecutor.shared.isLoopThread }
        func checkIsolated() {
            precondition(SingleThreadExecutor.shared.isLoopThread, "not on the main actor: not on the executor's loop thread")
        }
    }

    private static let mainActorExecutor = MainActorExecutor()

    /// Whether the calling thread runs the loop.
    public var isLoopThread: Bool {
        guard let thread = state.withLock({ $0.loopThread }) else { return false }
        return pthread_equal(thread, pthread_self()) != 0
    }

    /// Runs jobs and source handlers on the calling thread, for ever. Call it from the main
    /// thread after ``install()`` and after creating the first task; the program ends with `exit`.
    public func run() -> Never {
        state.withLock { $0.loopThread = pthread_self() }
        var batch: [Work] = []
        var fds: [PollDescriptor] = []
        var watched: [Source] = []
        var busyRounds: UInt = 0
        while true {
            let (look, timeout) = state.withLock { state -> (Bool, Int32) in
                Self.moveDueTimers(&state, now: MonotonicClock.nanoseconds())
                let idle = state.ready.isEmpty
                // Milliseconds, rounded up (a sleep never ends early); -1 waits for ever. Deadlines
                // are CLOCK_MONOTONIC: a wall-clock change must not move them.
                var timeout: Int32 = 0
                if idle {
                    state.sleeping = true
                    if let next = state.timers.first {
                        let left = next.deadline &- min(next.deadline, MonotonicClock.nanoseconds())
                        timeout = Int32(clamping: (left + 999_999) / 1_000_000)
                    } else {
                        timeout = -1
                    }
                }
                // With work waiting, the sources are looked at (timeout 0) every 16th round, so that
                // they are not starved and a burst of jobs (one per actor hop) costs no poll each.
                busyRounds = idle ? 0 : busyRounds &+ 1
                let look = idle || (!state.sources.isEmpty && busyRounds % 16 == 0)
                watched.removeAll(keepingCapacity: true)
                if look { watched.append(contentsOf: state.sources) }
                return (look, timeout)
            }
            fds.removeAll(keepingCapacity: true)
            if look {
                // The sources' events are asked without the lock: a source may take a lock of its
                // own that is held elsewhere while a job is enqueued.
                fds.append(PollDescriptor(fd: wake.fd, events: .readable))
                for source in watched { fds.append(PollDescriptor(fd: source.fd, events: source.events())) }
                // EINTR reports nothing: look again. Nothing else can fail with valid descriptors.
                _ = try? Poll.wait(&fds, timeoutMilliseconds: timeout)
            }
            state.withLock { state in
                state.sleeping = false
                // Only after a poll has time passed: timers due before it were moved above.
                if look { Self.moveDueTimers(&state, now: MonotonicClock.nanoseconds()) }
                swap(&batch, &state.ready)
                state.jobs &+= UInt64(batch.count)
            }
            if !fds.isEmpty, !fds[0].returned.isEmpty { wake.drain() }
            for (index, source) in watched.enumerated() where !fds[index + 1].returned.isEmpty {
                if !source.handler() { unwatch(source.id) }
            }
            for work in batch {
                switch work {
                case .global(let job): job.runSynchronously(on: asUnownedTaskExecutor())
                case .main(let job): job.runSynchronously(on: Self.mainActorExecutor.asUnownedSerialExecutor())
                case .resume(let continuation, let cancelled):
                    if cancelled { continuation.resume(throwing: CancellationError()) } else { continuation.resume() }
                case .call(let body): body()
                }
            }
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// Runs `body` on the loop thread, after the jobs already enqueued.
    public func schedule(_ body: @escaping @Sendable () -> Void) {
        push(.call(body))
    }

    /// Calls `handler` on the loop thread whenever `fd` is readable (or, with `events`, ready
    /// for what `events` asks before each poll: POLLOUT while a socket has output queued), or
    /// reports an error or a hang-up, until it returns false or ``unwatch(_:)``. The handler
    /// must consume what made `fd` ready, or it is called again at once. The caller keeps
    /// `fd` open until then. Returns the source's id.
    @discardableResult
    public func watch(fd: Int32, events: @escaping @Sendable () -> PollEvents, _ handler: @escaping @Sendable () -> Bool) -> UInt64 {
        state.withLock { state in
            state.lastID += 1
            state.sources.append(Source(id: state.lastID, fd: fd, events: events, handler: handler))
            Self.wakeIfSleeping(&state, wake)
            return state.lastID
        }
    }

    /// Removes source `id`; its handler is not called again once the loop is past its
    /// current round (at once, when called from the loop thread between handlers: a job).
    public func unwatch(_ id: UInt64) {
        state.withLock { $0.sources.removeAll { $0.id == id } }
    }

    /// Makes a sleeping loop go round: a source's `events` have changed.
    public func wakeUp() {
        state.withLock { Self.wakeIfSleeping(&$0, wake) }
    }

    /// Enqueues a job (the `TaskExecutor` requirement: tasks that prefer this executor).
    public func enqueue(_ job: consuming ExecutorJob) {
        push(.global(UnownedJob(job)))
    }

    /// How many jobs and timer wake-ups have run so far.
    public var jobsRun: UInt64 {
        state.withLock { $0.jobs }
    }

    /// Suspends the calling task for `duration`, timed by this executor's loop. Throws
    /// `CancellationError` at once if the task is or gets cancelled.
    public func sleep(for duration: Duration) async throws {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        let deadline = MonotonicClock.nanoseconds() &+ UInt64(nanoseconds)
        let id = state.withLock { state -> UInt64 in
            state.lastID += 1
            state.sleepers[state.lastID] = .starting
            return state.lastID
        }
        let wake = self.wake
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                let cancelledEarly = state.withLock { state -> Bool in
                    if case .cancelled = state.sleepers[id] {
                        state.sleepers[id] = nil
                        return true
                    }
                    state.sleepers[id] = .waiting(continuation)
                    let timer = Timer(deadline: deadline, id: id)
                    let index = state.timers.firstIndex { ($0.deadline, $0.id) > (deadline, id) } ?? state.timers.endIndex
                    state.timers.insert(timer, at: index)
                    Self.wakeIfSleeping(&state, wake)
                    return false
                }
                if cancelledEarly { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            state.withLock { state in
                switch state.sleepers[id] {
                case .starting: state.sleepers[id] = .cancelled
                case .waiting(let continuation):
                    // Resumed by the loop, not here: onCancel may run on any thread, under the canceller's locks.
                    state.sleepers[id] = nil
                    state.timers.removeAll { $0.id == id }
                    state.ready.append(.resume(continuation, cancelled: true))
                    Self.wakeIfSleeping(&state, wake)
                case .cancelled, nil: break
                }
            }
        }
    }

    private func push(_ work: Work) {
        let wasSleeping = state.withLock { state in
            state.ready.append(work)
            defer { state.sleeping = false }
            return state.sleeping
        }
        // After unlocking: the woken loop does not then block on the mutex still held here.
        // Not when the loop is awake (the loop itself, mostly): it takes `ready` before it sleeps.
        if wasSleeping { wake.fire() }
    }

    /// Called with the lock held.
    private static func wakeIfSleeping(_ state: inout State, _ wake: WakeSignal) {
        guard state.sleeping else { return }
        state.sleeping = false
        wake.fire()
    }

    /// Moves the timers due at `now` to the ready list. Called with the lock held.
    private static func moveDueTimers(_ state: inout State, now: UInt64) {
        var due = 0
        while due < state.timers.count, state.timers[due].deadline <= now {
            if case .waiting(let continuation) = state.sleepers.removeValue(forKey: state.timers[due].id) {
                state.ready.append(.resume(continuation, cancelled: false))
            }
            due += 1
        }
        if due > 0 { state.timers.removeFirst(due) }
    }
}
