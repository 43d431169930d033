// The daemon's one-thread executor, run on a thread of its own here (installing it
// would take over the test runner's executors; audiorouted's end-to-end tests run it installed).
import AudioRouteLinux
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
}
