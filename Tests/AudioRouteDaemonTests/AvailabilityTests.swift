// Ports' availability in the daemon: a watcher announces unavailable ports (a headphone jack
// with nothing plugged in) and ports of unknown availability (HDMI whose jack cannot be read);
// the tower and the route see only the usable ones, `allPorts` and the D-Bus `AllPorts` list
// every one, and a change of availability is an unplug or a plug for the route.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteDaemon
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteTestKit
import Synchronization
import Testing

private let speaker = Port(uid: "pci/speaker", type: .builtInSpeaker, device: "pci", alsa: "dmix:CARD=PCH,DEV=0")
private let hdmi = Port(uid: "gpu/hdmi-3", type: .HDMI, device: "gpu/hdmi-3", priority: -1, alsa: "dmix:CARD=NVidia,DEV=3", availability: .unknown)

private func headphones(_ availability: Port.Availability) -> Port {
    Port(uid: "pci/headphones", type: .headphones, device: "pci/jack", alsa: "dmix:CARD=PCH,DEV=0", availability: availability)
}

private func headsetMic(_ availability: Port.Availability, name: String? = nil) -> Port {
    Port(uid: "pci/headset-mic", type: .headsetMic, device: "pci/jack", name: name, alsa: "dsnoop:CARD=PCH,DEV=0", availability: availability)
}

/// A laptop at start: speaker, an empty headset jack, HDMI whose jack cannot be read.
private func laptopWatcher() -> TestWatcher {
    TestWatcher(name: "udev", present: [.added([speaker, headphones(.unavailable), headsetMic(.unavailable)]), .added([hdmi])])
}

/// A port with the sequence the daemon gave it, to compare with what it announces.
private func sequenced(_ port: Port, _ sequence: UInt64, priority: Int? = nil) -> Port {
    var port = port
    port.sequence = sequence
    if let priority { port.priority = priority }
    return port
}

@Suite struct RouteServiceAvailabilityTests {
    @Test func unavailablePortsAreListedNeverRoutedAndTheirChangesAreUnplugsAndPlugs() async throws {
        try await withTemporaryDirectory { dir in
            let udev = laptopWatcher()
            let harness = Harness(dir: dir, watchers: [udev], coalescing: .seconds(3600))
            let service = harness.routeService
            try await harness.running {
                // Restored at start: the speaker is 1 and HDMI 2; the unavailable ports have no place in last-in-wins.
                #expect(await service.ports == [sequenced(speaker, 1), sequenced(hdmi, 2)])
                #expect(await service.allPorts == [sequenced(speaker, 1), headphones(.unavailable), headsetMic(.unavailable), sequenced(hdmi, 2)])
                #expect(await service.route.outputs == ["pci/speaker"])
                #expect(try harness.alsaOutput() == "dmix:CARD=PCH,DEV=0")

                // Plugged: the tower gets an arrival, the listing an update, and the route moves as for a plug.
                let events = EventLog(service.events.subscribe())
                udev.feed.yield(.updated(headphones(.available)))
                let plugged = sequenced(headphones(.available), 3)
                #expect(try await events.next() == .portChanged(PortChange(kind: .added, port: plugged)))
                #expect(try await events.next() == .allPortsChanged(PortChange(kind: .updated, port: plugged)))
                guard case .routeChanged(let plug)? = try await events.next() else { throw TestFailure("expected the route change") }
                #expect(plug.reason == .newDeviceAvailable)
                #expect(plug.current.outputs == ["pci/headphones"])
                #expect(await service.ports.map(\.uid) == ["pci/speaker", "gpu/hdmi-3", "pci/headphones"])

                // Unplugged: a removal for the tower, an update of the listing, oldDeviceUnavailable.
                udev.feed.yield(.updated(headphones(.unavailable)))
                #expect(try await events.next() == .portChanged(PortChange(kind: .removed, port: plugged)))
                #expect(try await events.next() == .allPortsChanged(PortChange(kind: .updated, port: headphones(.unavailable))))
                guard case .routeChanged(let unplug)? = try await events.next() else { throw TestFailure("expected the route change") }
                #expect(unplug.reason == .oldDeviceUnavailable)
                #expect(unplug.current.outputs == ["pci/speaker"])
                #expect(try harness.alsaOutput() == "dmix:CARD=PCH,DEV=0")

                // An unavailable port that stays unavailable changes the listing only: its one
                // event comes right before the next event's first.
                udev.feed.yield(.updated(headsetMic(.unavailable, name: "Front Mic")))
                udev.feed.yield(.removed(["gpu/hdmi-3"]))
                #expect(try await events.next() == .allPortsChanged(PortChange(kind: .updated, port: headsetMic(.unavailable, name: "Front Mic"))))
                #expect(try await events.next() == .portChanged(PortChange(kind: .removed, port: sequenced(hdmi, 2))))
                #expect(try await events.next() == .allPortsChanged(PortChange(kind: .removed, port: sequenced(hdmi, 2))))

                // A user's priority for an unavailable port: saved and listed now, used when it is plugged.
                try await service.setPriority(7, for: "pci/headset-mic")
                #expect(harness.savedState()?.priorities == ["pci/headset-mic": 7])
                let listed = sequenced(headsetMic(.unavailable, name: "Front Mic"), 0, priority: 7)
                #expect(try await events.next() == .allPortsChanged(PortChange(kind: .updated, port: listed)))
                #expect(await service.allPorts.first { $0.uid == "pci/headset-mic" } == listed)
                udev.feed.yield(.updated(headsetMic(.available)))
                guard case .portChanged(let arrived)? = try await events.next() else { throw TestFailure("expected the arrival") }
                #expect(arrived.kind == .added && arrived.port.uid == "pci/headset-mic" && arrived.port.priority == 7)
                // A port nobody knows is still refused.
                await #expect(throws: RequestError.refused(.unknownPort("ghost"))) { try await service.setPriority(1, for: "ghost") }
            }
        }
    }

    @Test func aDuplicateOfAnUnavailablePortIsRefusedAndLogged() async throws {
        try await withTemporaryDirectory { dir in
            let udev = laptopWatcher()
            let harness = Harness(dir: dir, watchers: [udev])
            let service = harness.routeService
            try await harness.running {
                let events = EventLog(service.events.subscribe())
                udev.feed.yield(.added([headphones(.available)]))  // garbage: it is known, as unavailable
                udev.feed.yield(.removed(["pci/headset-mic"]))  // a good one after it still applies
                let first = try await events.next()
                #expect(first == .allPortsChanged(PortChange(kind: .removed, port: headsetMic(.unavailable))))
                let refusals = harness.logs.all.filter { $0.message == "port event refused" }
                #expect(refusals.map { $0.metadata["error"] ?? "" } == ["port \"pci/headphones\" already exists"])
                #expect(await service.allPorts.map(\.uid) == ["pci/speaker", "pci/headphones", "gpu/hdmi-3"])
                #expect(await service.route.outputs == ["pci/speaker"])
            }
        }
    }
}

/// The daemon in this process on a private bus, fed by a test watcher, stopped on `stop()`.
private final class InProcessDaemon: @unchecked Sendable {
    let bus: PrivateBus
    let task: Task<Void, any Error>
    let stopper: AsyncStream<Int32>.Continuation

    init(directory: String, watcher: TestWatcher) throws {
        bus = try PrivateBus()
        let (signals, stopper) = AsyncStream.makeStream(of: Int32.self)
        self.stopper = stopper
        let (logger, _) = recordingLogger()
        let paths = DaemonPaths(stateDirectory: directory + "/state", runtimeDirectory: directory + "/run")
        let address = bus.address
        task = Task { try await Daemon.run(paths: paths, watchers: [watcher], bus: .address(address), logger: logger, signals: signals) }
    }

    func stop() async throws {
        stopper.yield(15)
        try await within(10) { try await self.task.value }
        bus.close()
    }
}

/// A connection's signals from the manager object, collected in the background so a test can
/// take them in order (the bus's own, such as NameAcquired, left out).
private final class SignalLog: Sendable {
    private final class Buffer: Sendable {
        let state = Mutex<(signals: [DBusSignal], read: Int)>(([], 0))
    }

    private let buffer = Buffer()

    init(_ stream: AsyncStream<DBusSignal>) {
        let buffer = self.buffer
        Task {
            for await signal in stream where signal.interface == DBusAPI.managerInterface {
                buffer.state.withLock { $0.signals.append(signal) }
            }
        }
    }

    /// The next signal; fails after 10 s.
    func next() async throws -> DBusSignal {
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while ContinuousClock.now < deadline {
            let signal: DBusSignal? = buffer.state.withLock { state in
                guard state.read < state.signals.count else { return nil }
                state.read += 1
                return state.signals[state.read - 1]
            }
            if let signal { return signal }
            try await Task.sleep(for: .milliseconds(2))
        }
        throw TimedOut()
    }
}

@Suite(.serialized) struct DBusAvailabilityTests {
    private static func manager(_ client: DBusClientConnection, _ property: BusProperty) async throws -> DBusValue {
        try await client.property(destination: DBusAPI.busName, path: DBusAPI.managerPath, interface: property.interface, name: property.name)
    }

    @Test func allPortsListsEveryKnownPortAndItsChangesBesidePortsChanged() async throws {
        try await withTemporaryDirectory { dir in
            let udev = laptopWatcher()
            let daemon = try InProcessDaemon(directory: dir, watcher: udev)
            do {
                let client = try await DBusClientConnection.connect(.address(daemon.bus.address))
                defer { client.close() }
                try await client.addMatch(DBusAPI.signalMatch(interface: DBusAPI.managerInterface, path: DBusAPI.managerPath))
                // The name is taken before the watchers start: wait for their ports.
                var all: [Port] = []
                for _ in 0..<500 where all.count < 4 {
                    if let value = try? await Self.manager(client, DBusAPI.Manager.allPortsProperty) { all = try DBusAPI.portsWithAvailability(value) }
                    if all.count < 4 { try await Task.sleep(for: .milliseconds(10)) }
                }
                #expect(all == [sequenced(speaker, 1), headphones(.unavailable), headsetMic(.unavailable), sequenced(hdmi, 2)])
                #expect(try await Self.manager(client, DBusAPI.Manager.versionProperty) == .uint32(DBusAPI.version))
                // Ports keeps its meaning: what a route may use, the unknown HDMI included.
                #expect(try DBusAPI.ports(try await Self.manager(client, DBusAPI.Manager.portsProperty)).map(\.uid) == ["pci/speaker", "gpu/hdmi-3"])

                let signals = SignalLog(client.signals)
                udev.feed.yield(.updated(headphones(.available)))
                // The start's own signals may still be coming: the plug's first is the headphones' PortsChanged.
                var signal = try await signals.next()
                while signal.member != "PortsChanged" || (try? DBusAPI.portsChanged(signal.arguments).port.uid) != "pci/headphones" {
                    signal = try await signals.next()
                }
                #expect(try DBusAPI.portsChanged(signal.arguments) == (.added, sequenced(headphones(.available), 3)))
                signal = try await signals.next()
                #expect(signal.member == "AllPortsChanged")
                #expect(try DBusAPI.allPortsChanged(signal.arguments) == (.updated, sequenced(headphones(.available), 3)))
                signal = try await signals.next()
                #expect(signal.member == "RouteChanged")
                #expect(try DBusAPI.routeChange(signal.arguments).reason == .newDeviceAvailable)

                udev.feed.yield(.updated(headphones(.unavailable)))
                signal = try await signals.next()
                #expect(signal.member == "PortsChanged")
                #expect(try DBusAPI.portsChanged(signal.arguments).kind == .removed)
                signal = try await signals.next()
                #expect(signal.member == "AllPortsChanged")
                #expect(try DBusAPI.allPortsChanged(signal.arguments) == (.updated, headphones(.unavailable)))
                signal = try await signals.next()
                #expect(try DBusAPI.routeChange(signal.arguments).reason == .oldDeviceUnavailable)

                // A priority for the unplugged headphones is accepted, and listed.
                _ = try await client.call(
                    destination: DBusAPI.busName, path: DBusAPI.managerPath, interface: DBusAPI.managerInterface,
                    member: DBusAPI.Manager.setPortPriority.name, signature: "si", arguments: [.string("pci/headphones"), .int32(150)])
                signal = try await signals.next()
                #expect(try DBusAPI.allPortsChanged(signal.arguments) == (.updated, sequenced(headphones(.unavailable), 0, priority: 150)))
                let listed = try DBusAPI.portsWithAvailability(try await Self.manager(client, DBusAPI.Manager.allPortsProperty))
                #expect(listed.map(\.availability) == [.available, .unavailable, .unavailable, .unknown])
                #expect(listed[1].priority == 150)
            } catch {
                try await daemon.stop()
                throw error
            }
            try await daemon.stop()
        }
    }
}
