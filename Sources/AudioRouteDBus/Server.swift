// Serving objects on a bus with sd-bus. A `PollLoop` (the daemon's executor, or a
// thread of the server's own) reads the connection as one of its sources, and hands
// the connection and hands method calls to Swift concurrency as events. Replies and signals
// are sent by the thread that has them (the daemon's loop), under a lock that
// every use of the connection takes: a route change reaches the bus without
// waking another thread first (docs/daemon.md). A call is answered
// asynchronously: the server keeps a reference to the call message until the
// answer arrives, so a slow answer never holds up the bus, and a client that
// floods calls is capped.
//
// The sd-bus vtable macros do not import into Swift: one fallback callback
// receives every method call under the served path and hands it on.

import AudioRouteSystem
import CSystemd
import Logging
import Synchronization

/// The bus a server connects to.
public enum ServerBus: Sendable, Hashable, CustomStringConvertible {
    /// The user's session bus (honours DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus).
    case session
    /// The system bus (honours DBUS_SYSTEM_BUS_ADDRESS).
    case system
    /// An explicit bus address (tests).
    case address(String)

    public var description: String {
        switch self {
        case .session: return "the session bus"
        case .system: return "the system bus"
        case .address(let address): return "the bus at \(address)"
        }
    }
}

/// A caller's identity as the bus reports it (never as the message claims).
public struct BusCredentials: Sendable, Hashable {
    /// The caller's user id: the bus driver's UnixUserID (the peer's effective uid when it connected).
    public var uid: UInt32?
    /// The effective gid and the supplementary gids.
    public var gids: [UInt32]
    /// The caller's process id (the bus driver's ProcessID), when the bus knows it.
    public var pid: UInt32?

    public init(uid: UInt32?, gids: [UInt32], pid: UInt32? = nil) {
        self.uid = uid
        self.gids = gids
        self.pid = pid
    }
}

/// What a server checks before it decodes anything of a call: the input signature of every
/// method it serves, whose callers' credentials it fetches, and how much one call may decode.
/// A sender can then make the server allocate no more than `limits` allow, whatever it sends.
public struct BusContract: Sendable {
    /// Input signatures by interface, then member.
    public var methods: [String: [String: String]]
    /// "interface.member" names whose caller's credentials are fetched from the bus before the
    /// call is reported.
    public var credentialMembers: Set<String>
    /// Bounds on the arguments of a call whose signature matches.
    public var limits: DecodeLimits
    /// The longest object path a call may name (the D-Bus specification sets none).
    public var maxPathBytes: Int

    public init(methods: [String: [String: String]], credentialMembers: Set<String> = [], limits: DecodeLimits, maxPathBytes: Int = 255) {
        self.methods = methods
        self.credentialMembers = credentialMembers
        self.limits = limits
        self.maxPathBytes = maxPathBytes
    }

    /// The interface a call names, or for a call that names none (D-Bus allows it), the one
    /// interface that has `member`; "" when none or several do.
    public func interface(named: String, member: String) -> String {
        guard named.isEmpty else { return named }
        let owners = methods.filter { $0.value[member] != nil }
        return owners.count == 1 ? owners.first!.key : ""
    }
}

extension BusCredentials {
    /// The credentials in a GetConnectionCredentials answer (`a{sv}`): UnixUserID,
    /// UnixGroupIDs (the primary group and the supplementary ones, as the bus took them
    /// when the caller connected) and ProcessID.
    package init(driverReply body: [DBusValue]) throws(BusError) {
        guard case .dictionary(let entries)? = body.first else {
            throw BusError(operation: "read the caller's credentials", code: .badMessage, remote: "not a dictionary")
        }
        var uid: UInt32?
        var pid: UInt32?
        var gids: [UInt32] = []
        for entry in entries {
            switch (entry.key, entry.value.unwrapped) {
            case (.string("UnixUserID"), .uint32(let value)): uid = value
            case (.string("ProcessID"), .uint32(let value)): pid = value
            case (.string("UnixGroupIDs"), .array(let items)):
                for case .uint32(let gid) in items { gids.append(gid) }
            default: break
            }
        }
        self.init(uid: uid, gids: gids, pid: pid)
    }
}

/// One method call to a served object.
public struct BusCall: Sendable {
    /// Identifies the call when replying.
    public let token: UInt64
    /// The caller's unique name.
    public let sender: String
    public let path: String
    /// The interface the call names; for a call that names none, the contract's one interface
    /// with this member, else "".
    public let interface: String
    public let member: String
    /// The body's signature: the contract's for this member.
    public let signature: String
    /// The arguments, decoded within the contract's limits.
    public let arguments: [DBusValue]
    /// Fetched only for the contract's credential members; nil otherwise, or a failure.
    public let credentials: Result<BusCredentials, BusError>?

    /// This call with the credentials the bus gave.
    package func with(credentials: Result<BusCredentials, BusError>) -> BusCall {
        BusCall(
            token: token, sender: sender, path: path, interface: interface, member: member, signature: signature, arguments: arguments,
            credentials: credentials)
    }
}

/// A value with the signature its variant announces: an empty array has no
/// element to tell its type, so properties carry theirs.
public struct TypedValue: Sendable, Hashable {
    public var signature: String
    public var value: DBusValue

    public init(_ value: DBusValue, signature: String) {
        self.value = value
        self.signature = signature
    }
}

/// What a server reports.
public enum BusServerEvent: Sendable {
    case call(BusCall)
    /// A unique name that has called us left the bus (process exit, kill, disconnect).
    case nameVanished(String)
    /// The bus connection failed; the server has stopped.
    case lost(BusError)
}

/// Owns a bus name and the objects under one path, read on a `PollLoop`.
public final class BusServer: Sendable {
    /// The calls and name changes; ends when the server stops.
    public let events: AsyncStream<BusServerEvent>
    /// This connection's unique name.
    public let uniqueName: String
    private let loop: ServerLoop

    private init(events: AsyncStream<BusServerEvent>, uniqueName: String, loop: ServerLoop) {
        self.events = events
        self.uniqueName = uniqueName
        self.loop = loop
    }

    /// Connects, requests `name` (failing if someone owns it) and serves every
    /// object path under `objectPath`.
    /// - Parameters:
    ///   - contract: the methods served: a call is checked against it before anything of it
    ///     is decoded, and decoded within its limits.
    ///   - maxPendingPerSender: calls from one sender awaiting an answer beyond
    ///     this are refused at once with LimitsExceeded.
    ///   - executor: a loop that reads the connection, as one of its sources, instead of a
    ///     thread of the server's own: with the daemon's executor, a call reaches the daemon's
    ///     tasks without a thread hand-over, and the daemon has one thread fewer (audiorouted).
    ///     It must run.
    public static func start(
        bus: ServerBus, name: String, objectPath: String, contract: BusContract, maxPendingPerSender: Int = 64,
        executor: (any PollLoop)? = nil, logger: Logger
    ) async throws(BusError) -> BusServer {
        let reader: any PollLoop
        let ownThread: PollThread?
        if let executor {
            reader = executor
            ownThread = nil
        } else {
            do { ownThread = try PollThread(name: ServerLoop.threadName) } catch { throw BusError(error) }
            reader = ownThread!
        }
        let (stream, continuation) = AsyncStream.makeStream(of: BusServerEvent.self, bufferingPolicy: .unbounded)
        let loop = ServerLoop(
            bus: bus, name: name, objectPath: objectPath, contract: contract, maxPending: maxPendingPerSender,
            logger: logger, continuation: continuation, reader: reader, ownThread: ownThread)
        do {
            let unique = try loop.start()
            return BusServer(events: stream, uniqueName: unique, loop: loop)
        } catch {
            ownThread?.stop()
            throw error
        }
    }

    /// Answers call `token` with `values` of `signature`.
    public func reply(_ token: UInt64, _ values: [DBusValue] = [], signature: String = "") {
        loop.perform(.reply(token, values, signature))
    }

    /// Answers a Properties.Get: one variant holding `value`.
    public func replyVariant(_ token: UInt64, _ value: TypedValue) {
        loop.perform(.variants(token, [("", value)], dictionary: false))
    }

    /// Answers a Properties.GetAll: `a{sv}` of the named values.
    public func replyProperties(_ token: UInt64, _ properties: [(String, TypedValue)]) {
        loop.perform(.variants(token, properties, dictionary: true))
    }

    /// Answers call `token` with the error `name` ("org.freedesktop.DBus.Error.InvalidArgs") and `message`.
    public func replyError(_ token: UInt64, name: String, message: String) {
        loop.perform(.error(token, name, message))
    }

    /// Emits a signal; with a `destination`, to that unique name only. Sent on the calling
    /// thread before this returns (what the socket cannot take at once, the server's
    /// thread finishes), so signals from one thread keep their order.
    public func emit(path: String, interface: String, member: String, signature: String = "", values: [DBusValue] = [], destination: String? = nil) {
        loop.perform(.signal(path: path, interface: interface, member: member, signature: signature, values: values, destination: destination))
    }

    /// Releases the name and closes the connection; `events` ends.
    public func stop() { loop.requestStop() }

    /// How many calls have been read and reported so far.
    package var callsReported: UInt64 { loop.callsReported }
}

/// The server's state: the connection, read by the server thread, and the calls
/// awaiting answers. Everything below `lock` is touched only with it held: sd-bus
/// objects are not thread-safe (their reference counts included), and replies and
/// signals are sent by whichever thread has them.
package final class ServerLoop: @unchecked Sendable {
    package enum Command: Sendable {
        case reply(UInt64, [DBusValue], String)
        case variants(UInt64, [(String, TypedValue)], dictionary: Bool)
        case error(UInt64, String, String)
        case signal(path: String, interface: String, member: String, signature: String, values: [DBusValue], destination: String?)
    }

    package let busChoice: ServerBus
    package let name: String
    package let objectPath: String
    package let contract: BusContract
    package let maxPending: Int
    package let logger: Logger
    package let continuation: AsyncStream<BusServerEvent>.Continuation
    /// The loop that reads the connection.
    package let reader: any PollLoop
    /// The reader, when it is a thread of the server's own: it ends with the server.
    private let ownThread: PollThread?
    /// The name of a server's own thread in /proc.
    package static let threadName = "audioroute-bus"

    private let lock = Mutex<Void>(())
    /// The connection while it serves: nil before, and after a stop or a failure.
    private var bus: OpaquePointer?
    /// The connection it owns and the source reading it.
    private var owned: OwnedConnection?
    private var source: UInt64?
    private var stopping = false
    /// Calls awaiting an answer: a reference to the call message each, and its sender.
    private var pending: [UInt64: (message: OpaquePointer, sender: String)] = [:]
    private var pendingBySender: [String: Int] = [:]
    /// Unique names that have called us: their departure is reported.
    private var callers: Set<String> = []
    private var nextToken: UInt64 = 0

    package init(
        bus: ServerBus, name: String, objectPath: String, contract: BusContract, maxPending: Int, logger: Logger,
        continuation: AsyncStream<BusServerEvent>.Continuation, reader: any PollLoop, ownThread: PollThread?
    ) {
        self.busChoice = bus
        self.name = name
        self.objectPath = objectPath
        self.contract = contract
        self.maxPending = maxPending
        self.logger = logger
        self.continuation = continuation
        self.reader = reader
        self.ownThread = ownThread
    }

    package var callsReported: UInt64 { lock.withLock { _ in nextToken } }

    /// Sends a reply or a signal now, on the calling thread. Dropped once the server has stopped.
    package func perform(_ command: Command) {
        let queued = lock.withLock { _ -> Bool in
            guard let bus, !stopping else { return false }
            run(command, on: bus)
            // sd-bus writes at once what the socket takes; the rest waits for POLLOUT, which
            // the reading loop, asleep in a poll(2) set up before, is not waiting for.
            return PollEvents(truncating: sd_bus_get_events(bus)).contains(.writable)
        }
        if queued { reader.wakeUp() }
    }

    /// Asks the reading loop to flush what is queued, release the name and close.
    package func requestStop() {
        lock.withLock { _ in stopping = true }
        reader.schedule { self.closeOnLoop() }
    }

    // MARK: On the loop

    /// Connects, sets up and starts reading the connection as a source of the reader.
    /// Returns the unique name.
    package func start() throws(BusError) -> String {
        let executor = reader
        let (box, name) = try connect()
        let handle = box.connection.handle
        let fd = box.connection.fd
        lock.withLock { _ in
            bus = handle
            owned = box
        }
        let id = executor.watch(
            fd: fd,
            events: { [self] in
                lock.withLock { _ in bus.map { PollEvents(truncating: sd_bus_get_events($0)) } ?? [] }
            },
            { [self] in readOnLoop() })
        lock.withLock { _ in source = id }
        // sd-bus may already hold messages it read while setting up (a call that came during
        // RequestName): the socket will not show them, so they are processed once now.
        scheduleTurn(on: executor, source: id)
        return name
    }

    /// At most this many messages per turn: a client flooding calls must not hold the loop
    /// away from udev and the route service for long.
    package static let messagesPerTurn = 64

    private func scheduleTurn(on executor: any PollLoop, source id: UInt64) {
        executor.schedule { [self] in
            if !readOnLoop() { executor.unwatch(id) }
        }
    }

    /// The source's handler: processes the messages sd-bus has, then waits for the next poll.
    /// After `messagesPerTurn` it goes on in a job queued behind the others instead: sd-bus
    /// may hold more than the socket shows, which no poll would report. False once the
    /// connection is gone.
    private func readOnLoop() -> Bool {
        for _ in 0..<Self.messagesPerTurn {
            let step = lock.withLock { _ -> Step in
                guard let bus, !stopping else { return .stop }
                return process(bus)
            }
            switch step {
            case .process: continue
            case .wait: return true
            case .stop: return false
            case .lost(let error):
                logger.error("lost the bus: \(error)")
                // The connection closes here; the loop drops the source when this returns false.
                _ = lock.withLock { _ in release() }
                continuation.yield(.lost(error))
                continuation.finish()
                ownThread?.stop()
                return false
            }
        }
        if let id = lock.withLock({ _ in source }) { scheduleTurn(on: reader, source: id) }
        return true
    }

    /// Flushes, releases the connection and ends `events`; on the loop, after a stop request.
    private func closeOnLoop() {
        var (owned, source) = lock.withLock { _ in
            if let bus { _ = sd_bus_flush(bus) }
            return (release(), self.source)
        }
        if let source { reader.unwatch(source) }
        // Closed here: after the source is gone, and before `events` ends, so that whoever
        // waits for the end finds the connection (and its name) gone.
        owned = nil
        _ = owned
        continuation.finish()
        ownThread?.stop()
    }

    /// Forgets the connection and the calls awaiting answers; returns the owned connection,
    /// for the caller to close once the lock is released. With the lock held.
    private func release() -> OwnedConnection? {
        bus = nil
        for (_, call) in pending { sd_bus_message_unref(call.message) }
        pending = [:]
        awaitingCredentials = [:]
        defer { owned = nil }
        return owned
    }

    /// Connects, serves the object path and takes the name; returns the connection and
    /// its unique name.
    private func connect() throws(BusError) -> (OwnedConnection, String) {
        let box = OwnedConnection(try BusConnection(serving: busChoice))
        try setUp(box.connection)
        var unique: UnsafePointer<CChar>?
        _ = sd_bus_get_unique_name(box.connection.handle, &unique)
        return (box, unique.map { String(cString: $0) } ?? "")
    }

    private func setUp(_ bus: borrowing BusConnection) throws(BusError) {
        // Departures of our callers: filtered here, on the thread.
        try bus.addMatch(
            "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'")
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        // A floating slot: the bus owns it and frees it with the connection, which this thread closes.
        var r = sd_bus_add_fallback(
            bus.handle, nil, objectPath,
            { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                return Unmanaged<ServerLoop>.fromOpaque(userdata).takeUnretainedValue().handleCall(message)
            }, userdata)
        guard r >= 0 else { throw BusError(operation: "serve \(objectPath)", errno: -r) }
        // No queueing, no replacing: a second daemon fails here instead of waiting in line.
        r = sd_bus_request_name(bus.handle, name, 0)
        guard r >= 0 else {
            let reason = r == -Errno.Code.fileExists.rawValue ? "it is owned by another connection (is audiorouted already running?)" : Errno.Code(-r).description
            throw BusError(operation: "request the name \(name) on \(busChoice)", errno: -r, remote: reason)
        }
    }

    private enum Step {
        case process
        case wait
        case stop
        case lost(BusError)
    }

    /// One sd_bus_process step: `.process` if there may be more, `.wait` if not. With the lock held.
    private func process(_ handle: OpaquePointer) -> Step {
        var message: OpaquePointer?
        let r = sd_bus_process(handle, &message)
        if let message {
            handleUnclaimed(message)
            sd_bus_message_unref(message)
        }
        if r < 0 { return .lost(BusError(operation: "process the bus", errno: -r)) }
        return r > 0 ? .process : .wait
    }

    /// Sends one reply or signal. Called with the lock held.
    private func run(_ command: Command, on bus: OpaquePointer) {
        switch command {
        case .reply(let token, let values, let signature):
            answer(token, on: bus) { reply throws(BusError) in try reply.append(values, signature: signature) }
        case .variants(let token, let entries, let dictionary):
            answer(token, on: bus) { reply throws(BusError) in try appendVariants(reply, entries, dictionary: dictionary) }
        case .error(let token, let name, let message):
            guard let call = take(token) else { return }
            replyError(call, name, message)
            sd_bus_message_unref(call)
        case .signal(let path, let interface, let member, let signature, let values, let destination):
            var raw: OpaquePointer?
            let r = sd_bus_message_new_signal(bus, &raw, path, interface, member)
            guard r >= 0, let raw else {
                logger.error("cannot build signal \(member): \(Errno.Code(-r).description)")
                return
            }
            let signal = BusMessage(owning: raw)
            do {
                if let destination {
                    let d = sd_bus_message_set_destination(signal.handle, destination)
                    guard d >= 0 else { throw BusError(operation: "address signal \(member) to \(destination)", errno: -d) }
                }
                try signal.append(values, signature: signature)
                try send(bus, signal)
            } catch {
                logger.error("cannot send signal \(member): \(error)")
            }
        }
    }

    /// Replies to call `token` with a body `fill` appends; an error reply if that fails.
    /// Called with the lock held.
    private func answer(_ token: UInt64, on bus: OpaquePointer, _ fill: (borrowing BusMessage) throws(BusError) -> Void) {
        guard let call = take(token) else { return }
        defer { sd_bus_message_unref(call) }
        var raw: OpaquePointer?
        let r = sd_bus_message_new_method_return(call, &raw)
        guard r >= 0, let raw else { return }  // no reply expected, or the caller is gone
        let reply = BusMessage(owning: raw)
        do {
            try fill(reply)
            try send(bus, reply)
        } catch {
            logger.error("cannot send a reply: \(error)")
            replyError(call, "org.freedesktop.DBus.Error.Failed", "internal error: \(error)")
        }
    }

    private func appendVariants(_ message: borrowing BusMessage, _ entries: [(String, TypedValue)], dictionary: Bool) throws(BusError) {
        func open(_ kind: UInt8, _ contents: String) throws(BusError) {
            let r = sd_bus_message_open_container(message.handle, CChar(kind), contents)
            guard r >= 0 else { throw BusError(operation: "append: open container \(contents)", errno: -r) }
        }
        func close() throws(BusError) {
            let r = sd_bus_message_close_container(message.handle)
            guard r >= 0 else { throw BusError(operation: "append: close container", errno: -r) }
        }
        if dictionary { try open(UInt8(ascii: "a"), "{sv}") }
        for (name, typed) in entries {
            if dictionary {
                try open(UInt8(ascii: "e"), "sv")
                try message.append(.init("s"), name)
            }
            try open(UInt8(ascii: "v"), typed.signature)
            // Inside the variant, the signature-driven writer appends exactly one value of its type.
            try message.append([typed.value], signature: typed.signature)
            try close()
            if dictionary { try close() }
        }
        if dictionary { try close() }
    }

    private func send(_ bus: OpaquePointer, _ message: borrowing BusMessage) throws(BusError) {
        let r = sd_bus_send(bus, message.handle, nil)
        guard r >= 0 else { throw BusError(operation: "send \(message.member ?? "reply")", errno: -r) }
    }

    private func take(_ token: UInt64) -> OpaquePointer? {
        guard let call = pending.removeValue(forKey: token) else { return nil }
        let left = (pendingBySender[call.sender] ?? 1) - 1
        pendingBySender[call.sender] = left > 0 ? left : nil
        return call.message
    }

    private func replyError(_ call: OpaquePointer, _ name: String, _ message: String) {
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        _ = sd_bus_error_set(&error, name, message)
        _ = sd_bus_reply_method_error(call, &error)
    }

    /// The fallback callback: every method call under the served path. Runs inside
    /// `sd_bus_process`, with the lock held.
    fileprivate func handleCall(_ raw: OpaquePointer) -> Int32 {
        let call = BusMessage(owning: sd_bus_message_ref(raw))
        guard call.kind == .methodCall, let sender = call.sender, let member = call.member else { return 0 }
        if (pendingBySender[sender] ?? 0) >= maxPending {
            replyError(raw, "org.freedesktop.DBus.Error.LimitsExceeded", "more than \(maxPending) calls from \(sender) await an answer")
            return 1
        }
        // Checked against the contract before anything is decoded, and refused here at once
        // otherwise: only a call of the contract's shape and size is kept until it is answered.
        guard let path = call.boundedPath(maxBytes: contract.maxPathBytes) else {
            replyError(raw, "org.freedesktop.DBus.Error.UnknownObject", "an object path of more than \(contract.maxPathBytes) bytes")
            return 1
        }
        let interface = contract.interface(named: call.interface ?? "", member: member)
        guard let methods = contract.methods[interface] else {
            let text = interface.isEmpty ? "no interface has a method \(member)" : "no interface \(interface)"
            replyError(raw, interface.isEmpty ? "org.freedesktop.DBus.Error.UnknownMethod" : "org.freedesktop.DBus.Error.UnknownInterface", text)
            return 1
        }
        guard let expected = methods[member] else {
            replyError(raw, "org.freedesktop.DBus.Error.UnknownMethod", "\(interface) has no method \(member)")
            return 1
        }
        let signature = call.signature
        guard signature == expected else {
            replyError(raw, "org.freedesktop.DBus.Error.InvalidArgs", "\(member): expected signature \"\(expected)\", got \"\(signature)\"")
            return 1
        }
        let arguments: [DBusValue]
        do {
            arguments = try call.readAll(limits: contract.limits)
        } catch {
            replyError(raw, "org.freedesktop.DBus.Error.InvalidArgs", "unreadable arguments: \(error)")
            return 1
        }
        nextToken += 1
        pending[nextToken] = (sd_bus_message_ref(raw), sender)
        pendingBySender[sender, default: 0] += 1
        callers.insert(sender)
        let reported = BusCall(
            token: nextToken, sender: sender, path: path, interface: interface, member: member, signature: signature, arguments: arguments,
            credentials: nil)
        if contract.credentialMembers.contains(interface + "." + member) {
            askCredentials(for: reported, on: sd_bus_message_get_bus(raw))
        } else {
            continuation.yield(.call(reported))
        }
        return 1
    }

    // MARK: Credentials

    /// Calls waiting for their caller's credentials, by the cookie of the bus driver call that fetches them.
    private var awaitingCredentials: [UInt64: BusCall] = [:]

    /// Asks the bus driver for the caller's credentials without waiting: the call is reported
    /// when they arrive. A synchronous call would read, and hold, everything queued behind
    /// its answer (a flood of large calls) and keep the loop from its other work meanwhile.
    /// With the lock held.
    private func askCredentials(for call: BusCall, on bus: OpaquePointer?) {
        func failed(_ error: BusError) { continuation.yield(.call(call.with(credentials: .failure(error)))) }
        guard let bus else { return failed(BusError(operation: "query the caller's credentials", code: .notConnected)) }
        var raw: OpaquePointer?
        var r = sd_bus_message_new_method_call(bus, &raw, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionCredentials")
        guard r >= 0, let raw else { return failed(BusError(operation: "query the caller's credentials", errno: -r)) }
        let request = BusMessage(owning: raw)
        do {
            try request.append("s", call.sender)
        } catch {
            return failed(error)
        }
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        // A floating slot: sd-bus frees it after the answer (or with the connection).
        r = sd_bus_call_async(
            bus, nil, request.handle,
            { reply, userdata, _ in
                guard let reply, let userdata else { return 0 }
                Unmanaged<ServerLoop>.fromOpaque(userdata).takeUnretainedValue().credentialsArrived(reply)
                return 1
            }, userdata, 5_000_000)
        guard r >= 0 else { return failed(BusError(operation: "query the caller's credentials", errno: -r)) }
        var cookie: UInt64 = 0
        _ = sd_bus_message_get_cookie(request.handle, &cookie)
        awaitingCredentials[cookie] = call
    }

    /// The bus driver's answer (or sd-bus's timeout error): reports the call it was for.
    /// Runs inside `sd_bus_process`, with the lock held.
    private func credentialsArrived(_ raw: OpaquePointer) {
        var cookie: UInt64 = 0
        guard sd_bus_message_get_reply_cookie(raw, &cookie) >= 0, let call = awaitingCredentials.removeValue(forKey: cookie) else { return }
        let reply = BusMessage(owning: sd_bus_message_ref(raw))
        if let error = sd_bus_message_get_error(raw), error.pointee.name != nil {
            let name = String(cString: error.pointee.name)
            let message = error.pointee.message.map { String(cString: $0) } ?? ""
            let failure = BusError(operation: "query the caller's credentials", code: .ioError, remote: "\(name): \(message)")
            continuation.yield(.call(call.with(credentials: .failure(failure))))
            return
        }
        continuation.yield(.call(call.with(credentials: Result { () throws(BusError) in try BusCredentials(driverReply: reply.readAll()) })))
    }

    /// A message no slot claimed: the bus driver's NameOwnerChanged, or noise. With the lock held.
    private func handleUnclaimed(_ raw: OpaquePointer) {
        let message = BusMessage(owning: sd_bus_message_ref(raw))
        if message.kind == .methodCall {
            // A call to a path outside the served one: sd-bus hands it back unanswered, and
            // the caller would wait for its timeout.
            replyError(raw, "org.freedesktop.DBus.Error.UnknownObject", "no object at \(message.boundedPath(maxBytes: contract.maxPathBytes) ?? "that path")")
            return
        }
        guard message.kind == .signal, message.sender == "org.freedesktop.DBus", message.member == "NameOwnerChanged",
            let arguments = try? message.readAll(), arguments.count == 3,
            case .string(let name) = arguments[0], case .string(let newOwner) = arguments[2],
            name.hasPrefix(":"), newOwner.isEmpty, callers.remove(name) != nil
        else { return }
        continuation.yield(.nameVanished(name))
    }
}

/// A served connection that lives with the server rather than on a thread's stack; closed
/// when the last reference goes.
package final class OwnedConnection: @unchecked Sendable {
    package let connection: BusConnection
    package init(_ connection: consuming BusConnection) { self.connection = connection }
}

extension BusConnection {
    /// Opens a connection to serve on.
    package init(serving choice: ServerBus) throws(BusError) {
        switch choice {
        case .address(let address):
            self = try BusConnection(.address(address))
        case .system:
            self = try BusConnection(.system)
        case .session:
            var bus: OpaquePointer?
            let r = sd_bus_open_user(&bus)
            guard r >= 0, let bus else { throw BusError(operation: "connect to the session bus", errno: -r) }
            self.init(adopting: bus)
        }
    }
}
