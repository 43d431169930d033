import AudioRouteCore
import CUdev
import Glibc
import Logging

/// The udev watcher: sound cards (USB audio, internal codecs, GPU HDMI audio)
/// and the jack switch devices of their codecs become ports.
///
/// `hardwareEvents()` is the raw AsyncSequence of device snapshots from a
/// dedicated thread blocked in `epoll_wait` (netlink monitor + evdev jacks);
/// `run(deliver:)` turns them into port events through `UdevPortState`.
public struct UdevWatcher: PortWatcher, PortSnapshotting {
    public let name = "udev"
    let logger: Logger
    let ucm: UCMProbe?

    /// - Parameter ucmRoot: the ALSA UCM2 tree, read to find phone earpieces
    ///   (nil: do not look).
    public init(logger: Logger = Logger(label: "audioroute.udev"), ucmRoot: String? = UCMProbe.defaultRoot) {
        self.logger = logger
        self.ucm = ucmRoot.map { UCMProbe(root: $0) }
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

    public func run(deliver: @escaping @Sendable (PortEvent) async -> Void) async throws {
        var state = makeState()
        for try await event in hardwareEvents() {
            for portEvent in state.apply(event) { await deliver(portEvent) }
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
