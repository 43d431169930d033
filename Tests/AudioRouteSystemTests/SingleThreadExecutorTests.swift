// The daemon's one-thread executor, run on a thread of its own here (installing it
// would take over the test runner's executors; audiorouted's end-to-end tests run it installed).
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Glibc
import Synchronization
import Testing

/// What the jobs saw, shared with them.
private final class Log<Entry: Sendable>: Sendable {
    let entries = Mutex<[Entry]>([])
    func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }
    var all: [Entry] { entries.withLock { $0 } }
}

@Suite(.timeLimit(.minutes(1))) struct SingleThreadExecutorTests {
    /// One loop for the suite: `run()` never returns, so each would keep a thread.
    static let executor: SingleThreadExecutor = {
        let executor = SingleThreadExecutor()
        _ = startThread { executor.run() }
        return executor
    }()

    struct Pair: Sendable {
        var index: Int
        var onLoop: Bool
    }

    @Test func jobsRunOnTheLoopThreadInTheOrderTheyCame() async throws {
        let executor = Self.executor
        let log = Log<Pair>()
        var tasks: [Task<Void, Never>] = []
        for index in 0..<50 {
            tasks.append(Task(executorPreference: executor) {
                log.append(Pair(index: index, onLoop: executor.isLoopThread))
            })
        }
        for task in tasks { await task.value }
        let entries = log.all
        #expect(entries.map(\.index) == Array(0..<50))
        #expect(entries.filter { !$0.onLoop }.isEmpty, "every job ran on the loop's thread")
        #expect(!executor.isLoopThread, "the test's own thread is not the loop")
    }

    @Test func sleepsEndInDeadlineOrderAndNotEarly() async throws {
        let executor = Self.executor
        let order = Log<Int>()
        let start = ContinuousClock.now
        await withTaskGroup(of: (Int, Duration).self) { group in
            for milliseconds in [60, 20, 40] {
                group.addTask(executorPreference: executor) {
                    try? await executor.sleep(for: .milliseconds(milliseconds))
                    order.append(milliseconds)
                    return (milliseconds, ContinuousClock.now - start)
                }
            }
            for await (milliseconds, elapsed) in group {
                #expect(elapsed >= .milliseconds(milliseconds), "a \(milliseconds) ms sleep ended after \(elapsed)")
            }
        }
        #expect(order.all == [20, 40, 60])
    }

    @Test func cancellingASleepEndsItWithCancellationError() async throws {
        let executor = Self.executor
        let sleeper = Task(executorPreference: executor) { () -> (any Error)? in
            do {
                try await executor.sleep(for: .seconds(3600))
                return nil
            } catch {
                return error
            }
        }
        // Cancelled while asleep (after the timer is set) or before: both must end it.
        usleep(20_000)
        sleeper.cancel()
        let error = await sleeper.value
        #expect(error is CancellationError, "\(String(describing: error))")

        let early = Task(executorPreference: executor) { () -> (any Error)? in
            withUnsafeCurrentTask { $0?.cancel() }
            do {
                try await executor.sleep(for: .seconds(3600))
                return nil
            } catch {
                return error
            }
        }
        #expect(await early.value is CancellationError)
    }

    @Test func jobsFromManyThreadsAllRun() async throws {
        let executor = Self.executor
        let count = Log<Int>()
        let before = executor.jobsRun
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    // From the global executor's threads into the loop.
                    await withTaskGroup(of: Void.self) { inner in
                        for _ in 0..<100 {
                            inner.addTask(executorPreference: executor) { count.append(1) }
                        }
                    }
                }
            }
        }
        #expect(count.all.count == 800)
        #expect(executor.jobsRun - before >= 800)
    }

    /// A watched descriptor is read on the loop thread each time it becomes readable, until
    /// its handler declines; then the loop no longer looks at it.
    @Test func aWatchedDescriptorIsReadOnTheLoopUntilItsHandlerDeclines() async throws {
        let executor = Self.executor
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { for fd in ends { close(fd) } }
        let (reader, writer) = (ends[0], ends[1])
        let seen = Log<Pair>()
        executor.watch(fd: reader) {
            var byte: UInt8 = 0
            guard read(reader, &byte, 1) == 1 else { return false }
            seen.append(Pair(index: Int(byte), onLoop: executor.isLoopThread))
            return byte < 3
        }
        for byte: UInt8 in [1, 2, 3, 4] {
            var value = byte
            #expect(write(writer, &value, 1) == 1)
            // Each byte is read before the next is written, except the last: nobody reads it.
            if byte < 4 { try await Self.waitUntil { seen.all.count == Int(byte) } }
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(seen.all.map(\.index) == [1, 2, 3])
        #expect(seen.all.allSatisfy { $0.onLoop })
        // The 4th byte is still in the pipe: the handler was removed, not called and ignored.
        var poller = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
        #expect(poll(&poller, 1, 0) == 1)
    }

    /// `schedule` runs a closure on the loop, after the jobs already enqueued.
    @Test func scheduledClosuresRunOnTheLoopInOrder() async throws {
        let executor = Self.executor
        let log = Log<Pair>()
        for index in 0..<20 {
            executor.schedule { log.append(Pair(index: index, onLoop: executor.isLoopThread)) }
        }
        try await Self.waitUntil { log.all.count == 20 }
        #expect(log.all.map(\.index) == Array(0..<20))
        #expect(log.all.allSatisfy { $0.onLoop })
    }

    static func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
    }
}
