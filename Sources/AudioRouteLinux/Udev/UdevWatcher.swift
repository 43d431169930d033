import AudioRouteCore
import CUdev
import Glibc
import Logging

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
    public func hardwareEvents() -> AsyncThrowingStream<HardwareEvent, any Error> {
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
                    let events = LoopConfined(try UdevEventLoop(stop: stop) { continuation.yield($0) })
                    events.value.enumerate()
                    guard let fd = events.value.pollDescriptor else { return continuation.finish() }
                    // The handler owns the watcher's handles: they are freed on the loop when it ends.
                    loop.watch(fd: fd) {
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
            _ = cudev_set_thread_name("audioroute-udev")
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
        for try await event in hardwareEvents() {
            for portEvent in state.apply(event) { await deliver(portEvent) }
            if case .enumerated = event { await enumerated() }
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

/// A value that lives on one executor's loop thread: created there, used only by jobs and
/// handlers that run there, and released there.
final class LoopConfined<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
