import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Glibc
import Synchronization
import Testing

@Suite struct SignalForwardTests {
    /// A signal sent the moment `init` returns reaches the action (Dispatch's signal sources could
    /// drop it), once per registration, and not after `cancel`.
    @Test func aSignalRightAfterInitReachesEveryActionUntilCancelled() async throws {
        let seen = Mutex<[String]>([])
        let first = SignalForward(signals: [SIGUSR1]) { number in seen.withLock { $0.append("first \(number)") } }
        let second = SignalForward(signals: [SIGUSR1, SIGUSR2]) { number in seen.withLock { $0.append("second \(number)") } }
        kill(getpid(), SIGUSR1)
        try await Self.waitUntil { seen.withLock { $0.count } == 2 }
        #expect(seen.withLock { $0.sorted() } == ["first \(SIGUSR1)", "second \(SIGUSR1)"])

        first.cancel()
        kill(getpid(), SIGUSR2)
        kill(getpid(), SIGUSR1)
        try await Self.waitUntil { seen.withLock { $0.count } == 4 }
        #expect(seen.withLock { Array($0[2...]).sorted() } == ["second \(SIGUSR1)", "second \(SIGUSR2)"])

        // With no action left the signal is dropped, not fatal: the test process goes on.
        second.cancel()
        kill(getpid(), SIGUSR1)
        try await Task.sleep(for: .milliseconds(100))
        #expect(seen.withLock { $0.count } == 4)
    }

    static func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
    }
}
