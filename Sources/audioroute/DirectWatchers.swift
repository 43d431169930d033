import AudioRouteCore
import AudioRouteSystem
import AudioRouteWatchers
import Logging

/// The hardware watchers `--direct` runs in-process. This is the one place that
/// lists them.
enum DirectWatchers {
    static func all(_ options: HardwareOptions) -> [any PortWatcher] {
        [
            UdevWatcher(logger: Logger(label: "audioroute.udev"), ucmHelpers: options.ucmHelpers()),
            BluezWatcher(logger: Logger(label: "audioroute.bluez")),
        ]
    }

    /// Runs every watcher and merges their events into one sequence, tagged with
    /// the watcher's name. A watcher that throws (its source is unavailable: no
    /// system bus, no udev) is a normal state, noted on standard error; the others go on.
    static func events(_ watchers: [any PortWatcher]) -> AsyncStream<(source: String, event: PortEvent)> {
        let (stream, continuation) = AsyncStream.makeStream(of: (source: String, event: PortEvent).self)
        let tasks = watchers.map { watcher in
            Task {
                do {
                    try await watcher.run { event in continuation.yield((watcher.name, event)) }
                } catch {
                    Terminal.note("\(watcher.name): \(error)")
                }
            }
        }
        continuation.onTermination = { _ in tasks.forEach { $0.cancel() } }
        Task {
            for task in tasks { await task.value }
            continuation.finish()
        }
        return stream
    }

    /// What a tower is to see of `events`: every port goes through one `AvailabilityFilter`, so
    /// an unavailable port is never routed (one turning unavailable goes, as if unplugged, and
    /// comes back as if plugged). A refused event (a duplicate or unknown port) is noted on
    /// standard error and skipped, as the tower would refuse it.
    static func usableEvents(
        _ events: AsyncStream<(source: String, event: PortEvent)>
    ) -> AsyncStream<(source: String, event: PortEvent)> {
        let (stream, continuation) = AsyncStream.makeStream(of: (source: String, event: PortEvent).self)
        let task = Task {
            var known = AvailabilityFilter()
            for await (source, event) in events {
                do throws(SessionError) {
                    if let usable = try known.apply(event) { continuation.yield((source, usable)) }
                } catch {
                    Terminal.warning("\(source): event refused: \(error)")
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The ports present now, from every watcher, unavailable ones included. Watchers that cannot snapshot
    /// are run until their enumeration marker (`settle` at most) and their
    /// arrivals and removals collected.
    static func currentPorts(_ watchers: [any PortWatcher], settle: Duration = .milliseconds(500)) async -> [Port] {
        var ports: [Port] = []
        for watcher in watchers {
            do {
                if let snapshotting = watcher as? any PortSnapshotting {
                    ports += try await snapshotting.currentPorts()
                } else {
                    ports += try await collect(watcher, for: settle)
                }
            } catch {
                Terminal.note("\(watcher.name): \(error)")
            }
        }
        return ports
    }

    private static func collect(_ watcher: any PortWatcher, for settle: Duration) async throws -> [Port] {
        let collected = Collected()
        let task = Task {
            do {
                try await watcher.run(deliver: { event in await collected.apply(event) }, enumerated: { await collected.finish() })
            } catch {
                await collected.finish()  // a watcher without a source: nothing more will come
                throw error
            }
            await collected.finish()
        }
        let timer = Task {
            try? await Task.sleep(for: settle)
            await collected.finish()
        }
        let ports = await collected.snapshot()
        timer.cancel()
        task.cancel()
        try await task.value
        return ports
    }

    /// The ports a watcher delivered until its enumeration marker (or the settle time).
    private actor Collected {
        var ports: [Port] = []
        var finished = false
        var waiter: CheckedContinuation<[Port], Never>?

        func apply(_ event: PortEvent) {
            guard !finished else { return }
            ports.apply(event)
        }

        func finish() {
            guard !finished else { return }
            finished = true
            waiter?.resume(returning: ports)
            waiter = nil
        }

        func snapshot() async -> [Port] {
            if finished { return ports }
            return await withCheckedContinuation { waiter = $0 }
        }
    }
}
