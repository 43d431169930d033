import AudioRouteSystem
import AudioRouteDBus
import AudioRouteCore
import CUdev
import CLinux
import Glibc
import Logging
import Synchronization

/// The udev watcher: sound cards (USB audio, internal codecs, GPU HDMI audio)
/// and the jack switch devices of their codecs become ports.
///
/// `hardwareEvents()` is the raw AsyncSequence of device snapshots from a
/// dedicated thread blocked in `epoll_wait` (netlink monitor + evdev jacks), or
/// from the loop of a `SingleThreadExecutor` that polls the same descriptors;
/// `run(deliver:enumerated:)` turns them into port events through `UdevPortState`.
public struct UdevWatcher: PortWatcher, PortSnapshotting {
    public let name = "udev"
    let logger: Logger
    let ucm: UCMProbe?
    let loop: SingleThreadExecutor?

    /// - Parameters:
    ///   - ucmRoot: the ALSA UCM2 tree, read to find phone earpieces (nil: do not look).
    ///   - loop: an executor whose loop reads the monitor and the jacks, instead of a
    ///     thread of the watcher's own: a uevent then reaches the route service, which runs
    ///     on that loop, without a thread hand-over (audiorouted; docs/daemon.md). It must run.
    public init(logger: Logger = Logger(label: "audioroute.udev"), ucmRoot: String? = UCMProbe.defaultRoot, loop: SingleThreadExecutor? = nil) {
        self.logger = logger
        self.ucm = ucmRoot.map { UCMProbe(root: $0) }
        self.loop = loop
    }

    /// Hardware snapshots: first the enumeration (ending with `.enumerated`),
    /// then every change, until the consumer stops iterating. Finishes with an
    /// error at once if udev cannot be reached.
    public func hardwareEvents() -> AsyncThrowingStream<HardwareEvent, any Error> { hardwareEvents(backlog: nil) }

    /// `hardwareEvents()`; with a `backlog` (on a loop only), reading stops while `backlog`
    /// is full, until the consumer has taken enough of what was read (docs/ports.md).
    func hardwareEvents(backlog: Backlog?) -> AsyncThrowingStream<HardwareEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: HardwareEvent.self, throwing: (any Error).self, bufferingPolicy: .unbounded)
        let stop: StopSignal
        do {
            stop = try StopSignal()
        } catch {
            continuation.finish(throwing: error)
            return stream
        }
        continuation.onTermination = { _ in stop.fire() }
        if let loop {
            loop.schedule {
                do {
                    let events = LoopConfined(
                        try UdevEventLoop(stop: stop, backlog: backlog) { event in
                            backlog?.produced()
                            continuation.yield(event)
                        })
                    events.value.enumerate()
                    guard let fd = events.value.pollDescriptor else { return continuation.finish() }
                    // The handler owns the watcher's handles: they are freed on the loop when it ends.
                    // While the backlog is full the descriptor is not polled for input: the loop
                    // runs the consumer instead, and the kernel keeps what waits.
                    let readable = SingleThreadExecutor.readable
                    loop.watch(fd: fd, events: { backlog?.isFull == true ? 0 : readable }) {
                        if events.value.dispatchReady() { return true }
                        continuation.finish()
                        return false
                    }
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            return stream
        }
        let started = startThread {
            // Named, so that per-thread figures (docs/benchmarks.md) can find it.
            _ = clinux_set_thread_name("audioroute-udev")
            do {
                let loop = try UdevEventLoop(stop: stop) { continuation.yield($0) }
                loop.enumerate()
                loop.run()
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        if let started { continuation.finish(throwing: UdevError("pthread_create", errno: started)) }
        return stream
    }

    public func run(
        deliver: @escaping @Sendable (PortEvent) async -> Void, enumerated: @escaping @Sendable () async -> Void
    ) async throws {
        var state = makeState()
        // On a loop, the producer and this consumer share one thread: without a bound, a
        // burst of queued uevents would all be read (and held) before the first is applied.
        let backlog = loop == nil ? nil : Backlog(limit: Backlog.defaultLimit)
        for try await event in hardwareEvents(backlog: backlog) {
            for portEvent in state.apply(event) { await deliver(portEvent) }
            if case .enumerated = event { await enumerated() }
            backlog?.consumed()
        }
    }

    public func currentPorts() async throws -> [Port] {
        var events: [HardwareEvent] = []
        let loop = try UdevEventLoop(stop: nil) { events.append($0) }
        loop.enumerate()
        var state = makeState()
        for event in events { _ = state.apply(event) }
        return state.ports
    }

    func makeState() -> UdevPortState {
        let ucm = self.ucm
        return UdevPortState(logger: logger) { card in ucm?.hasEarpiece(card) ?? false }
    }
}

/// How many hardware events have been read and not yet applied, and how many may be.
/// The event loop stops reading while it is full: what waits stays in the kernel's buffers
/// (the monitor socket's 8 MiB, each evdev device's ring), whose overflow is recovered
/// (a re-enumeration; SYN_DROPPED), instead of in the daemon's heap.
final class Backlog: Sendable {
    /// Enough for a card's burst of uevents (a USB headset sends about eight) to be read at once.
    static let defaultLimit = 16
    let limit: Int
    private let count = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    var isFull: Bool { count.load(ordering: .relaxed) >= limit }
    func produced() { count.add(1, ordering: .relaxed) }
    func consumed() { count.subtract(1, ordering: .relaxed) }
}

/// A value that lives on one executor's loop thread: created there, used only by jobs and
/// handlers that run there, and released there.
final class LoopConfined<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
