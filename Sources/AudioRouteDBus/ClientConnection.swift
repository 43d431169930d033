// A D-Bus client connection for apps and the CLI: one thread owns the sd_bus and
// blocks in poll(2) on the bus fd and a wake eventfd (no timers, no idle
// wake-ups). Method calls are queued to that thread and answered through async
// continuations; signals (broadcast ones we matched and unicast ones sent to us)
// come out as an AsyncStream.

import AudioRouteSystem
import CSystemd
import Synchronization

/// A signal received by a client connection.
public struct DBusSignal: Sendable, Hashable {
    public var sender: String?
    public var path: String
    public var interface: String
    public var member: String
    public var arguments: [DBusValue]

    public init(sender: String?, path: String, interface: String, member: String, arguments: [DBusValue]) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }
}

/// Why a method call failed.
public enum DBusCallError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The peer answered with a D-Bus error (`org.audioroute.Error.InvalidOption`, ...).
    case remote(name: String, message: String)
    /// The call could not be made or answered (no connection, timeout, bad reply).
    case bus(BusError)

    public var description: String {
        switch self {
        case .remote(let name, let message): return message.isEmpty ? name : "\(name): \(message)"
        case .bus(let error): return "\(error)"
        }
    }
}

/// Which bus a client connects to.
public enum ClientBus: Sendable, Hashable, CustomStringConvertible {
    /// The user's session bus: `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`.
    case session
    /// The system bus (honours `DBUS_SYSTEM_BUS_ADDRESS`).
    case system
    /// An explicit address (`unix:path=/tmp/…/bus`), for tests and integrators.
    case address(String)

    /// The address this resolves to now, or nil when there is no session bus to name.
    public var resolvedAddress: String? {
        switch self {
        case .address(let address): return address
        case .system: return Environment.variables["DBUS_SYSTEM_BUS_ADDRESS"] ?? "unix:path=/run/dbus/system_bus_socket"
        case .session:
            let environment = Environment.variables
            if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return address }
            if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return "unix:path=\(runtime)/bus" }
            return nil
        }
    }

    public var description: String {
        switch self {
        case .session: return "the session bus" + (resolvedAddress.map { " (\($0))" } ?? "")
        case .system: return "the system bus" + (resolvedAddress.map { " (\($0))" } ?? "")
        case .address(let address): return "the bus at \(address)"
        }
    }
}

/// A client's connection to a bus. Calls may come from any task; signals are read
/// from `signals` by one consumer. `close()` (or dropping the last reference after it)
/// ends the thread and finishes `signals`.
public final class DBusClientConnection: Sendable {
    /// Signals: the broadcasts matched with `addMatch` and unicast ones sent to this connection.
    /// Finishes when the connection closes or the bus goes away.
    public let signals: AsyncStream<DBusSignal>
    /// This connection's unique name (":1.42").
    public let uniqueName: String
    private let loop: ClientLoop

    /// Connects to `bus`; throws when it cannot be reached.
    /// - Parameter intercept: called on the connection's thread with each signal before it
    ///   is put on `signals`; returning true takes it (it never reaches `signals`). It lets a
    ///   consumer that can handle a signal without waiting hand it to its own consumers with
    ///   one thread hand-over less. It must not block.
    public static func connect(_ bus: ClientBus, intercept: (@Sendable (DBusSignal) -> Bool)? = nil) async throws(BusError) -> DBusClientConnection {
        guard let address = bus.resolvedAddress else {
            throw BusError(operation: "find the session bus (neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set)", code: .noSuchFileOrDirectory)
        }
        let choice: BusChoice = bus == .system && Environment.variables["DBUS_SYSTEM_BUS_ADDRESS"] == nil ? .system : .address(address)
        let wake: WakeSignal
        do { wake = try WakeSignal() } catch { throw BusError(error) }
        let (stream, continuation) = AsyncStream.makeStream(of: DBusSignal.self, bufferingPolicy: .unbounded)
        let loop = ClientLoop(choice: choice, wake: wake, signals: continuation, intercept: intercept)
        let started: Result<String, BusError> = await withCheckedContinuation { ready in
            loop.ready.withLock { $0 = ready }
            do throws(Errno) {
                try startThread(name: ClientLoop.threadName) { loop.main() }
            } catch {
                ready.resume(returning: .failure(BusError(error)))
            }
        }
        switch started {
        case .success(let name): return DBusClientConnection(signals: stream, uniqueName: name, loop: loop)
        case .failure(let error): throw error
        }
    }

    private init(signals: AsyncStream<DBusSignal>, uniqueName: String, loop: ClientLoop) {
        self.signals = signals
        self.uniqueName = uniqueName
        self.loop = loop
    }

    deinit { loop.stop() }

    /// Closes the connection: pending calls fail, `signals` finishes.
    public func close() { loop.stop() }

    /// Calls a method and returns the reply's arguments.
    public func call(
        destination: String, path: String, interface: String, member: String,
        signature: String = "", arguments: [DBusValue] = [], timeoutMicroseconds: UInt64 = 5_000_000
    ) async throws(DBusCallError) -> [DBusValue] {
        let request = ClientLoop.Call(
            destination: destination, path: path, interface: interface, member: member,
            signature: signature, arguments: arguments, timeout: timeoutMicroseconds)
        let result: Result<[DBusValue], DBusCallError> = await withCheckedContinuation { continuation in
            loop.submit(.call(request, continuation))
        }
        return try result.get()
    }

    /// Asks the bus to route signals matching `rule` to this connection.
    public func addMatch(_ rule: String) async throws(DBusCallError) {
        _ = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "AddMatch", signature: "s", arguments: [.string(rule)])
    }

    /// The unique name owning `name`, or nil when nobody owns it.
    public func nameOwner(_ name: String) async throws(DBusCallError) -> String? {
        do {
            let reply = try await call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetNameOwner", signature: "s", arguments: [.string(name)])
            guard case .string(let owner)? = reply.first else { return nil }
            return owner
        } catch {
            if case .remote(let remote, _) = error, remote == "org.freedesktop.DBus.Error.NameHasNoOwner" { return nil }
            throw error
        }
    }

    /// Reads one property with org.freedesktop.DBus.Properties.Get (the variant unwrapped).
    public func property(destination: String, path: String, interface: String, name: String) async throws(DBusCallError) -> DBusValue {
        let reply = try await call(
            destination: destination, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
            signature: "ss", arguments: [.string(interface), .string(name)])
        guard let value = reply.first else {
            throw .bus(BusError(operation: "Get \(interface).\(name): empty reply", code: .badMessage))
        }
        return value.unwrapped
    }
}

/// The client thread's state. Touched by that thread, except `pending`/`ready`/`stopped` (locked).
package final class ClientLoop: @unchecked Sendable {
    package struct Call: Sendable {
        var destination, path, interface, member, signature: String
        var arguments: [DBusValue]
        var timeout: UInt64
    }

    package enum Request: Sendable {
        case call(Call, CheckedContinuation<Result<[DBusValue], DBusCallError>, Never>)
    }

    package let choice: BusChoice
    package let wake: WakeSignal
    package let signals: AsyncStream<DBusSignal>.Continuation
    package let intercept: (@Sendable (DBusSignal) -> Bool)?
    package let ready = Mutex<CheckedContinuation<Result<String, BusError>, Never>?>(nil)
    private let queue = Mutex<(pending: [Request], stopped: Bool)>(([], false))

    package init(choice: BusChoice, wake: WakeSignal, signals: AsyncStream<DBusSignal>.Continuation, intercept: (@Sendable (DBusSignal) -> Bool)?) {
        self.choice = choice
        self.wake = wake
        self.signals = signals
        self.intercept = intercept
    }

    /// The thread's name in /proc (tools and benchmarks find it by it).
    package static let threadName = "audioroute-dbus"

    package func submit(_ request: Request) {
        let accepted = queue.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.pending.append(request)
            return true
        }
        if accepted {
            wake.fire()
        } else {
            Self.fail(request, BusError(operation: "call: the connection is closed", code: .notConnected))
        }
    }

    package func stop() {
        queue.withLock { $0.stopped = true }
        wake.fire()
    }

    private static func fail(_ request: Request, _ error: BusError) {
        switch request {
        case .call(_, let continuation): continuation.resume(returning: .failure(.bus(error)))
        }
    }

    private func announce(_ result: Result<String, BusError>) {
        ready.withLock { continuation in
            continuation?.resume(returning: result)
            continuation = nil
        }
    }

    package func main() {
        defer {
            signals.finish()
            let left = queue.withLock { state -> [Request] in
                state.stopped = true
                defer { state.pending = [] }
                return state.pending
            }
            for request in left { Self.fail(request, BusError(operation: "call: the connection closed", code: .connectionReset)) }
        }
        let bus: BusConnection
        do {
            bus = try BusConnection(choice)
        } catch {
            announce(.failure(error))
            return
        }
        // sd_bus_start connects lazily; asking for the unique name finishes the handshake,
        // so an unreachable bus fails here and not at the first call.
        var unique: UnsafePointer<CChar>?
        let r = sd_bus_get_unique_name(bus.handle, &unique)
        guard r >= 0, let unique else {
            announce(.failure(BusError(operation: "connect to the bus", errno: -r)))
            return
        }
        announce(.success(String(cString: unique)))
        run(bus)
    }

    private func run(_ bus: borrowing BusConnection) {
        while true {
            let (requests, stopped) = queue.withLock { state -> ([Request], Bool) in
                defer { state.pending = [] }
                return (state.pending, state.stopped)
            }
            if stopped {
                for request in requests { Self.fail(request, BusError(operation: "call: the connection is closed", code: .notConnected)) }
                return
            }
            for request in requests { perform(request, bus) }
            do {
                var more = true
                while more {
                    if let message = try bus.process(more: &more) {
                        if !deliver(message) { return }
                    }
                }
            } catch {
                return
            }
            var fds = [
                PollDescriptor(fd: bus.fd, events: PollEvents(truncating: bus.events)),
                PollDescriptor(fd: wake.fd, events: .readable),
            ]
            do { try Poll.wait(&fds, timeoutMilliseconds: bus.pollTimeout) } catch { return }
            if !fds[1].returned.isEmpty { wake.drain() }
        }
    }

    private func perform(_ request: Request, _ bus: borrowing BusConnection) {
        switch request {
        case .call(let call, let continuation):
            continuation.resume(returning: Result { () throws(DBusCallError) -> [DBusValue] in try bus.clientCall(call) })
        }
    }

    /// Passes a signal on; false when the connection is finished.
    private func deliver(_ message: borrowing BusMessage) -> Bool {
        guard message.kind == .signal, let interface = message.interface, let member = message.member else { return true }
        if interface == "org.freedesktop.DBus.Local" && member == "Disconnected" { return false }
        // A signal whose body cannot be read is dropped: the consumer checks shapes, not bytes.
        guard let arguments = try? message.readAll() else { return true }
        let signal = DBusSignal(sender: message.sender, path: message.path ?? "", interface: interface, member: member, arguments: arguments)
        if intercept?(signal) == true { return true }
        signals.yield(signal)
        return true
    }
}

extension BusConnection {
    /// Calls a method, keeping a D-Bus error reply's name and message apart.
    fileprivate func clientCall(_ call: ClientLoop.Call) throws(DBusCallError) -> [DBusValue] {
        let message = try build(call)
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let r = sd_bus_call(handle, message.handle, call.timeout, &error, &reply)
        guard r >= 0, let reply else {
            if let name = error.name {
                throw .remote(name: String(cString: name), message: error.message.map { String(cString: $0) } ?? "")
            }
            throw .bus(BusError(operation: "call \(call.member)", errno: r < 0 ? -r : Errno.Code.ioError.rawValue))
        }
        let owned = BusMessage(owning: reply)
        do { return try owned.readAll() } catch { throw .bus(error) }
    }

    private func build(_ call: ClientLoop.Call) throws(DBusCallError) -> BusMessage {
        do {
            let message = try newMethodCall(destination: call.destination, path: call.path, interface: call.interface, member: call.member)
            if !call.signature.isEmpty { try message.append(call.arguments, signature: call.signature) }
            return message
        } catch {
            throw .bus(error)
        }
    }
}
