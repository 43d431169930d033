// The BlueZ watcher: follows org.bluez on the system bus through sd-bus and
// turns connected audio devices into ports. One thread owns the bus and blocks
// in poll(2) on the bus fd and a wake eventfd (no timers, no idle wake-ups);
// its events reach Swift concurrency through an AsyncSequence.

import AudioRouteSystem
import AudioRouteDBus
import AudioRouteCore
import CSystemd
import Logging

/// Why the BlueZ watcher could not start.
public enum BluezWatcherError: Error, Sendable, CustomStringConvertible {
    /// The bus could not be reached at all (no system bus on this machine).
    case busUnavailable(BusError)
    /// The bus was reached but refused the watcher's setup (match rules, name queries).
    case setupFailed(BusError)
    /// The event thread, or its wake signal, could not be made.
    case threadFailed(Errno)

    public var description: String {
        switch self {
        case .busUnavailable(let error): return "no D-Bus system bus (\(error)); Bluetooth ports are unavailable"
        case .setupFailed(let error): return "cannot watch the bus: \(error)"
        case .threadFailed(let error): return "cannot start the event thread: \(error)"
        }
    }
}

/// The watcher's event thread.
public enum BluezWatcherThread {
    /// Its name (15 bytes at most), so tools and the benchmark can find it in /proc.
    public static let name = "bluez-watcher"
}

/// Watches BlueZ (org.bluez) and reports Bluetooth audio ports.
///
/// Ports exist while a device is connected with services resolved; see
/// docs/bluetooth.md for how UUIDs, transports and the name owner shape them.
public struct BluezWatcher: PortWatcher {
    public var name: String { "bluez" }
    public let bus: BusChoice
    public let logger: Logger

    /// - Parameters:
    ///   - bus: `.system` (default; honours DBUS_SYSTEM_BUS_ADDRESS) or an explicit address.
    ///   - logger: where faults in BlueZ's data and bus trouble are reported.
    public init(bus: BusChoice = .system, logger: Logger = Logger(label: "audioroute.bluez")) {
        self.bus = bus
        self.logger = logger
    }

    public func run(
        deliver: @escaping @Sendable (PortEvent) async -> Void, enumerated: @escaping @Sendable () async -> Void
    ) async throws {
        var iterator = try await events().iterator
        while let item = await iterator.next() {
            switch item {
            case .event(let event): await deliver(event)
            case .settled: await enumerated()
            case .started, .failed: continue
            }
        }
    }

    /// Connects, enumerates BlueZ's objects and returns the port events: first the
    /// ports present now, then every change. Throws if the bus cannot be reached.
    /// The sequence ends when the consuming task is cancelled or the bus itself goes away.
    public func events() async throws(BluezWatcherError) -> BluezPortEvents {
        let wake: WakeSignal
        do { wake = try WakeSignal() } catch { throw .threadFailed(error) }
        let (stream, continuation) = AsyncStream.makeStream(of: BluezLoop.Item.self, bufferingPolicy: .unbounded)
        continuation.onTermination = { _ in wake.fire() }
        let loop = BluezLoop(bus: bus, logger: logger, continuation: continuation, wake: wake)
        do { try startThread(name: BluezWatcherThread.name) { loop.main() } } catch { throw .threadFailed(error) }
        var iterator = stream.makeAsyncIterator()
        switch await iterator.next() {
        case .started?: return BluezPortEvents(iterator: iterator)
        case .failed(let error)?: throw error
        case .event?, .settled?, nil: return BluezPortEvents(iterator: iterator)
        }
    }
}

extension BluezWatcher: PortSnapshotting {
    /// The Bluetooth ports present now: one GetManagedObjects, then the watcher stops.
    public func currentPorts() async throws -> [Port] {
        var iterator = try await events().iterator
        var ports: [Port] = []
        while let item = await iterator.next() {
            switch item {
            case .event(let event): ports.apply(event)
            case .settled: return ports
            case .started, .failed: continue
            }
        }
        return ports
    }
}

/// The port events of a running BlueZ watcher. Single-pass: iterate it once. Cancelling the
/// iterating task, or dropping the sequence, stops the watcher and closes its bus connection.
public struct BluezPortEvents: AsyncSequence {
    public typealias Element = PortEvent
    public typealias Failure = Never
    fileprivate var iterator: AsyncStream<BluezLoop.Item>.Iterator

    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate var base: AsyncStream<BluezLoop.Item>.Iterator

        public mutating func next() async -> PortEvent? {
            while let item = await base.next() {
                if case .event(let event) = item { return event }
            }
            return nil
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: iterator) }
}

/// The event thread's state. Touched only by that thread once started.
final class BluezLoop: @unchecked Sendable {
    enum Item: Sendable {
        case started
        case failed(BluezWatcherError)
        case event(PortEvent)
        /// The ports present at start have all been delivered (snapshots stop here).
        case settled
    }

    static let serviceName = "org.bluez"

    let busChoice: BusChoice
    let logger: Logger
    let continuation: AsyncStream<Item>.Continuation
    let wake: WakeSignal

    private var objects = BluezObjects()
    private var published: [String: [Port]] = [:]
    /// The unique name owning org.bluez; signals from anyone else are ignored.
    private var owner: String?
    private var loggedFaults: Set<BluezFault> = []
    /// The unique name owning org.bluealsa, and its PCMs; nil while BlueALSA is not on the bus.
    private var bluealsaOwner: String?
    private var bluealsa: BluealsaPCMs?

    init(bus: BusChoice, logger: Logger, continuation: AsyncStream<Item>.Continuation, wake: WakeSignal) {
        self.busChoice = bus
        self.logger = logger
        self.continuation = continuation
        self.wake = wake
    }


    func main() {
        defer { continuation.finish() }
        let bus: BusConnection
        do {
            bus = try BusConnection(busChoice)
        } catch {
            continuation.yield(.failed(.busUnavailable(error)))
            return
        }
        do {
            // Sender and path restrictions keep other services' signals from waking us: any gdbus
            // client exports an ObjectManager at / (bluetoothctl does, and real BlueZ 5.66's
            // bench showed its InterfacesAdded reaching us). The bus resolves sender='org.bluez'
            // to the current owner; `handle` checks it again, so an impostor is logged and ignored.
            try bus.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(Self.serviceName)'"
            )
            try bus.addMatch("type='signal',sender='\(Self.serviceName)',path='/',interface='org.freedesktop.DBus.ObjectManager'")
            try bus.addMatch(
                "type='signal',sender='\(Self.serviceName)',path_namespace='/org/bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'")
            // BlueALSA (optional): its PCM list says which profiles can be opened.
            try bus.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(BluealsaPCMs.serviceName)'"
            )
            try bus.addMatch(
                "type='signal',sender='\(BluealsaPCMs.serviceName)',path='\(BluealsaPCMs.managerPath)',interface='org.freedesktop.DBus.ObjectManager'")
            owner = try bus.nameOwner(Self.serviceName)
            bluealsaOwner = try bus.nameOwner(BluealsaPCMs.serviceName)
        } catch {
            continuation.yield(.failed(.setupFailed(error)))
            return
        }
        continuation.yield(.started)
        // Informational only: BlueZ's own adapter list decides which devices count.
        let adapter = BluetoothAdapterStatus.probe()
        if case .present = adapter {} else { logger.info("bluez: \(adapter)") }
        if bluealsaOwner != nil { enumerateBluealsa(bus) }
        if owner == nil {
            logger.info("bluez: org.bluez is not on the bus; waiting for bluetoothd")
        } else {
            enumerate(bus)
        }
        continuation.yield(.settled)
        runLoop(bus)
        // The bus is gone or we were cancelled: nothing we reported can be vouched for any more.
        replaceObjects(BluezObjects())
    }

    private func runLoop(_ bus: borrowing BusConnection) {
        while true {
            do {
                var more = true
                while more {
                    if let message = try bus.process(more: &more) {
                        if !handle(message, bus) { return }
                    }
                }
            } catch {
                logger.error("bluez: lost the bus: \(error)")
                return
            }
            var fds = [
                PollDescriptor(fd: bus.fd, events: PollEvents(truncating: bus.events)),
                PollDescriptor(fd: wake.fd, events: .readable),
            ]
            do {
                try Poll.wait(&fds, timeoutMilliseconds: bus.pollTimeout)
            } catch {
                logger.error("bluez: \(error)")
                return
            }
            if !fds[1].returned.isEmpty { return }
        }
    }

    /// Handles one incoming message; false when the bus connection is finished.
    private func handle(_ message: borrowing BusMessage, _ bus: borrowing BusConnection) -> Bool {
        guard message.kind == .signal, let interface = message.interface, let member = message.member else { return true }
        let sender = message.sender
        let path = message.path ?? ""
        let args: [DBusValue]
        do {
            args = try message.readAll()
        } catch {
            report([BluezFault(.malformedMessage, path, "\(interface).\(member): \(error)")])
            return true
        }
        switch (interface, member) {
        case ("org.freedesktop.DBus.Local", "Disconnected"):
            logger.error("bluez: the bus connection closed")
            return false
        case ("org.freedesktop.DBus", "NameOwnerChanged"):
            guard sender == "org.freedesktop.DBus", args.count == 3, case .string(let name) = args[0],
                case .string(let newOwner) = args[2]
            else { return true }
            if name == Self.serviceName {
                ownerChanged(to: newOwner.isEmpty ? nil : newOwner, bus)
            } else if name == BluealsaPCMs.serviceName {
                bluealsaOwnerChanged(to: newOwner.isEmpty ? nil : newOwner, bus)
            }
            return true
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"), ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"),
            ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            break
        default:
            // NameAcquired and the like: not ours to judge.
            return true
        }
        if path == BluealsaPCMs.managerPath {
            handleBluealsa(interface: interface, member: member, sender: sender, args: args)
            return true
        }
        guard let sender, sender == owner else {
            report([BluezFault(.foreignSender, sender ?? "(no sender)", "\(interface).\(member) on \(path) is not from org.bluez's owner")])
            return true
        }
        var working = objects
        var faults: [BluezFault] = []
        switch (interface, member) {
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            guard args.count == 2, case .objectPath(let object) = args[0] else {
                faults.append(BluezFault(.malformedMessage, path, "InterfacesAdded is not (oa{sa{sv}})"))
                break
            }
            faults += working.applyInterfacesAdded(path: object, interfaces: args[1])
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
            guard args.count == 2, case .objectPath(let object) = args[0], case .array(let names) = args[1] else {
                faults.append(BluezFault(.malformedMessage, path, "InterfacesRemoved is not (oas)"))
                break
            }
            working.applyInterfacesRemoved(path: object, interfaces: names.compactMap(\.text))
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard args.count == 3, case .string(let changedInterface) = args[0], case .array(let invalidated) = args[2] else {
                faults.append(BluezFault(.malformedMessage, path, "PropertiesChanged is not (sa{sv}as)"))
                break
            }
            faults += working.applyProperties(
                path: path, interface: changedInterface, changed: args[1], invalidated: invalidated.compactMap(\.text))
        default:
            return true
        }
        report(faults)
        replaceObjects(working)
        return true
    }

    /// bluetoothd went away, came back or was replaced: drop everything derived from
    /// the old owner (as bluez-alsa does) and enumerate the new one.
    private func ownerChanged(to newOwner: String?, _ bus: borrowing BusConnection) {
        logger.info("bluez: org.bluez owner changed from \(owner ?? "(none)") to \(newOwner ?? "(none)")")
        owner = newOwner
        loggedFaults.removeAll()
        replaceObjects(BluezObjects())
        if newOwner != nil { enumerate(bus) }
    }

    /// BlueALSA's ObjectManager signals, from its owner only.
    private func handleBluealsa(interface: String, member: String, sender: String?, args: [DBusValue]) {
        let path = BluealsaPCMs.managerPath
        guard let sender, sender == bluealsaOwner else {
            report([BluezFault(.foreignSender, sender ?? "(no sender)", "\(interface).\(member) on \(path) is not from org.bluealsa's owner")])
            return
        }
        // A BlueALSA we could not enumerate is ignored as a whole.
        guard var working = bluealsa else { return }
        var faults: [BluezFault] = []
        switch member {
        case "InterfacesAdded":
            guard args.count == 2, case .objectPath(let object) = args[0] else {
                report([BluezFault(.malformedMessage, path, "InterfacesAdded is not (oa{sa{sv}})")])
                return
            }
            faults += working.applyInterfacesAdded(path: object, interfaces: args[1])
        case "InterfacesRemoved":
            guard args.count == 2, case .objectPath(let object) = args[0], case .array(let names) = args[1] else {
                report([BluezFault(.malformedMessage, path, "InterfacesRemoved is not (oas)")])
                return
            }
            working.applyInterfacesRemoved(path: object, interfaces: names.compactMap(\.text))
        default:
            return
        }
        report(faults)
        bluealsa = working
        replaceObjects(objects)
    }

    /// BlueALSA came, went or was replaced: its PCM list starts afresh.
    private func bluealsaOwnerChanged(to newOwner: String?, _ bus: borrowing BusConnection) {
        logger.info("bluez: org.bluealsa owner changed from \(bluealsaOwner ?? "(none)") to \(newOwner ?? "(none)")")
        bluealsaOwner = newOwner
        bluealsa = nil
        if newOwner != nil {
            enumerateBluealsa(bus)
        } else {
            replaceObjects(objects)
        }
    }

    /// GetManagedObjects on BlueALSA's manager. A BlueALSA that cannot be enumerated
    /// (an old one without an ObjectManager) is treated as absent: BlueZ alone decides.
    private func enumerateBluealsa(_ bus: borrowing BusConnection) {
        guard let bluealsaOwner else { return }
        do {
            let call = try bus.newMethodCall(
                destination: bluealsaOwner, path: BluealsaPCMs.managerPath, interface: "org.freedesktop.DBus.ObjectManager",
                member: "GetManagedObjects")
            let reply = try bus.call(call)
            var fresh = BluealsaPCMs()
            report(fresh.applyManagedObjects(try reply.readAll().first ?? .array([])))
            bluealsa = fresh
        } catch {
            logger.warning("bluez: cannot enumerate BlueALSA PCMs, ignoring BlueALSA: \(error)")
            bluealsa = nil
        }
        replaceObjects(objects)
    }

    /// GetManagedObjects on the current owner.
    private func enumerate(_ bus: borrowing BusConnection) {
        guard let owner else { return }
        do {
            let call = try bus.newMethodCall(
                destination: owner, path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
            let reply = try bus.call(call)
            let body = try reply.readAll()
            var fresh = BluezObjects()
            report(fresh.applyManagedObjects(body.first ?? .array([])))
            replaceObjects(fresh)
        } catch {
            logger.warning("bluez: cannot enumerate BlueZ objects: \(error)")
        }
    }

    /// Adopts new object state and announces what changed in the ports.
    private func replaceObjects(_ new: BluezObjects) {
        objects = new
        let (ports, faults) = objects.ports(bluealsa: bluealsa)
        report(faults)
        for event in PortEvent.diff(from: published, to: ports) { continuation.yield(.event(event)) }
        published = ports
    }

    /// Logs each distinct fault once.
    private func report(_ faults: [BluezFault]) {
        for fault in faults where !loggedFaults.contains(fault) {
            // Bounded: a flood of distinct garbage must not grow memory without limit.
            if loggedFaults.count >= 4096 { loggedFaults.removeAll() }
            loggedFaults.insert(fault)
            if fault.kind == .unknownUUID {
                logger.debug("bluez: ignored \(fault)")
            } else {
                logger.warning("bluez: ignored \(fault)")
            }
        }
    }
}
