// The D-Bus API as a Service: calls become RouteService requests, DaemonEvents
// become signals. The bus itself lives on the BusServer's thread; this actor
// answers each call when the route service has, so a slow request never holds
// the bus, and a flooding client is capped by the server.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Logging
import ServiceLifecycle

/// Serves `org.audioroute.AudioRoute1` and its sessions (docs/dbus-api.md).
public actor DBusService: Service {
    private struct OpenSession {
        var owner: String
        /// The owner's user, as the bus reports it.
        var uid: UInt32
        var app: String
    }

    private let server: BusServer
    private let routes: RouteService
    private let policy: AccessPolicy
    private let logger: Logger
    /// Open sessions by number (path `…/session/N`).
    private var sessions: [Int: OpenSession] = [:]
    private var nextSession = 1
    /// Every port seen, so a route change can still describe a port that has just gone.
    private var known: [String: Port] = [:]
    private var departed: [String: Port] = [:]

    public init(server: BusServer, routes: RouteService, policy: AccessPolicy, logger: Logger) {
        self.server = server
        self.routes = routes
        self.policy = policy
        self.logger = logger
    }

    /// Connects to `bus` and takes the API's name: a missing bus or a taken name throws here,
    /// before the daemon says it is ready.
    public static func connect(bus: ServerBus, executor: SingleThreadExecutor? = nil, logger: Logger) async throws(BusError) -> BusServer {
        try await BusServer.start(
            bus: bus, name: DBusAPI.busName, objectPath: DBusAPI.managerPath,
            contract: DBusAPI.contract(enforced: bus != .session), executor: executor, logger: logger)
    }

    public func run() async throws {
        let updates = routes.events.subscribe()
        for port in await routes.ports { known[port.uid] = port }
        let server = self.server
        let lost: BusError? = await withTaskGroup(of: BusError?.self) { group in
            group.addTask {
                for await event in updates { await self.announce(event) }
                return nil
            }
            group.addTask {
                for await event in server.events {
                    switch event {
                    case .call(let call): await self.answer(call)
                    case .nameVanished(let name): await self.ownerLeft(name)
                    case .lost(let error): return error
                    }
                }
                return nil
            }
            group.addTask {
                try? await gracefulShutdown()
                server.stop()
                return nil
            }
            var lost: BusError?
            for await result in group {
                if let result {
                    lost = result
                    server.stop()
                }
                // The route service ends its events when it stops; the bus stops on shutdown.
                if lost != nil || Task.isShuttingDownGracefully { group.cancelAll() }
            }
            return lost
        }
        logger.debug("D-Bus service stopped")
        if let lost { throw lost }
    }

    // MARK: Events to signals

    private func announce(_ event: DaemonEvent) {
        switch event {
        case .portChanged(let change):
            if change.kind == .removed {
                known[change.port.uid] = nil
                departed[change.port.uid] = change.port
            } else {
                known[change.port.uid] = change.port
                departed[change.port.uid] = nil
            }
            server.emit(
                path: DBusAPI.managerPath, interface: DBusAPI.managerInterface, member: "PortsChanged",
                signature: "s" + DBusAPI.portSignature, values: [.string(change.kind.rawValue), DBusAPI.value(of: change.port)])
        case .routeChanged(let change):
            let describe: (String) -> Port? = { self.known[$0] ?? self.departed[$0] }
            server.emit(
                path: DBusAPI.managerPath, interface: DBusAPI.managerInterface, member: "RouteChanged",
                signature: "s" + DBusAPI.routeSignature + DBusAPI.routeSignature,
                values: [
                    .string(change.reason.rawValue), DBusAPI.value(of: change.previous, describe: describe),
                    DBusAPI.value(of: change.current, describe: describe),
                ])
            departed = [:]
        case .silentModeChanged(let on):
            server.emit(path: DBusAPI.managerPath, interface: DBusAPI.managerInterface, member: "SilentModeChanged", signature: "b", values: [.bool(on)])
        case .session(let event):
            guard let number = Self.sessionNumber(event.session), let owner = sessions[number]?.owner else { return }
            let signal = DBusAPI.signal(for: event.kind)
            server.emit(
                path: event.session, interface: DBusAPI.sessionInterface, member: signal.member, signature: signal.signature,
                values: signal.values, destination: owner)
        }
    }

    // MARK: Calls

    private func ownerLeft(_ name: String) async {
        for (number, session) in sessions.sorted(by: { $0.key < $1.key }) where session.owner == name {
            await close(number, reason: "its owner \(name) left the bus")
        }
    }

    private func close(_ number: Int, reason: String) async {
        let path = Self.sessionPath(number)
        do throws(SessionError) {
            try await routes.closeSession(path)
        } catch {
            logger.warning("cannot close session", metadata: ["session": "\(path)", "error": "\(error)"])
        }
        sessions[number] = nil
        logger.debug("session closed", metadata: ["session": "\(path)", "why": "\(reason)"])
    }

    private func answer(_ call: BusCall) async {
        do throws(DBusErrorReply) {
            if call.interface == DBusAPI.propertiesInterface {
                try await answerProperties(call)
                return
            }
            let (values, signature) = try await dispatch(call)
            server.reply(call.token, values, signature: signature)
        } catch {
            server.replyError(call.token, name: error.name, message: error.message)
        }
    }

    private enum Target {
        case manager
        case sessionsNode
        case session(Int)
    }

    private func target(_ path: String) throws(DBusErrorReply) -> Target {
        if path == DBusAPI.managerPath { return .manager }
        if path == DBusAPI.sessionsPath { return .sessionsNode }
        if let number = Self.sessionNumber(path), sessions[number] != nil { return .session(number) }
        throw DBusErrorReply("org.freedesktop.DBus.Error.UnknownObject", "no object at \(path)")
    }

    private func dispatch(_ call: BusCall) async throws(DBusErrorReply) -> ([DBusValue], String) {
        let target = try target(call.path)
        let interfaces: [String]
        switch target {
        case .manager: interfaces = [DBusAPI.managerInterface, DBusAPI.propertiesInterface, DBusAPI.introspectableInterface]
        case .sessionsNode: interfaces = [DBusAPI.introspectableInterface]
        case .session: interfaces = [DBusAPI.sessionInterface, DBusAPI.propertiesInterface, DBusAPI.introspectableInterface]
        }
        // The server named the interface of a call that names none (the contract's one interface with that member).
        let interface = call.interface
        guard interfaces.contains(interface) else {
            throw DBusErrorReply("org.freedesktop.DBus.Error.UnknownInterface", "\(call.path) has no interface \(call.interface)")
        }
        guard let expected = DBusAPI.methods[interface]?[call.member] else {
            throw DBusErrorReply("org.freedesktop.DBus.Error.UnknownMethod", "\(interface) has no method \(call.member)")
        }
        try DBusAPI.check(signature: call.signature, expected: expected, arguments: call.arguments)
        if case .session(let number) = target, interface == DBusAPI.sessionInterface, sessions[number]?.owner != call.sender {
            throw DBusErrorReply("org.audioroute.Error.NotOwner", "\(call.path) belongs to another client; only \(sessions[number]?.owner ?? "?") may use it")
        }
        guard policy.allows(interface: interface, member: call.member, credentials: call.credentials) else {
            throw DBusErrorReply(
                "org.freedesktop.DBus.Error.AccessDenied", "\(call.member) changes routing for everyone: only root and members of group audio may call it")
        }
        let args = call.arguments
        switch (interface, target) {
        case (DBusAPI.introspectableInterface, .manager):
            return ([.string(DBusAPI.introspection(interface: DBusAPI.managerInterface, children: ["session"]))], "s")
        case (DBusAPI.introspectableInterface, .sessionsNode):
            return ([.string(DBusAPI.introspection(interface: nil, children: sessions.keys.sorted().map(String.init)))], "s")
        case (DBusAPI.introspectableInterface, .session):
            return ([.string(DBusAPI.introspection(interface: DBusAPI.sessionInterface, children: []))], "s")
        case (DBusAPI.propertiesInterface, _):
            throw DBusErrorReply("org.freedesktop.DBus.Error.UnknownMethod", "call \(DBusAPI.propertiesInterface) by its interface name")
        case (DBusAPI.managerInterface, _):
            return try await manager(call.member, args, call: call)
        case (DBusAPI.sessionInterface, .session(let number)):
            return try await session(number, call.member, args)
        default:
            throw DBusErrorReply("org.freedesktop.DBus.Error.UnknownMethod", "\(interface) has no method \(call.member)")
        }
    }

    private func manager(_ member: String, _ args: [DBusValue], call: BusCall) async throws(DBusErrorReply) -> ([DBusValue], String) {
        let sender = call.sender
        switch (member, args.first, args.dropFirst().first) {
        case ("OpenSession", .string(let app)?, _):
            let uid = try admitSession(from: sender, credentials: call.credentials)
            let number = nextSession
            nextSession += 1
            let path = Self.sessionPath(number)
            // Recorded first: events of the opening are addressed to the owner.
            sessions[number] = OpenSession(owner: sender, uid: uid, app: app)
            do throws(SessionError) {
                try await routes.openSession(id: path, name: app.isEmpty ? nil : app)
            } catch {
                sessions[number] = nil
                throw DBusErrorReply(error)
            }
            logger.debug("session opened", metadata: ["session": "\(path)", "owner": "\(sender)", "app": "\(app)"])
            return ([.objectPath(path)], "o")
        case ("SetPortPriority", .string(let uid)?, .int32(let priority)?):
            guard DBusAPI.priorityRange.contains(Int(priority)) else {
                throw .invalidArgs("priority \(priority) is outside \(DBusAPI.priorityRange.lowerBound)…\(DBusAPI.priorityRange.upperBound)")
            }
            do throws(RequestError) {
                try await routes.setPriority(Int(priority), for: uid)
            } catch {
                throw DBusErrorReply(error)
            }
            return ([], "")
        case ("SetSilentMode", .bool(let on)?, _):
            do throws(RequestError) {
                try await routes.setSilentMode(on)
            } catch {
                throw DBusErrorReply(error)
            }
            return ([], "")
        case ("Explain", _, _):
            let explanation = await routes.explanation
            let ports: [DBusValue] = explanation.ports.map { port in
                let chosen = port.chosen.map { "\($0.side.rawValue): chosen by rule \($0.rule.rawValue)" }
                return .structure([.string(port.uid), .array((chosen + port.reasons).map(DBusValue.string))])
            }
            return ([.string(explanation.outputRule.rawValue), .string(explanation.inputRule.rawValue), .array(ports)], "ssa(sas)")
        default:
            throw DBusErrorReply("org.freedesktop.DBus.Error.UnknownMethod", "\(DBusAPI.managerInterface) has no method \(member)")
        }
    }

    /// Whether `sender` may open one more session: within its own limit, its user's and the
    /// daemon's (docs/security.md). Returns the sender's uid.
    private func admitSession(from sender: String, credentials: Result<BusCredentials, BusError>?) throws(DBusErrorReply) -> UInt32 {
        func refuse(_ message: String) -> DBusErrorReply { DBusErrorReply("org.freedesktop.DBus.Error.LimitsExceeded", message) }
        let owned = sessions.values.filter { $0.owner == sender }
        guard owned.count < DBusAPI.maxSessionsPerName else {
            throw refuse("\(sender) already holds \(owned.count) sessions; at most \(DBusAPI.maxSessionsPerName)")
        }
        guard sessions.count < DBusAPI.maxSessions else {
            throw refuse("the daemon holds \(sessions.count) sessions, its limit; close one first")
        }
        if let uid = owned.first?.uid { return uid }
        guard case .success(let caller)? = credentials, let uid = caller.uid else {
            let why: String
            if case .failure(let error)? = credentials { why = "\(error)" } else { why = "the bus gave no user id" }
            throw DBusErrorReply("org.freedesktop.DBus.Error.AccessDenied", "cannot tell which user \(sender) is: \(why)")
        }
        let connections = Set(sessions.values.filter { $0.uid == uid }.map(\.owner))
        guard connections.count < DBusAPI.maxConnectionsPerUser else {
            throw refuse("user \(uid) already holds sessions on \(connections.count) connections; at most \(DBusAPI.maxConnectionsPerUser)")
        }
        return uid
    }

    private func session(_ number: Int, _ member: String, _ args: [DBusValue]) async throws(DBusErrorReply) -> ([DBusValue], String) {
        let path = Self.sessionPath(number)
        do {
            switch (member, args.first) {
            case ("SetCategory", .string(let category)?):
                guard case .string(let mode) = args[1], case .array(let items) = args[2] else { throw DBusErrorReply.invalidArgs("bad arguments") }
                var names: [String] = []
                for case .string(let name) in items { names.append(name) }
                let parsed = (try DBusAPI.category(category), try DBusAPI.mode(mode), try DBusAPI.options(names))
                try await routes.setCategory(parsed.0, mode: parsed.1, options: parsed.2, session: path)
            case ("SetActive", .bool(let active)?):
                guard case .bool(let notify) = args[1] else { throw DBusErrorReply.invalidArgs("bad arguments") }
                try await routes.setActive(active, session: path, notifyOthers: notify)
            case ("OverrideOutput", .string(let name)?):
                try await routes.overrideOutput(try DBusAPI.outputOverride(name), session: path)
            case ("SetPreferredInput", .string(let uid)?):
                do throws(RequestError) {
                    try await routes.setPreferredInput(uid.isEmpty ? nil : uid, session: path)
                } catch {
                    throw DBusErrorReply(error)
                }
            case ("SetPrefersInterruptionOnRouteDisconnect", .bool(let value)?):
                try await routes.setPrefersInterruptionOnRouteDisconnect(value, session: path)
            case ("Close", _):
                await close(number, reason: "Close")
            default:
                throw DBusErrorReply("org.freedesktop.DBus.Error.UnknownMethod", "\(DBusAPI.sessionInterface) has no method \(member)")
            }
        } catch let error as DBusErrorReply {
            throw error
        } catch let error as SessionError {
            throw DBusErrorReply(error)
        } catch {
            throw DBusErrorReply("org.freedesktop.DBus.Error.Failed", "\(error)")
        }
        return ([], "")
    }

    // MARK: Properties

    /// Properties.Get/GetAll/Set: checked like every call, answered with typed variants.
    private func answerProperties(_ call: BusCall) async throws(DBusErrorReply) {
        let target = try target(call.path)
        guard let expected = DBusAPI.methods[DBusAPI.propertiesInterface]?[call.member] else {
            throw DBusErrorReply("org.freedesktop.DBus.Error.UnknownMethod", "\(DBusAPI.propertiesInterface) has no method \(call.member)")
        }
        try DBusAPI.check(signature: call.signature, expected: expected, arguments: call.arguments)
        guard case .string(let interface)? = call.arguments.first else { throw .invalidArgs("expected an interface name") }
        let all: [(String, TypedValue)]
        switch (target, interface) {
        case (.manager, DBusAPI.managerInterface): all = await managerProperties()
        case (.session(let number), DBusAPI.sessionInterface): all = await sessionProperties(number)
        default: throw DBusErrorReply("org.freedesktop.DBus.Error.UnknownInterface", "\(call.path) has no interface \(interface)")
        }
        switch call.member {
        case "GetAll":
            server.replyProperties(call.token, all)
        case "Get":
            guard case .string(let name) = call.arguments[1] else { throw .invalidArgs("expected a property name") }
            guard let value = all.first(where: { $0.0 == name })?.1 else {
                throw DBusErrorReply("org.freedesktop.DBus.Error.UnknownProperty", "\(interface) has no property \(name)")
            }
            server.replyVariant(call.token, value)
        default:
            throw DBusErrorReply("org.freedesktop.DBus.Error.PropertyReadOnly", "every property of \(interface) is read-only")
        }
    }

    private func managerProperties() async -> [(String, TypedValue)] {
        let (route, ports, silent) = await (routes.route, routes.ports, routes.silentMode)
        let byUID = Dictionary(ports.map { ($0.uid, $0) }, uniquingKeysWith: { a, _ in a })
        var list: [DBusValue] = []
        for (number, open) in sessions.sorted(by: { $0.key < $1.key }) {
            guard let snapshot = await routes.snapshot(of: Self.sessionPath(number)) else { continue }
            let configuration = snapshot.session.configuration
            list.append(
                .structure([
                    .objectPath(Self.sessionPath(number)), .string(open.owner), .string(open.app), .string(configuration.category.rawValue),
                    .string(configuration.mode.rawValue), .array(configuration.options.names.map(DBusValue.string)),
                    .bool(snapshot.session.isActive),
                ]))
        }
        return [
            ("Version", TypedValue(.uint32(DBusAPI.version), signature: "u")),
            ("Route", TypedValue(DBusAPI.value(of: route, describe: { byUID[$0] }), signature: DBusAPI.routeSignature)),
            ("Ports", TypedValue(.array(ports.map(DBusAPI.value(of:))), signature: "a" + DBusAPI.portSignature)),
            ("SilentMode", TypedValue(.bool(silent), signature: "b")),
            ("Sessions", TypedValue(.array(list), signature: "a(ossssasb)")),
        ]
    }

    private func sessionProperties(_ number: Int) async -> [(String, TypedValue)] {
        guard let snapshot = await routes.snapshot(of: Self.sessionPath(number)) else { return [] }
        let configuration = snapshot.session.configuration
        return [
            ("Category", TypedValue(.string(configuration.category.rawValue), signature: "s")),
            ("Mode", TypedValue(.string(configuration.mode.rawValue), signature: "s")),
            ("Options", TypedValue(.array(configuration.options.names.map(DBusValue.string)), signature: "as")),
            ("Active", TypedValue(.bool(snapshot.session.isActive), signature: "b")),
            ("PreferredInput", TypedValue(.string(snapshot.session.preferredInput ?? ""), signature: "s")),
            ("OtherAudioPlaying", TypedValue(.bool(snapshot.isOtherAudioPlaying), signature: "b")),
            ("SecondaryAudioShouldBeSilencedHint", TypedValue(.bool(snapshot.secondaryAudioShouldBeSilencedHint), signature: "b")),
        ]
    }

    // MARK: Paths

    static func sessionPath(_ number: Int) -> String { DBusAPI.sessionsPath + "/\(number)" }

    static func sessionNumber(_ path: String) -> Int? {
        let prefix = DBusAPI.sessionsPath + "/"
        guard path.hasPrefix(prefix), let number = Int(path.dropFirst(prefix.count)), number > 0 else { return nil }
        return number
    }
}
