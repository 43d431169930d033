// RouteService and StateService in a ServiceGroup: watchers in, ALSA file and
// broadcast out, state restored and saved.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteDaemon
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import AudioRouteALSA
import Logging
import ServiceLifecycle
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A watcher driven by the test: it delivers `present`, then (if `enumerates`) its
/// enumeration marker, then what is yielded to `feed` (nil: the marker).
final class TestWatcher: PortWatcher {
    let name: String
    let present: [PortEvent]
    let enumerates: Bool
    let stream: AsyncStream<PortEvent?>
    let feed: AsyncStream<PortEvent?>.Continuation
    let failure: TestFailure?

    init(name: String, present: [PortEvent] = [], enumerates: Bool = true, failing failure: TestFailure? = nil) {
        self.name = name
        self.present = present
        self.enumerates = enumerates
        self.failure = failure
        (stream, feed) = AsyncStream.makeStream(of: PortEvent?.self)
    }

    func run(deliver: @escaping @Sendable (PortEvent) async -> Void, enumerated: @escaping @Sendable () async -> Void) async throws {
        if let failure { throw failure }
        for event in present { await deliver(event) }
        if enumerates { await enumerated() }
        for await step in stream {
            if let step { await deliver(step) } else { await enumerated() }
        }
    }

    /// The enumeration marker, for a watcher made with `enumerates: false`.
    func finishEnumeration() { feed.yield(nil) }
}

struct TimedOut: Error {}

/// Runs `body`, failing with TimedOut after `seconds`.
func within<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            throw TimedOut()
        }
        let result = try await group.next()!
        group.cancelAll()
        return result
    }
}

/// Collects events from a subscription in the background.
final class EventLog: Sendable {
    private final class Buffer: Sendable {
        let state = Mutex<(events: [DaemonEvent], ended: Bool, read: Int)>(([], false, 0))
        func withLock<R>(_ body: (inout (events: [DaemonEvent], ended: Bool, read: Int)) -> R) -> R { state.withLock { body(&$0) } }
    }

    private let buffer = Buffer()

    /// `activity`: whether monitors' `sessionActivity` events are kept; the tests that read the
    /// route's and sessions' events in order leave them out (DaemonEndToEndTests follows them).
    init(_ stream: AsyncStream<DaemonEvent>, activity: Bool = false) {
        let buffer = self.buffer
        Task {
            for await event in stream {
                if case .sessionActivity = event, !activity { continue }
                buffer.withLock { $0.events.append(event) }
            }
            buffer.withLock { $0.ended = true }
        }
    }

    /// The next event, or nil when the stream ended; fails after 10 s.
    func next() async throws -> DaemonEvent? {
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while ContinuousClock.now < deadline {
            let (event, ended): (DaemonEvent?, Bool) = buffer.withLock { state in
                guard state.read < state.events.count else { return (nil, state.ended) }
                state.read += 1
                return (state.events[state.read - 1], false)
            }
            if let event { return event }
            if ended { return nil }
            try await Task.sleep(for: .milliseconds(2))
        }
        throw TimedOut()
    }

    /// Skips events until the port change `kind` of `uid` (earlier route changes and listing
    /// changes included).
    func untilPortChange(_ kind: PortChange.Kind, _ uid: String) async throws {
        while let event = try await next() {
            if case .portChanged(let change) = event, change.kind == kind, change.port.uid == uid { return }
        }
        throw TestFailure("event stream ended")
    }

    /// Skips events until a route change, which it returns.
    func nextRouteChange() async throws -> RouteChange {
        while let event = try await next() {
            if case .routeChanged(let change) = event { return change }
        }
        throw TestFailure("event stream ended")
    }
}

/// A one-shot signal a closure can fire from any thread.
final class Signal: Sendable {
    private let state = Mutex<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func fire() {
        let waiters = state.withLock { state in
            state.fired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    var hasFired: Bool { state.withLock { $0.fired } }

    func wait() async {
        await withCheckedContinuation { continuation in
            let fired = state.withLock { state in
                if !state.fired { state.waiters.append(continuation) }
                return state.fired
            }
            if fired { continuation.resume() }
        }
    }
}

private let speaker = Port(uid: "pci-speaker", type: .builtInSpeaker, device: "pci", alsa: "dmix:CARD=PCH,DEV=0")
private let usb = Port(uid: "usb-dac", type: .usbAudio, device: "usb-dac", direction: .output, alsa: "dmix:CARD=DAC,DEV=0")
private let a2dp = Port(
    uid: "bt-a2dp", type: .bluetoothA2DP, device: "bt:00:11:22:33:44:55", alsa: "bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp")
private let usbMic = Port(uid: "usb-mic", type: .usbAudio, device: "usb-mic", direction: .input, alsa: "dsnoop:CARD=Mic,DEV=0")

/// A daemon's two services in a ServiceGroup, with temporary directories.
struct Harness {
    let dir: String
    let store: StateStore
    let writer: AlsaRouteConfigWriter
    let stateService: StateService
    let routeService: RouteService
    let group: ServiceGroup
    let logs: RecordingLogHandler.Store
    let ready = Signal()

    /// `readyTimeout` is long by default: a test whose watchers' markers went missing
    /// then fails waiting for READY instead of passing on the timeout.
    init(
        dir: String, watchers: [any PortWatcher], initial: DaemonState = DaemonState(), readyTimeout: Duration = .seconds(60),
        coalescing: Duration = .milliseconds(50), displayGrace: DisplayGrace = DisplayGrace()
    ) {
        self.dir = dir
        let (logger, logs) = recordingLogger()
        self.logs = logs
        store = StateStore(directory: dir + "/state")
        writer = AlsaRouteConfigWriter(runtimeDirectory: dir + "/run")
        stateService = StateService(store: store, initial: initial, coalescing: coalescing, logger: logger)
        let ready = self.ready
        routeService = RouteService(
            stateService: stateService, initialState: initial, alsa: writer, watchers: watchers.map(\.name),
            readyTimeout: readyTimeout, displayGrace: displayGrace, logger: logger, onReady: { ready.fire() })
        let routes = routeService
        group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: stateService, serviceName: "state"), .init(service: routeService, serviceName: "routes")]
                    + watchers.map { .init(service: WatcherService(watcher: $0, routes: routes, logger: logger), serviceName: $0.name) },
                logger: logger))
    }

    func alsaOutput() throws -> String? {
        var tree = try ALSAConfiguration()
        try tree.load(file: writer.path)
        return tree.string(at: "pcm.\(AlsaRouteConfig.outputPCM).slave.pcm")
    }

    func savedState() -> DaemonState? {
        let (logger, _) = recordingLogger()
        let (state, outcome) = store.load(logger: logger)
        return outcome == .loaded ? state : nil
    }

    /// Runs the group around `body`, then shuts it down gracefully and waits for it.
    func running(_ body: () async throws -> Void) async throws {
        let group = self.group
        let task = Task { try await group.run() }
        do {
            let ready = self.ready
            try await within(10) { await ready.wait() }
            try await body()
        } catch {
            await group.triggerGracefulShutdown()
            _ = try? await task.value
            throw error
        }
        await group.triggerGracefulShutdown()
        try await within(10) { try await task.value }
    }
}

@Suite struct RouteServiceTests {
    @Test func followsTwoWatchersRewritesTheALSAFileAndBroadcasts() async throws {
        try await withTemporaryDirectory { dir in
            let udev = TestWatcher(name: "udev")
            let bluez = TestWatcher(name: "bluez")
            let harness = Harness(dir: dir, watchers: [udev, bluez])
            let events = EventLog(harness.routeService.events.subscribe())
            let second = EventLog(harness.routeService.events.subscribe())
            try await harness.running {
                // Ready means the file for the initial (empty) route is there.
                #expect(try harness.alsaOutput() == "null")

                udev.feed.yield(.added([speaker]))
                #expect(try await events.next() == .portChanged(PortChangeMatcher.added(speaker)))
                var change = try await events.nextRouteChange()
                #expect(change.reason == .newDeviceAvailable)
                #expect(change.current.outputs == ["pci-speaker"])
                #expect(try harness.alsaOutput() == "dmix:CARD=PCH,DEV=0")

                bluez.feed.yield(.added([a2dp]))
                change = try await events.nextRouteChange()
                #expect(change.current.outputs == ["bt-a2dp"])
                #expect(change.previous.outputs == ["pci-speaker"])
                #expect(try harness.alsaOutput() == "bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp")

                udev.feed.yield(.added([usb]))
                change = try await events.nextRouteChange()
                #expect(change.current.outputs == ["usb-dac"])
                #expect(try harness.alsaOutput() == "dmix:CARD=DAC,DEV=0")

                udev.feed.yield(.removed(["usb-dac"]))
                change = try await events.nextRouteChange()
                #expect(change.reason == .oldDeviceUnavailable)
                #expect(change.current.outputs == ["bt-a2dp"])
                #expect(try harness.alsaOutput() == "bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp")

                // Every subscriber sees the same sequence.
                var routeChanges = 0
                while routeChanges < 4, let event = try await second.next() {
                    if case .routeChanged = event { routeChanges += 1 }
                }
                #expect(routeChanges == 4)
            }
            // Shutdown ends the subscriptions and saves the sequences.
            #expect(try await events.next() == nil)
            let saved = try #require(harness.savedState())
            #expect(saved.sequences.last["pci-speaker"] == 1)
            #expect(saved.sequences.last["bt-a2dp"] == 2)
            #expect(saved.sequences.last["usb-dac"] == 3)
        }
    }

    @Test func restoresSequencesAndUserPrioritiesAtStart() async throws {
        try await withTemporaryDirectory { dir in
            var initial = DaemonState()
            initial.sequences.record(5, for: "usb-dac")
            initial.sequences.record(9, for: "bt-a2dp")
            // The user prefers the USB DAC although the headset came later.
            initial.priorities["usb-dac"] = 300
            // Both were present when the daemon started: its watcher's enumeration delivers them.
            let udev = TestWatcher(name: "udev", present: [.added([a2dp]), .added([usb])])
            let harness = Harness(dir: dir, watchers: [udev], initial: initial)
            let events = EventLog(harness.routeService.events.subscribe())
            try await harness.running {
                _ = try await events.nextRouteChange()
                let change = try await events.nextRouteChange()
                #expect(change.current.outputs == ["usb-dac"])
                let ports = await harness.routeService.ports
                #expect(ports.first { $0.uid == "usb-dac" }?.sequence == 5)
                #expect(ports.first { $0.uid == "usb-dac" }?.priority == 300)
                #expect(ports.first { $0.uid == "bt-a2dp" }?.sequence == 9)
            }
        }
    }

    @Test func afterItsWatchersEnumerationAnArrivalIsANewPlug() async throws {
        try await withTemporaryDirectory { dir in
            var initial = DaemonState()
            initial.sequences.record(5, for: "usb-dac")
            initial.sequences.record(9, for: "bt-a2dp")
            let udev = TestWatcher(name: "udev")
            let harness = Harness(dir: dir, watchers: [udev], initial: initial)
            let events = EventLog(harness.routeService.events.subscribe())
            try await harness.running {
                udev.feed.yield(.added([usb]))
                _ = try await events.nextRouteChange()
                #expect(await harness.routeService.ports.first?.sequence == 10)
            }
            #expect(harness.savedState()?.sequences.last["usb-dac"] == 10)
        }
    }

    @Test func readyWaitsForEveryWatchersEnumerationAndRestoresPerWatcher() async throws {
        try await withTemporaryDirectory { dir in
            var initial = DaemonState()
            initial.sequences.record(5, for: "usb-dac")
            initial.sequences.record(9, for: "bt-a2dp")
            let udev = TestWatcher(name: "udev")  // enumerates at once, nothing present
            let bluez = TestWatcher(name: "bluez", enumerates: false)
            let harness = Harness(dir: dir, watchers: [udev, bluez], initial: initial)
            let events = EventLog(harness.routeService.events.subscribe())
            let group = harness.group
            let task = Task { try await group.run() }
            defer { task.cancel() }
            // udev's enumeration is done: a USB DAC now is a new plug. BlueZ is still
            // enumerating: its headset was there before the start.
            udev.feed.yield(.added([usb]))
            _ = try await events.nextRouteChange()
            bluez.feed.yield(.added([a2dp]))
            // Restored with 9, it stays behind the DAC's 10: a port change, no route change.
            var arrived = false
            while !arrived, let event = try await events.next() {
                if case .portChanged(let change) = event { arrived = change.port.uid == "bt-a2dp" }
            }
            #expect(await harness.routeService.route.outputs == ["usb-dac"])
            try await Task.sleep(for: .milliseconds(200))
            #expect(!harness.ready.hasFired)
            bluez.finishEnumeration()
            try await within(10) { await harness.ready.wait() }
            let ports = await harness.routeService.ports
            #expect(ports.first { $0.uid == "usb-dac" }?.sequence == 10)
            #expect(ports.first { $0.uid == "bt-a2dp" }?.sequence == 9)
            #expect(harness.logs.all.filter { $0.message == "ready before every watcher enumerated" }.isEmpty)
            await group.triggerGracefulShutdown()
            try await within(10) { try await task.value }
        }
    }

    @Test func aWatcherThatNeverEnumeratesDelaysReadyOnlyByTheTimeout() async throws {
        try await withTemporaryDirectory { dir in
            var initial = DaemonState()
            initial.sequences.record(9, for: "bt-a2dp")
            let bluez = TestWatcher(name: "bluez", enumerates: false)
            let harness = Harness(dir: dir, watchers: [bluez], initial: initial, readyTimeout: .milliseconds(300))
            let events = EventLog(harness.routeService.events.subscribe())
            try await harness.running {
                let notices = harness.logs.all.filter { $0.message == "ready before every watcher enumerated" }
                #expect(notices.count == 1)
                #expect(notices.first?.metadata["watchers"] == "bluez")
                // Still enumerating (a slow bluetoothd): what it delivers was there at the start.
                bluez.feed.yield(.added([a2dp]))
                _ = try await events.nextRouteChange()
                #expect(await harness.routeService.ports.first?.sequence == 9)
            }
        }
    }

    @Test func aRefusedEventIsLoggedAndChangesNothing() async throws {
        try await withTemporaryDirectory { dir in
            let udev = TestWatcher(name: "udev")
            let harness = Harness(dir: dir, watchers: [udev])
            let events = EventLog(harness.routeService.events.subscribe())
            try await harness.running {
                udev.feed.yield(.added([usb]))
                _ = try await events.nextRouteChange()
                udev.feed.yield(.added([usb]))  // garbage: a duplicate
                udev.feed.yield(.removed(["ghost"]))
                udev.feed.yield(.added([speaker]))  // a later good event still applies
                var sawSpeaker = false
                while !sawSpeaker, let event = try await events.next() {
                    if case .portChanged(let change) = event { sawSpeaker = change.port.uid == "pci-speaker" }
                }
                #expect(await harness.routeService.ports.map(\.uid) == ["usb-dac", "pci-speaker"])
                #expect(await harness.routeService.route.outputs == ["usb-dac"])
                let refusals = harness.logs.all.filter { $0.message == "port event refused" }
                #expect(refusals.count == 2)
                #expect(refusals.first?.metadata["watcher"] == "udev")
                #expect(refusals.first?.metadata["error"] == "port \"usb-dac\" already exists")
            }
        }
    }

    @Test func anUnavailableWatcherIsReportedAndTheOthersGoOn() async throws {
        try await withTemporaryDirectory { dir in
            let bluez = TestWatcher(name: "bluez", failing: TestFailure("no system bus"))
            let udev = TestWatcher(name: "udev")
            let harness = Harness(dir: dir, watchers: [bluez, udev])
            let events = EventLog(harness.routeService.events.subscribe())
            try await harness.running {
                udev.feed.yield(.added([speaker]))
                let change = try await events.nextRouteChange()
                #expect(change.current.outputs == ["pci-speaker"])
                // The failing watcher runs concurrently: give its report a moment.
                var errors: [RecordingLogHandler.Entry] = []
                for _ in 0..<500 where errors.isEmpty {
                    errors = harness.logs.all.filter { $0.message == "watcher unavailable" }
                    if errors.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
                }
                #expect(errors.count == 1)
                #expect(errors.first?.metadata["watcher"] == "bluez")
                #expect(errors.first?.metadata["error"] == "no system bus")
            }
        }
    }

    @Test func aUserPriorityIsSavedBeforeTheCallReturns() async throws {
        try await withTemporaryDirectory { dir in
            let udev = TestWatcher(name: "udev")
            // Coalescing far longer than the test: only an immediate write can pass.
            let harness = Harness(dir: dir, watchers: [udev], coalescing: .seconds(3600))
            let events = EventLog(harness.routeService.events.subscribe())
            try await harness.running {
                udev.feed.yield(.added([usb, speaker]))
                _ = try await events.nextRouteChange()
                try await harness.routeService.setPriority(-10, for: "usb-dac")
                #expect(harness.savedState()?.priorities == ["usb-dac": -10])
                #expect(await harness.routeService.route.outputs == ["pci-speaker"])
                await #expect(throws: RequestError.refused(.unknownPort("ghost"))) {
                    try await harness.routeService.setPriority(1, for: "ghost")
                }
                #expect(harness.savedState()?.priorities == ["usb-dac": -10])
            }
        }
    }

    @Test func aPreferredInputIsRememberedBySessionNameAndReappliedWhenItsPortReturns() async throws {
        try await withTemporaryDirectory { dir in
            let udev = TestWatcher(name: "udev")
            let harness = Harness(dir: dir, watchers: [udev], coalescing: .seconds(3600))
            let events = EventLog(harness.routeService.events.subscribe())
            let service = harness.routeService
            try await harness.running {
                udev.feed.yield(.added([speaker, usbMic]))
                _ = try await events.nextRouteChange()
                try await service.openSession(id: ":1.42", name: "org.gnome.Calls")
                try await service.setCategory(.playAndRecord, session: ":1.42")
                try await service.setPreferredInput("usb-mic", session: ":1.42")
                #expect(harness.savedState()?.preferredInputs == ["org.gnome.Calls": "usb-mic"])
                try await service.closeSession(":1.42")

                // The app restarts while the mic is unplugged; the mic comes back.
                udev.feed.yield(.removed(["usb-mic"]))
                try await events.untilPortChange(.removed, "usb-mic")
                try await service.openSession(id: ":1.43", name: "org.gnome.Calls")
                #expect(await service.sessions.first?.preferredInput == nil)
                udev.feed.yield(.added([usbMic]))
                try await events.untilPortChange(.added, "usb-mic")
                // The arrival and the reapplied preference are one actor step; the next query sees both.
                #expect(await service.sessions.first { $0.id == ":1.43" }?.preferredInput == "usb-mic")

                // A session without a name is not remembered.
                try await service.openSession(id: ":1.44")
                try await service.setPreferredInput(nil, session: ":1.44")
                try await service.setPreferredInput(nil, session: ":1.43")
                #expect(harness.savedState()?.preferredInputs == [:])
            }
        }
    }
}

/// Builds expected port changes, numbered as a tower numbers them.
enum PortChangeMatcher {
    static func added(_ port: Port) -> PortChange {
        var tower = Tower()
        return try! tower.addPorts([port]).portChanges[0]
    }
}

@Suite struct StateServiceTests {
    @Test func aStormOfChangesIsOneWriteOfTheLatest() async throws {
        try await withTemporaryDirectory { dir in
            let (logger, _) = recordingLogger()
            let store = StateStore(directory: dir)
            let service = StateService(store: store, initial: DaemonState(), coalescing: .milliseconds(200), logger: logger)
            let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [service], logger: logger))
            let task = Task { try await group.run() }
            for n in 1...200 { await service.submit(DaemonState.crashTestSample(UInt64(n)), version: UInt64(n)) }
            // A late, older snapshot must not replace the newer one.
            await service.submit(DaemonState.crashTestSample(7), version: 7)
            // Wait for the write (a loaded CI machine may take a while), then a few
            // coalescing windows more: no second write may follow.
            for _ in 0..<1000 where await service.saveCount == 0 { try await Task.sleep(for: .milliseconds(10)) }
            try await Task.sleep(for: .milliseconds(600))
            #expect(await service.saveCount == 1)
            #expect(store.load(logger: logger).0 == DaemonState.crashTestSample(200))
            await group.triggerGracefulShutdown()
            try await within(10) { try await task.value }
            #expect(await service.saveCount == 1, "nothing new to write at shutdown")
        }
    }

    /// The coalescing sleep, driven by the test: each sleep lasts until the test ends it
    /// (or the sleeping task is cancelled).
    final class SteppedSleep: Sendable {
        let pending = Mutex<[CheckedContinuation<Void, Never>]>([])
        let count = Atomic<Int>(0)

        func sleep(_: Duration) async throws {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let cancelled = pending.withLock { list in
                        if Task.isCancelled { return true }
                        list.append(continuation)
                        return false
                    }
                    count.add(1, ordering: .sequentiallyConsistent)
                    if cancelled { continuation.resume() }
                }
            } onCancel: {
                for continuation in pending.withLock({ list in defer { list.removeAll() }; return list }) { continuation.resume() }
            }
            try Task.checkCancellation()
        }

        /// Waits until `n` sleeps have begun.
        func waitForSleeps(_ n: Int) async throws {
            for _ in 0..<4000 where count.load(ordering: .sequentiallyConsistent) < n { try await Task.sleep(for: .milliseconds(5)) }
            #expect(count.load(ordering: .sequentiallyConsistent) >= n, "sleep \(n) never began")
        }

        /// Waits until sleep `n` has begun, then ends the pending one.
        func end(_ n: Int) async throws {
            try await waitForSleeps(n)
            pending.withLock { $0.isEmpty ? nil : $0.removeFirst() }?.resume()
        }
    }

    /// A StateService in a running ServiceGroup whose sleeps `clock` ends by hand, for
    /// `body(store, service, clock, logger)`; shut down gracefully afterwards.
    static func withSteppedStateService(
        _ body: (StateStore, StateService, SteppedSleep, Logger) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { dir in
            let (logger, _) = recordingLogger()
            let store = StateStore(directory: dir)
            let clock = SteppedSleep()
            let service = StateService(store: store, initial: DaemonState(), sleep: { try await clock.sleep($0) }, logger: logger)
            let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [service], logger: logger))
            let task = Task { try await group.run() }
            defer { task.cancel() }
            try await body(store, service, clock, logger)
            await group.triggerGracefulShutdown()
            try await within(10) { try await task.value }
        }
    }

    @Test func aChangeDuringThePeriodPostponesTheWrite() async throws {
        try await Self.withSteppedStateService { store, service, clock, logger in

            // A second change inside the first period: the write waits one more period.
            await service.submit(DaemonState.crashTestSample(1), version: 1)
            try await clock.waitForSleeps(1)
            await service.submit(DaemonState.crashTestSample(2), version: 2)
            try await clock.end(1)
            try await clock.waitForSleeps(2)
            #expect(await service.saveCount == 0, "not written while changes go on")
            try await clock.end(2)
            for _ in 0..<4000 where await service.saveCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
            #expect(await service.saveCount == 1)
            #expect(store.load(logger: logger).0 == DaemonState.crashTestSample(2))
        }
    }

    @Test func aStormThatNeverSettlesIsWrittenAfterMaximumPeriods() async throws {
        try await Self.withSteppedStateService { store, service, clock, logger in
            // A change in every period: written after `maximumPeriods` all the same.
            let periods = StateService.maximumPeriods
            await service.submit(DaemonState.crashTestSample(1), version: 1)
            for n in 1...periods {
                try await clock.waitForSleeps(n)
                await service.submit(DaemonState.crashTestSample(UInt64(100 + n)), version: UInt64(100 + n))
                #expect(await service.saveCount == 0, "written in period \(n)")
                try await clock.end(n)
            }
            for _ in 0..<4000 where await service.saveCount < 1 { try await Task.sleep(for: .milliseconds(5)) }
            #expect(await service.saveCount == 1)
            #expect(store.load(logger: logger).0 == DaemonState.crashTestSample(UInt64(100 + periods)))
            // Shutdown (by the helper) cancels the pending period: the storm's last wake-up.
        }
    }

    @Test func shutdownWritesWhatIsPending() async throws {
        try await withTemporaryDirectory { dir in
            let (logger, _) = recordingLogger()
            let store = StateStore(directory: dir)
            let service = StateService(store: store, initial: DaemonState(), coalescing: .seconds(3600), logger: logger)
            let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [service], logger: logger))
            let task = Task { try await group.run() }
            await service.submit(DaemonState.crashTestSample(3), version: 1)
            await group.triggerGracefulShutdown()
            try await within(10) { try await task.value }
            #expect(store.load(logger: logger).0 == DaemonState.crashTestSample(3))
        }
    }

    @Test func aFailedSaveIsReportedAndALaterSaveSucceeds() async throws {
        try await withTemporaryDirectory { dir in
            let (logger, logs) = recordingLogger()
            // A file where the state directory should be: saving fails with ENOTDIR/EEXIST.
            try writeText(dir + "/blocked", "")
            let store = StateStore(directory: dir + "/blocked/audioroute")
            let service = StateService(store: store, initial: DaemonState(), coalescing: .milliseconds(20), logger: logger)
            let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [service], logger: logger))
            let task = Task { try await group.run() }
            await #expect(throws: Errno.self) { try await service.persist(DaemonState.crashTestSample(1), version: 1) }
            await service.submit(DaemonState.crashTestSample(2), version: 2)
            var errors: [RecordingLogHandler.Entry] = []
            for _ in 0..<500 where errors.isEmpty {
                try await Task.sleep(for: .milliseconds(10))
                errors = logs.all.filter { $0.message == "cannot save state" }
            }
            #expect(errors.first?.level == .error)
            #expect(await service.saveCount == 0)
            // The obstacle goes; the next change is written, with everything pending.
            #expect(unlink(dir + "/blocked") == 0)
            await service.submit(DaemonState.crashTestSample(3), version: 3)
            for _ in 0..<500 where await service.saveCount == 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(store.load(logger: logger).0 == DaemonState.crashTestSample(3))
            await group.triggerGracefulShutdown()
            try await within(10) { try await task.value }
        }
    }
}

@Suite struct ShutdownOrderTests {
    @Test func routesStopBeforeTheFinalStateSave() async throws {
        try await withTemporaryDirectory { dir in
            let udev = TestWatcher(name: "udev")
            let harness = Harness(dir: dir, watchers: [udev], coalescing: .seconds(3600))
            let events = EventLog(harness.routeService.events.subscribe())
            try await harness.running {
                udev.feed.yield(.added([usb]))
                _ = try await events.nextRouteChange()
                #expect(harness.savedState() == nil, "coalesced: not written yet")
            }
            #expect(harness.savedState()?.sequences.last["usb-dac"] == 1)
            let messages = harness.logs.all.map(\.message)
            let routesStopped = try #require(messages.firstIndex(of: "route service stopped"))
            let stateStopped = try #require(messages.firstIndex(of: "state service stopped"))
            #expect(routesStopped < stateStopped)
        }
    }
}
