// PollThread: the PollLoop that runs on a thread of its own (a watcher or a server used
// without the daemon's executor).
import AudioRouteSystem
import Glibc
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1))) struct PollThreadTests {
    static func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
    }

    static func threadName() -> String {
        var buffer = [UInt8](repeating: 0, count: 32)
        let fd = open("/proc/thread-self/comm", O_RDONLY)
        defer { close(fd) }
        let count = max(0, read(fd, &buffer, 31))
        return String(decoding: buffer[0..<count].prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }

    /// A descriptor is read on the named thread while its events ask for input, not while
    /// they ask for nothing; `wakeUp` makes the sleeping loop ask again.
    @Test func aWatchedDescriptorIsReadOnTheNamedThreadWhileItsEventsAskForIt() async throws {
        let loop = try PollThread(name: "test-poll")
        defer { loop.stop() }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { for fd in ends { close(fd) } }
        let (reader, writer) = (ends[0], ends[1])
        let paused = Atomic<Bool>(true)
        let seen = Mutex<[(UInt8, String)]>([])
        loop.watch(fd: reader, events: { paused.load(ordering: .relaxed) ? [] : .readable }) {
            var byte: UInt8 = 0
            guard read(reader, &byte, 1) == 1 else { return false }
            seen.withLock { $0.append((byte, Self.threadName())) }
            return true
        }
        var value: UInt8 = 7
        #expect(write(writer, &value, 1) == 1)
        try await Task.sleep(for: .milliseconds(100))
        #expect(seen.withLock { $0.isEmpty })
        paused.store(false, ordering: .relaxed)
        loop.wakeUp()
        try await Self.waitUntil { seen.withLock { !$0.isEmpty } }
        let entries = seen.withLock { $0 }
        #expect(entries.map(\.0) == [7])
        #expect(entries.map(\.1) == ["test-poll"])
    }

    /// Scheduled calls run in order; `stop` comes after the calls scheduled before it, and
    /// what the sources' handlers hold is released when the thread ends.
    @Test func stopRunsTheCallsBeforeItAndReleasesTheSources() async throws {
        let loop = try PollThread(name: "test-poll")
        let order = Mutex<[Int]>([])
        let released = Atomic<Bool>(false)
        final class Token: Sendable {
            let released: @Sendable () -> Void
            init(_ released: @escaping @Sendable () -> Void) { self.released = released }
            deinit { released() }
        }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { for fd in ends { close(fd) } }
        do {
            let token = Token { released.store(true, ordering: .relaxed) }
            loop.watch(fd: ends[0]) {
                _ = token
                return true
            }
        }
        for index in 0..<10 { loop.schedule { order.withLock { $0.append(index) } } }
        loop.stop()
        loop.schedule { order.withLock { $0.append(99) } }
        try await Self.waitUntil { released.load(ordering: .relaxed) }
        let wasReleased = released.load(ordering: .relaxed)
        #expect(wasReleased)
        try await Task.sleep(for: .milliseconds(50))
        #expect(order.withLock { $0 } == Array(0..<10))
    }
}
