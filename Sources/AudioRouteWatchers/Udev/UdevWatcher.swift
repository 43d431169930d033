import AudioRouteSystem
import AudioRouteCore
import Logging
import Synchronization
import AudioRouteUCMHelper

/// The udev watcher: sound cards (USB audio, internal codecs, GPU HDMI audio)
/// and the jack switch devices of their codecs become ports.
///
/// `hardwareEvents()` is the raw AsyncSequence of device snapshots, read (netlink monitor
/// + evdev jacks) by a `PollLoop`: a thread of the watcher's own, or the loop given;
/// `run(deliver:enumerated:)` turns them into port events through `UdevPortState`.
public struct UdevWatcher: PortWatcher, PortSnapshotting {
    public let name = "udev"
    let logger: Logger
    let loop: (any PollLoop)?
    /// The UCM helper, asked about every card: a card with a profile gets its ports from it instead of udev's classification (docs/ucm.md).
    let ucmHelpers: UCMHelpers?

    /// - Parameters:
    ///   - loop: a loop that reads the monitor and the jacks, instead of a thread of the
    ///     watcher's own: with the daemon's executor, a uevent reaches the route service, which
    ///     runs on that loop, without a thread hand-over (audiorouted; docs/daemon.md). It must run.
    ///   - ucmHelpers: the UCM helper, which gives the ports of every card with a UCM profile and
    ///     switches its UCM devices (nil: udev's classification for every card).
    public init(logger: Logger = Logger(label: "audioroute.udev"), loop: (any PollLoop)? = nil, ucmHelpers: UCMHelpers? = nil) {
        self.logger = logger
        self.loop = loop
        self.ucmHelpers = ucmHelpers
    }

    /// Hardware snapshots: first the enumeration (ending with `.enumerated`),
    /// then every change, until the consumer stops iterating. Finishes with an
    /// error at once if udev cannot be reached.
    public func hardwareEvents() -> AsyncThrowingStream<HardwareEvent, any Error> { hardwareEvents(backlog: nil) }

    /// `hardwareEvents()`; with a `backlog` (on a loop only), reading stops while `backlog`
    /// is full, until the consumer has taken enough of what was read (docs/ports.md).
    func hardwareEvents(backlog: Backlog?) -> AsyncThrowingStream<HardwareEvent, any Error> { hardwareStream(backlog: backlog).events }

    /// `hardwareEvents(backlog:)`, with the loop that reads (nil if it could not start), a
    /// way for other sources read on that loop (the UCM helper) to add events to the stream, and
    /// one to tell the reader which mixer switches of a card to follow by name (by card syspath:
    /// a UCM profile's mute controls).
    func hardwareStream(backlog: Backlog?) -> (
        events: AsyncThrowingStream<HardwareEvent, any Error>, loop: (any PollLoop)?, inject: @Sendable (HardwareEvent) -> Void,
        follow: @Sendable (String, [String]) -> Void
    ) {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: HardwareEvent.self, throwing: (any Error).self, bufferingPolicy: .unbounded)
        let inject: @Sendable (HardwareEvent) -> Void = { event in
            backlog?.produced()
            continuation.yield(event)
        }
        let loop: any PollLoop
        let ownThread: PollThread?
        if let given = self.loop {
            loop = given
            ownThread = nil
        } else {
            do {
                // Named, so that per-thread figures (docs/benchmarks.md) can find it.
                let thread = try PollThread(name: "audioroute-udev")
                loop = thread
                ownThread = thread
            } catch {
                continuation.finish(throwing: error)
                return (stream, nil, inject, { _, _ in })
            }
        }
        // Set on the loop once reading; the sources are dropped there when the consumer stops
        // (scheduled after the start: the loop runs its calls in order).
        let running = LoopConfined<UdevEventLoop?>(nil)
        continuation.onTermination = { _ in
            loop.schedule {
                running.value?.detach()
                running.value = nil
                ownThread?.stop()
            }
        }
        loop.schedule {
            do {
                // The watcher's handles are freed on the loop when it ends.
                let events = try UdevEventLoop(monitoring: true, backlog: backlog) { event in
                    backlog?.produced()
                    continuation.yield(event)
                }
                running.value = events
                events.enumerate()
                events.attach(to: loop)
            } catch {
                continuation.finish(throwing: error)
            }
        }
        let follow: @Sendable (String, [String]) -> Void = { syspath, names in
            loop.schedule { running.value?.follow(names, card: syspath) }
        }
        return (stream, loop, inject, follow)
    }

    public func run(
        deliver: @escaping @Sendable (PortEvent) async -> Void, enumerated: @escaping @Sendable () async -> Void
    ) async throws {
        var state = makeState()
        // On a loop, the producer and this consumer share one thread: without a bound, a
        // burst of queued uevents would all be read (and held) before the first is applied.
        let backlog = loop.map { Backlog(limit: Backlog.defaultLimit, loop: $0) }
        let (events, reader, inject, follow) = hardwareStream(backlog: backlog)
        // The switches each card was told to follow.
        var following: [String: [String]] = [:]
        defer { ucmHelpers?.stopAll() }
        // The enumeration is complete once the UCM cards present have their ports too (their
        // helper answers or fails within UCMHelpers.helloTimeout): they are restored, not new.
        var enumerationHeld = false
        for try await event in events {
            for portEvent in state.apply(event) { await deliver(portEvent) }
            // Only a card's arrival, change or removal (or a helper's answer) changes which cards want one.
            if let ucmHelpers, let reader, event.changesCards {
                ucmHelpers.reconcile(wanted: state.ucmCandidates, loop: reader) { inject(.ucm(syspath: $0.syspath, card: $0.card)) }
                // A re-enumeration forgot what each card followed.
                if case .resynced = event { following = [:] }
                let wanted = state.followedSwitches
                for syspath in Set(wanted.keys).union(following.keys).sorted() where wanted[syspath] != following[syspath] {
                    follow(syspath, wanted[syspath] ?? [])
                }
                following = wanted
            }
            if case .enumerated = event { enumerationHeld = true }
            if enumerationHeld && state.ucmPending.isEmpty {
                enumerationHeld = false
                await enumerated()
            }
            backlog?.consumed()
        }
    }

    public func currentPorts() async throws -> [Port] {
        try snapshotState().ports
    }

    /// Every card present now with its jacks and how each was classified, and which signal
    /// decided each port (`audioroute ports --direct --explain`).
    public func currentExplanations() throws -> [CardExplanation] {
        try snapshotState().explanations()
    }

    /// The port state after one enumeration, without a monitor; with the UCM helper, once it
    /// has answered for every card (or `UCMHelpers.helloTimeout` has passed), as the daemon's.
    private func snapshotState() throws -> UdevPortState {
        var events: [HardwareEvent] = []
        let loop = try UdevEventLoop(monitoring: false) { events.append($0) }
        loop.enumerate()
        var state = makeState()
        for event in events { _ = state.apply(event) }
        guard let ucmHelpers else { return state }
        for answer in try ucmHelpers.answers(for: state.ucmCandidates) { _ = state.apply(.ucm(syspath: answer.syspath, card: answer.card)) }
        return state
    }

    func makeState(usesUCMHelpers: Bool? = nil) -> UdevPortState {
        UdevPortState(logger: logger, usesUCMHelpers: usesUCMHelpers ?? (ucmHelpers != nil))
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
    /// The loop that reads: woken when the backlog stops being full, in case the consumer
    /// runs elsewhere (on the daemon's executor it runs on the loop, which is awake then).
    private let loop: any PollLoop

    init(limit: Int, loop: any PollLoop) {
        self.limit = limit
        self.loop = loop
    }

    var isFull: Bool { count.load(ordering: .relaxed) >= limit }
    func produced() { count.add(1, ordering: .relaxed) }
    func consumed() {
        if count.subtract(1, ordering: .relaxed).newValue == limit - 1 { loop.wakeUp() }
    }
}

/// A value that lives on one executor's loop thread: created there, used only by jobs and
/// handlers that run there, and released there.
final class LoopConfined<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
