// Serving objects on a bus with sd-bus. The vtable macros do not import into
// Swift, so one fallback handler takes every call under the object path and the
// caller (the daemon) dispatches by interface and member. The bus lives on its
// own thread; calls go out as an AsyncSequence, and replies and signals come
// back through a queue that wakes the thread, so a slow answer never blocks the
// bus and a client that floods calls only queues them.

import CSystemd
import Glibc
import Logging
import Synchronization

/// One method call to a served object.
public struct DBusCall: Sendable {
    /// Pairs the call with its reply.
    public let id: UInt64
    /// The caller's unique name.
    public let sender: String
    public let path: String
    public let interface: String
    public let member: String
    /// The body's signature, exactly as sent.
    public let signature: String
    public let arguments: [DBusValue]
    /// The caller's credentials as the bus daemon knows them; nil unless the server asks for them.
    public let credentials: DBusCredentials?
}

/// A caller's identity from the bus daemon (GetConnectionCredentials), never from the message.
public struct DBusCredentials: Sendable, Hashable {
    public var uid: UInt32
    /// Primary and supplementary groups; empty when the bus daemon does not report them.
    public var groups: [UInt32]

    public init(uid: UInt32, groups: [UInt32]) {
        self.uid = uid
        self.groups = groups
    }
}

/// The answer to a call.
public enum DBusReply: Sendable, Hashable {
    case values([DBusValue], signature: String)
    /// A D-Bus error reply: its name ("org.audioroute.Error.UnknownPort") and message.
    case error(name: String, message: String)

    public static let empty = DBusReply.values([], signature: "")
}

/// What the server reports.
public enum DBusServerEvent: Sendable {
    case call(DBusCall)
    /// A unique name left the bus (a client exited or was killed).
    case nameVanished(String)
}

/// Why the server could not start or stopped.
public enum DBusServerError: Error, Sendable, Hashable, CustomStringConvertible {
    case busUnavailable(BusError)
    case nameTaken(String)
    case setupFailed(BusError)
    case threadFailed(errno: Int32)
    /// The bus connection closed under us.
    case disconnected

    public var description: String {
        switch self {
        case .busUnavailable(let error): return "cannot connect to the bus: \(error)"
        case .nameTaken(let name): return "\(name) is already owned on this bus: is another audiorouted running?"
        case .setupFailed(let error): return "cannot serve on the bus: \(error)"
        case .threadFailed(let code): return "cannot start the bus thread: \(String(cString: strerror(code)))"
        case .disconnected: return "the bus connection closed"
        }
    }
}

/// Owns a bus name and serves everything under one object path.
public final class DBusServer: Sendable {
    public let bus: BusChoice
    public let name: String
    public let objectPath: String
    private let loop: ServerLoop

    /// - Parameters:
    ///   - wantsCredentials: fetch each new caller's uid and groups from the bus daemon
    ///     (cached per unique name) and attach them to its calls.
    public init(bus: BusChoice, name: String, objectPath: String, wantsCredentials: Bool, logger: Logger) throws(DBusServerError) {
        self.bus = bus
        self.name = name
        self.objectPath = objectPath
        let wake: WakeSignal
        do { wake = try WakeSignal() } catch { throw .threadFailed(errno: error.errno) }
        loop = ServerLoop(bus: bus, name: name, objectPath: objectPath, wantsCredentials: wantsCredentials, wake: wake, logger: logger)
    }

    /// Connects, takes the name and starts serving. The events end when the
    /// connection is lost (the last event is then an error thrown by `finished`) or after `stop()`.
    public func start() async throws(DBusServerError) -> AsyncStream<DBusServerEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DBusServerEvent.self, bufferingPolicy: .unbounded)
        let (started, startedContinuation) = AsyncStream.makeStream(of: DBusServerError?.self)
        loop.prepare(events: continuation, started: startedContinuation)
        let context = Unmanaged.passRetained(loop).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { context in
                let loop = Unmanaged<ServerLoop>.fromOpaque(context!).takeRetainedValue()
                loop.main()
                return nil
            }, context)
        guard rc == 0 else {
            Unmanaged<ServerLoop>.fromOpaque(context).release()
            throw .threadFailed(errno: rc)
        }
        pthread_detach(thread)
        for await outcome in started {
            if let outcome { throw outcome }
            break
        }
        return stream
    }

    /// Whether the loop ended because the bus went away (not through `stop()`).
    public var lostBus: Bool { loop.lostBus.load(ordering: .acquiring) }

    /// Answers call `id`. Safe from any thread.
    public func reply(_ id: UInt64, _ reply: DBusReply) { loop.enqueue(.reply(id, reply)) }

    /// Emits a signal; with a destination, only that connection receives it.
    public func emit(path: String, interface: String, member: String, signature: String, values: [DBusValue], destination: String? = nil) {
        loop.enqueue(.signal(path: path, interface: interface, member: member, signature: signature, values: values, destination: destination))
    }

    /// Releases the name and closes the connection; the events end.
    public func stop() { loop.enqueue(.stop) }
}

/// The bus thread's state. Touched only by that thread, except `outbox`.
final class ServerLoop: @unchecked Sendable {
    enum Outgoing: Sendable {
        case reply(UInt64, DBusReply)
        case signal(path: String, interface: String, member: String, signature: String, values: [DBusValue], destination: String?)
        case stop
    }

    let busChoice: BusChoice
    let name: String
    let objectPath: String
    let wantsCredentials: Bool
    let wake: WakeSignal
    let logger: Logger
    let lostBus = Atomic<Bool>(false)
    private let outbox = Mutex<[Outgoing]>([])
    private var events: AsyncStream<DBusServerEvent>.Continuation?
    private var started: AsyncStream<DBusServerError?>.Continuation?
    /// Calls waiting for their reply: the message, with one reference held.
    private var pending: [UInt64: OpaquePointer] = [:]
    private var nextID: UInt64 = 0
    private var credentialCache: [String: DBusCredentials] = [:]
    /// The connection, valid while `main` runs (borrowed by the C callback).
    private var busHandle: OpaquePointer?

    init(bus: BusChoice, name: String, objectPath: String, wantsCredentials: Bool, wake: WakeSignal, logger: Logger) {
        self.busChoice = bus
        self.name = name
        self.objectPath = objectPath
        self.wantsCredentials = wantsCredentials
        self.wake = wake
        self.logger = logger
    }

    func prepare(events: AsyncStream<DBusServerEvent>.Continuation, started: AsyncStream<DBusServerError?>.Continuation) {
        self.events = events
        self.started = started
    }

    func enqueue(_ item: Outgoing) {
        outbox.withLock { $0.append(item) }
        wake.fire()
    }

    func main() {
        defer {
            for (_, message) in pending { sd_bus_message_unref(message) }
            pending = [:]
            events?.finish()
        }
        let bus: BusConnection
        do {
            bus = try BusConnection(busChoice)
        } catch {
            fail(.busUnavailable(error))
            return
        }
        let handle = bus.handle
        busHandle = handle
        defer { busHandle = nil }
        var slot: OpaquePointer?
        let context = Unmanaged.passUnretained(self).toOpaque()
        var r = objectPath.withCString { path in
            sd_bus_add_fallback(handle, &slot, path, { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                return Unmanaged<ServerLoop>.fromOpaque(userdata).takeUnretainedValue().receive(message)
            }, context)
        }
        guard r >= 0 else {
            fail(.setupFailed(BusError(operation: "serve \(objectPath)", errno: -r)))
            return
        }
        defer { sd_bus_slot_unref(slot) }
        do {
            try bus.addMatch("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'")
        } catch {
            fail(.setupFailed(error))
            return
        }
        r = name.withCString { sd_bus_request_name(handle, $0, 0) }
        guard r >= 0 else {
            fail(r == -EEXIST ? .nameTaken(name) : .setupFailed(BusError(operation: "request the name \(name)", errno: -r)))
            return
        }
        started?.yield(nil)
        started?.finish()
        if runLoop(bus) == .lost { lostBus.store(true, ordering: .releasing) }
    }

    private func fail(_ error: DBusServerError) {
        started?.yield(error)
        started?.finish()
    }

    private enum End { case stopped, lost }

    private func runLoop(_ bus: borrowing BusConnection) -> End {
        while true {
            do {
                var more = true
                while more {
                    guard let message = try bus.process(more: &more), message.kind == .signal else { continue }
                    switch (message.interface, message.member) {
                    case ("org.freedesktop.DBus.Local", "Disconnected"):
                        logger.error("the bus connection closed")
                        return .lost
                    case ("org.freedesktop.DBus", "NameOwnerChanged") where message.sender == "org.freedesktop.DBus":
                        if let args = try? message.readAll() { nameOwnerChanged(args) }
                    default:
                        continue
                    }
                }
            } catch {
                logger.error("lost the bus: \(error)")
                return .lost
            }
            if drainOutbox(bus) { return .stopped }
            var fds = [
                pollfd(fd: bus.fd, events: Int16(truncatingIfNeeded: bus.events), revents: 0),
                pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0),
            ]
            let r = poll(&fds, 2, bus.pollTimeout)
            if r < 0 && errno != EINTR {
                logger.error("poll failed: \(String(cString: strerror(errno)))")
                return .lost
            }
            if fds[1].revents != 0 { wake.drain() }
        }
    }

    /// Sends what other threads queued; true when asked to stop.
    private func drainOutbox(_ bus: borrowing BusConnection) -> Bool {
        let items = outbox.withLock { items in
            defer { items.removeAll() }
            return items
        }
        for item in items {
            switch item {
            case .stop:
                let handle = bus.handle
                _ = name.withCString { sd_bus_release_name(handle, $0) }
                _ = sd_bus_flush(bus.handle)
                return true
            case .reply(let id, let reply):
                guard let call = pending.removeValue(forKey: id) else { continue }
                send(reply, to: call, bus)
                sd_bus_message_unref(call)
            case .signal(let path, let interface, let member, let signature, let values, let destination):
                var raw: OpaquePointer?
                let r = sd_bus_message_new_signal(bus.handle, &raw, path, interface, member)
                guard r >= 0, let raw else {
                    logger.error("cannot build signal \(member): \(String(cString: strerror(-r)))")
                    continue
                }
                let message = BusMessage(owning: raw)
                do {
                    if let destination {
                        let d = sd_bus_message_set_destination(raw, destination)
                        guard d >= 0 else { throw BusError(operation: "address signal \(member)", errno: -d) }
                    }
                    try message.append(values, signature: signature)
                    let s = sd_bus_send(bus.handle, raw, nil)
                    guard s >= 0 else { throw BusError(operation: "send signal \(member)", errno: -s) }
                } catch {
                    logger.error("\(error)")
                }
            }
        }
        return false
    }

    private func send(_ reply: DBusReply, to call: OpaquePointer, _ bus: borrowing BusConnection) {
        var raw: OpaquePointer?
        switch reply {
        case .values:
            // A call sent with NO_REPLY_EXPECTED gets -EPERM here: nothing to send.
            guard sd_bus_message_new_method_return(call, &raw) >= 0 else { return }
        case .error(let name, let message):
            let r = name.withCString { name in
                message.withCString { text in
                    var error = sd_bus_error(name: name, message: text, _need_free: 0)
                    return sd_bus_message_new_method_error(call, &raw, &error)
                }
            }
            guard r >= 0 else { return }
        }
        guard let raw else { return }
        let message = BusMessage(owning: raw)
        if case .values(let values, let signature) = reply {
            do {
                try message.append(values, signature: signature)
            } catch {
                logger.error("cannot build a reply: \(error)")
                send(.error(name: "org.freedesktop.DBus.Error.Failed", message: "internal error: \(error)"), to: call, bus)
                return
            }
        }
        let r = sd_bus_send(bus.handle, message.handle, nil)
        if r < 0 { logger.debug("cannot send a reply: \(String(cString: strerror(-r)))") }
    }

    /// The C handler: every call under the object path, and the name-owner signals.
    func receive(_ raw: OpaquePointer) -> Int32 {
        sd_bus_message_ref(raw)
        let message = BusMessage(owning: raw)
        guard message.kind == .methodCall else { return 0 }
        guard let sender = message.sender else { return 0 }
        let signature = message.signature
        let arguments: [DBusValue]
        do {
            arguments = try message.readAll()
        } catch {
            if let busHandle {
                send(.error(name: "org.freedesktop.DBus.Error.InvalidArgs", message: "unreadable arguments: \(error)"), to: raw, BusConnection(borrowing: busHandle))
            }
            return 1
        }
        var credentials: DBusCredentials?
        if wantsCredentials {
            credentials = credentialCache[sender] ?? fetchCredentials(sender)
            if let credentials { credentialCache[sender] = credentials }
        }
        nextID += 1
        sd_bus_message_ref(raw)
        pending[nextID] = raw
        events?.yield(
            .call(
                DBusCall(
                    id: nextID, sender: sender, path: message.path ?? "", interface: message.interface ?? "",
                    member: message.member ?? "", signature: signature, arguments: arguments, credentials: credentials)))
        return 1
    }

    /// Asks the bus daemon who `sender` is. Nil (so: no rights) if it will not say.
    private func fetchCredentials(_ sender: String) -> DBusCredentials? {
        guard let busHandle else { return nil }
        let bus = BusConnection(borrowing: busHandle)
        do {
            let call = try bus.newMethodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetConnectionCredentials")
            try call.append("s", sender)
            let reply = try bus.call(call)
            guard let fields = try reply.readAll().first?.stringKeyed else { return nil }
            var uid: UInt32?
            var groups: [UInt32] = []
            for (key, value) in fields {
                switch (key, value.unwrapped) {
                case ("UnixUserID", .uint32(let id)): uid = id
                case ("UnixGroupIDs", .array(let ids)):
                    groups = ids.compactMap { if case .uint32(let gid) = $0 { gid } else { nil } }
                default: continue
                }
            }
            guard let uid else { return nil }
            return DBusCredentials(uid: uid, groups: groups)
        } catch {
            logger.warning("cannot get the credentials of \(sender): \(error)")
            return nil
        }
    }

    /// Called by the run loop for name-owner signals.
    func nameOwnerChanged(_ args: [DBusValue]) {
        guard args.count == 3, case .string(let name) = args[0], case .string(let newOwner) = args[2], name.hasPrefix(":"),
            newOwner.isEmpty
        else { return }
        credentialCache[name] = nil
        events?.yield(.nameVanished(name))
    }
}

extension WakeSignal {
    /// Resets the eventfd so the next poll sleeps again.
    func drain() {
        var value: UInt64 = 0
        _ = read(fd, &value, 8)
    }
}
