// Saving the state: at once for what a user set, coalesced for what hardware
// does (a dock with six ports arriving is one write, not six).
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Logging
import ServiceLifecycle

/// Persists the daemon's state through a `StateStore`.
///
/// `persist` writes before it returns (a user's setting must survive a kill -9
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

    /// Records snapshot `version` and writes the latest state now. Throws when
    /// the write fails; the state stays pending and a later save retries it.
    public func persist(_ state: DaemonState, version: UInt64) throws(Errno) {
        record(state, version: version)
        try flush()
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
            saveLogging()
        }
        // Shutdown: whatever is pending is written before the service returns.
        saveLogging()
        logger.debug("state service stopped", metadata: ["saves": "\(saveCount)"])
    }

    private func saveLogging() {
        do throws(Errno) {
            try flush()
        } catch {
            logger.error("cannot save state", metadata: ["path": "\(store.path)", "error": "\(error)"])
        }
    }

    private func flush() throws(Errno) {
        guard latest != saved else { return }
        let snapshot = latest
        try store.save(snapshot)
        saved = snapshot
        saveCount += 1
    }
}
