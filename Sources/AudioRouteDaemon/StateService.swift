// Saving the state: at once for what a user set, coalesced for what hardware
// does (a dock with six ports arriving is one write, not six).
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Logging
import ServiceLifecycle

/// Persists the daemon's state through a `StateStore`, writing on a thread of its own.
///
/// `persist` has written before it returns (a user's setting must survive a kill -9
/// right after it was acknowledged); `submit` marks the state dirty and the
/// service writes the latest state once the storm has settled for
/// `coalescing` (at most `maximumPeriods` periods after it began), and once
/// more at shutdown.
public actor StateService: Service {
    public let store: StateStore
    private let coalescing: Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    private let logger: Logger
    private var latest: DaemonState
    /// The version of `latest`: callers number their snapshots, so one that
    /// arrives late (actor calls can overtake each other) never replaces a newer one.
    private var latestVersion: UInt64 = 0
    private var saved: DaemonState?
    /// The latest snapshot version known written.
    private var savedVersion: UInt64 = 0
    /// A write is under way on its thread.
    private var writing = false
    /// Who waits for which snapshot to be written.
    private var waiters: [(UInt64, CheckedContinuation<Result<Void, Errno>, Never>)] = []
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    /// Writes done, for tests and logs.
    public private(set) var saveCount = 0

    /// `initial` is what was loaded (it is not written again unless it changes).
    /// `sleep` times the coalescing (audiorouted passes its executor's, which needs no
    /// Dispatch timer: docs/daemon.md).
    public init(
        store: StateStore, initial: DaemonState, coalescing: Duration = .milliseconds(500),
        sleep: @escaping @Sendable (Duration) async throws -> Void = StateService.taskSleep,
        logger: Logger
    ) {
        self.store = store
        self.coalescing = coalescing
        self.sleep = sleep
        self.logger = logger
        latest = initial
        saved = initial
        // One pending wake-up is enough: the save writes the latest state.
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// The state as last submitted or persisted.
    public var state: DaemonState { latest }

    /// Records `state`, snapshot number `version`; it is written within
    /// `coalescing` (or at shutdown). An older snapshot than the latest is ignored.
    public func submit(_ state: DaemonState, version: UInt64) {
        guard record(state, version: version) else { return }
        if latest != saved { wake.yield() }
    }

    /// Records snapshot `version` and returns once the latest state is written: a user's
    /// setting is durable when its request is answered. Throws when the write fails; the state
    /// stays pending and a later save retries it.
    public func persist(_ state: DaemonState, version: UInt64) async throws(Errno) {
        record(state, version: version)
        try await saved(version).get()
    }

    /// Records snapshot `version` without waiting for its write (`saved` waits for it).
    public func recordNow(_ state: DaemonState, version: UInt64) {
        record(state, version: version)
    }

    /// Returns once the state is written as of snapshot `version` (or a later one), or why
    /// not. Writes run on a thread of their own, one at a time, so the daemon's loop answers
    /// other callers meanwhile; the requests that arrive while one is written share the next
    /// write (group commit): a flood of setters costs one write per write's duration, not one
    /// each, and never holds a reader up.
    public func saved(_ version: UInt64) async -> Result<Void, Errno> {
        // Behind a write under way, or others waiting, even a request with nothing new to write
        // waits its turn: answers keep the order of the requests.
        guard savedVersion < version, latest != saved || writing || !waiters.isEmpty else { return .success(()) }
        return await withCheckedContinuation { continuation in
            waiters.append((version, continuation))
            if !writing { startWrite() }
        }
    }

    @discardableResult
    private func record(_ state: DaemonState, version: UInt64) -> Bool {
        guard version > latestVersion else { return false }
        latest = state
        latestVersion = version
        return true
    }

    /// `Task.sleep`: the coalescing's timer unless the caller passes its own.
    public static let taskSleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

    /// A storm that never settles is still written after this many coalescing periods.
    public static let maximumPeriods = 10

    public func run() async throws {
        for await _ in wakeups.cancelOnGracefulShutdown() {
            // Written `coalescing` after the last change of a burst (each change in a
            // period starts another), at most `maximumPeriods` after its first, or at once
            // when shutdown starts.
            for _ in 0..<Self.maximumPeriods {
                let version = latestVersion
                do {
                    try await cancelWhenGracefulShutdown { try await self.sleep(self.coalescing) }
                } catch {
                    break
                }
                if latestVersion == version { break }
            }
            await saveLogging()
        }
        // Shutdown: whatever is pending is written before the service returns.
        await saveLogging()
        logger.debug("state service stopped", metadata: ["saves": "\(saveCount)"])
    }

    private func saveLogging() async {
        if case .failure(let error) = await saved(latestVersion) {
            logger.error("cannot save state", metadata: ["path": "\(store.path)", "error": "\(error)"])
        }
    }

    /// Writes the latest state on a thread of its own; `written` takes the outcome.
    private func startWrite() {
        writing = true
        let (snapshot, version, store) = (latest, latestVersion, store)
        Task {
            let result = await Self.write(snapshot, to: store)
            self.written(snapshot, version: version, result)
        }
    }

    /// A write finished: its waiters are answered, and the next write starts if anyone waits
    /// for a later state.
    private func written(_ snapshot: DaemonState, version: UInt64, _ result: Result<Void, Errno>) {
        writing = false
        if case .success = result {
            saved = snapshot
            savedVersion = max(savedVersion, version)
            saveCount += 1
        }
        var later: [(UInt64, CheckedContinuation<Result<Void, Errno>, Never>)] = []
        for (wanted, continuation) in waiters {
            if wanted <= version || (result.isSuccess && latest == saved) {
                continuation.resume(returning: result)
            } else {
                later.append((wanted, continuation))
            }
        }
        waiters = later
        if !waiters.isEmpty { startWrite() }
    }

    /// `store.save` on a new thread (fsync may take long; the daemon has one thread for
    /// everything else), resumed when it is done.
    private static func write(_ snapshot: DaemonState, to store: StateStore) async -> Result<Void, Errno> {
        await withCheckedContinuation { continuation in
            do throws(Errno) {
                try startThread(name: "audioroute-save") {
                    continuation.resume(returning: Result { () throws(Errno) in try store.save(snapshot) })
                }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
    }
}

extension Result {
    fileprivate var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
