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
        /// In the pool's reserve (root and group audio only).
        var reserved: Bool
    }

    private let server: BusServer
    private let routes: RouteService
    private let policy: AccessPolicy
    private let pool: SessionPool
    private let logger: Logger
    /// Open sessions by number (path `…/session/N`).
    private var sessions: [Int: OpenSession] = [:]
    /// Calls whose reply waits for the state's write, by token: the snapshot to wait for.
    private var savePending: [UInt64: UInt64] = [:]
    /// A setter's reply, sent once the state is written as of `version`.
    private struct AwaitingSave: Sendable {
        var token: UInt64
        var version: UInt64
        var values: [DBusValue]
        var signature: String
    }
    /// Setters' replies in the order of their calls, sent by one task as their writes end.
    private let awaitingSaves: AsyncStream<AwaitingSave>
    private let afterSave: AsyncStream<AwaitingSave>.Continuation
    private var nextSession = 1

    public init(server: BusServer, routes: RouteService, policy: AccessPolicy, logger: Logger) {
        self.server = server
        self.routes = routes
        self.policy = policy
        pool = SessionPool(enforced: policy.enforced)
        (awaitingSaves, afterSave) = AsyncStream.makeStream(of: AwaitingSave.self, bufferingPolicy: .unbounded)
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
                for await waiting in self.awaitingSaves { await self.replyWhenSaved(waiting) }
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
            emit(DBusAPI.Manager.portsChanged, DBusAPI.portsChangedArguments(change.kind, change.port))
        case .allPortsChanged(let change):
            emit(DBusAPI.Manager.allPortsChanged, DBusAPI.allPortsChangedArguments(change.kind, change.port))
        case .routeChanged(let change):
            // The change describes both routes' ports, a port that has just gone included.
            emit(DBusAPI.Manager.routeChanged, DBusAPI.routeChangedArguments(change))
        case .silentModeChanged(let on):
            emit(DBusAPI.Manager.silentModeChanged, [.bool(on)])
        case .screenLockChanged(let locked):
            emit(DBusAPI.Manager.screenLockChanged, [.bool(locked)])
        case .sessionActivity(let activity):
            let signal = DBusAPI.Monitor.sessionChanged
            server.emit(
                path: DBusAPI.managerPath, interface: signal.interface, member: signal.name, signature: signal.signature,
                values: DBusAPI.sessionChangedArguments(activity))
        case .session(let event):
            guard let number = DBusAPI.sessionNumber(event.session), let owner = sessions[number]?.owner else { return }
            let signal = DBusAPI.signal(for: event.kind)
            server.emit(
                path: event.session, interface: DBusAPI.sessionInterface, member: signal.member, signature: signal.signature,
                values: signal.values, destination: owner)
        }
    }

    /// A broadcast of the manager object.
    private func emit(_ signal: BusSignalMember, _ values: [DBusValue]) {
        server.emit(path: DBusAPI.managerPath, interface: signal.interface, member: signal.name, signature: signal.signature, values: values)
    }

    // MARK: Calls

    private func ownerLeft(_ name: String) async {
        for (number, session) in sessions.sorted(by: { $0.key < $1.key }) where session.owner == name {
            await close(number, reason: "its owner \(name) left the bus")
        }
    }

    private func close(_ number: Int, reason: String) async {
        let path = DBusAPI.sessionPath(number)
        do throws(SessionError) {
            try await routes.closeSession(path)
        } catch {
            logger.warning("cannot close session", metadata: ["session": "\(path)", "error": "\(error)"])
        }
        sessions[number] = nil
        // A dictionary keeps its largest capacity: a pool filled once would hold its table for
        // ever. Rebuilt small once three quarters of it are free.
        if sessions.count * 4 < sessions.capacity {
            sessions = Dictionary(uniqueKeysWithValues: sessions.map { ($0.key, $0.value) })
            // What the sessions took lies between blocks still in use: given back page by page.
            MemoryTuning.giveBackFreePages()
        }
        logger.debug("session closed", metadata: ["session": "\(path)", "why": "\(reason)"])
    }

    /// Replies to a setter once its change is written (or says it could not be).
    private func replyWhenSaved(_ waiting: AwaitingSave) async {
        do throws(RequestError) {
            try await routes.saved(waiting.version)
            server.reply(waiting.token, waiting.values, signature: waiting.signature)
        } catch {
            let reply = DBusErrorReply(error)
            server.replyError(waiting.token, name: reply.name, message: reply.message)
        }
    }

    private func answer(_ call: BusCall) async {
        do throws(DBusErrorReply) {
            if call.interface == DBusAPI.propertiesInterface {
                try await answerProperties(call)
                return
            }
            let (values, signature) = try await dispatch(call)
            if let version = savePending.removeValue(forKey: call.token) {
                // A setting is acknowledged once it is written, but the next calls (a reader's
                // GetAll) are not held up by the write: the change is already in effect.
                afterSave.yield(AwaitingSave(token: call.token, version: version, values: values, signature: signature))
                return
            }
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
        if let number = DBusAPI.sessionNumber(path), sessions[number] != nil { return .session(number) }
        throw DBusErrorReply(.unknownObject, "no object at \(path)")
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
            throw DBusErrorReply(.unknownInterface, "\(call.path) has no interface \(call.interface)")
        }
        guard let expected = DBusAPI.methods[interface]?[call.member] else {
            throw DBusErrorReply(.unknownMethod, "\(interface) has no method \(call.member)")
        }
        try DBusAPI.check(signature: call.signature, expected: expected, arguments: call.arguments)
        if case .session(let number) = target, interface == DBusAPI.sessionInterface, sessions[number]?.owner != call.sender {
            throw DBusErrorReply(.notOwner, "\(call.path) belongs to another client; only \(sessions[number]?.owner ?? "?") may use it")
        }
        guard policy.allows(interface: interface, member: call.member, credentials: call.credentials) else {
            throw DBusErrorReply(
                .accessDenied, "\(call.member) changes routing for everyone: only root and members of group audio may call it")
        }
        let args = call.arguments
        switch (interface, target) {
        case (DBusAPI.introspectableInterface, .manager):
            return ([.string(DBusAPI.introspection(interfaces: [DBusAPI.managerInterface, DBusAPI.monitorInterface], children: ["session"]))], DBusAPI.Standard.introspect.output)
        case (DBusAPI.introspectableInterface, .sessionsNode):
            return ([.string(DBusAPI.introspection(interfaces: [], children: sessions.keys.sorted().map(String.init)))], DBusAPI.Standard.introspect.output)
        case (DBusAPI.introspectableInterface, .session):
            return ([.string(DBusAPI.introspection(interfaces: [DBusAPI.sessionInterface], children: []))], DBusAPI.Standard.introspect.output)
        case (DBusAPI.propertiesInterface, _):
            throw DBusErrorReply(.unknownMethod, "call \(DBusAPI.propertiesInterface) by its interface name")
        case (DBusAPI.managerInterface, _):
            return try await manager(call.member, args, call: call)
        case (DBusAPI.sessionInterface, .session(let number)):
            return try await session(number, call.member, args, token: call.token)
        default:
            throw DBusErrorReply(.unknownMethod, "\(interface) has no method \(call.member)")
        }
    }

    private func manager(_ member: String, _ args: [DBusValue], call: BusCall) async throws(DBusErrorReply) -> ([DBusValue], String) {
        let sender = call.sender
        switch (member, args.first, args.dropFirst().first) {
        case (DBusAPI.Manager.openSession.name, .string(let app)?, _):
            let (uid, reserved) = try admitSession(from: sender, credentials: call.credentials)
            let number = nextSession
            nextSession += 1
            let path = DBusAPI.sessionPath(number)
            // Recorded first: events of the opening are addressed to the owner.
            sessions[number] = OpenSession(owner: sender, uid: uid, app: app, reserved: reserved)
            do throws(SessionError) {
                var pid: UInt32?
                if case .success(let credentials)? = call.credentials { pid = credentials.pid }
                try await routes.openSession(id: path, name: app.isEmpty ? nil : app, processID: pid)
            } catch {
                sessions[number] = nil
                throw DBusErrorReply(error)
            }
            logger.debug("session opened", metadata: ["session": "\(path)", "owner": "\(sender)", "app": "\(app)"])
            return ([.objectPath(path)], DBusAPI.Manager.openSession.output)
        case (DBusAPI.Manager.setPortPriority.name, .string(let uid)?, .int32(let priority)?):
            guard DBusAPI.priorityRange.contains(Int(priority)) else {
                throw .invalidArgs("priority \(priority) is outside \(DBusAPI.priorityRange.lowerBound)…\(DBusAPI.priorityRange.upperBound)")
            }
            do throws(RequestError) {
                savePending[call.token] = try await routes.applyPriority(Int(priority), for: uid)
            } catch {
                throw DBusErrorReply(error)
            }
            return ([], "")
        case (DBusAPI.Manager.setSilentMode.name, .bool(let on)?, _):
            savePending[call.token] = await routes.applySilentMode(on)
            return ([], "")
        case (DBusAPI.Manager.explain.name, _, _):
            return (DBusAPI.explainReply(await routes.explanation), DBusAPI.Manager.explain.output)
        case (DBusAPI.Manager.dataSources.name, .string(let uid)?, _):
            do throws(SessionError) {
                return (DBusAPI.dataSourcesReply(try await routes.dataSources(of: uid)), DBusAPI.Manager.dataSources.output)
            } catch {
                throw DBusErrorReply(error)
            }
        default:
            throw DBusErrorReply(.unknownMethod, "\(DBusAPI.managerInterface) has no method \(member)")
        }
    }

    /// Whether `sender` may open one more session, and where (`SessionPool`: its connection's,
    /// its user's and the pool's limits; docs/security.md). Returns the sender's uid and place.
    private func admitSession(
        from sender: String, credentials: Result<BusCredentials, BusError>?
    ) throws(DBusErrorReply) -> (uid: UInt32, reserved: Bool) {
        guard case .success(let caller)? = credentials, let uid = caller.uid else {
            let why: String
            if case .failure(let error)? = credentials { why = "\(error)" } else { why = "the bus gave no user id" }
            throw DBusErrorReply(.accessDenied, "cannot tell which user \(sender) is: \(why)")
        }
        let holders = sessions.values.map { SessionPool.Holder(owner: $0.owner, uid: $0.uid, reserved: $0.reserved) }
        switch pool.admit(owner: sender, uid: uid, privileged: policy.isPrivileged(caller), holders: holders) {
        case .success(let place): return (uid, place == .reserve)
        case .failure(let refusal): throw DBusErrorReply(.limitsExceeded, refusal.description)
        }
    }

    private func session(_ number: Int, _ member: String, _ args: [DBusValue], token: UInt64) async throws(DBusErrorReply) -> ([DBusValue], String) {
        let path = DBusAPI.sessionPath(number)
        do {
            switch (member, args.first) {
            case (DBusAPI.Session.setCategory.name, .string(let category)?):
                guard case .string(let mode) = args[1], case .array(let items) = args[2] else { throw DBusErrorReply.invalidArgs("bad arguments") }
                var names: [String] = []
                for case .string(let name) in items { names.append(name) }
                let parsed = (try DBusAPI.category(category), try DBusAPI.mode(mode), try DBusAPI.options(names))
                try await routes.setCategory(parsed.0, mode: parsed.1, options: parsed.2, session: path)
            case (DBusAPI.Session.setActive.name, .bool(let active)?):
                guard case .bool(let notify) = args[1] else { throw DBusErrorReply.invalidArgs("bad arguments") }
                try await routes.setActive(active, session: path, notifyOthers: notify)
            case (DBusAPI.Session.overrideOutput.name, .string(let name)?):
                try await routes.overrideOutput(try DBusAPI.outputOverride(name), session: path)
            case (DBusAPI.Session.setPreferredInput.name, .string(let uid)?):
                do throws(RequestError) {
                    savePending[token] = try await routes.applyPreferredInput(uid.isEmpty ? nil : uid, session: path)
                } catch {
                    throw DBusErrorReply(error)
                }
            case (DBusAPI.Session.setPreferredDataSource.name, .string(let uid)?):
                guard case .string(let source) = args[1] else { throw DBusErrorReply.invalidArgs("bad arguments") }
                try await routes.setPreferredDataSource(source.isEmpty ? nil : source, port: uid, session: path)
            case (DBusAPI.Session.preferredDataSource.name, .string(let uid)?):
                let source = try await routes.preferredDataSource(port: uid, session: path)
                return ([.string(source ?? "")], DBusAPI.Session.preferredDataSource.output)
            case (DBusAPI.Session.setPrefersInterruptionOnRouteDisconnect.name, .bool(let value)?):
                try await routes.setPrefersInterruptionOnRouteDisconnect(value, session: path)
            case (DBusAPI.Session.close.name, _):
                await close(number, reason: DBusAPI.Session.close.name)
            default:
                throw DBusErrorReply(.unknownMethod, "\(DBusAPI.sessionInterface) has no method \(member)")
            }
        } catch let error as DBusErrorReply {
            throw error
        } catch let error as SessionError {
            throw DBusErrorReply(error)
        } catch {
            throw DBusErrorReply(.failed, "\(error)")
        }
        return ([], "")
    }

    // MARK: Properties

    /// Properties.Get/GetAll/Set: checked like every call, answered with typed variants.
    private func answerProperties(_ call: BusCall) async throws(DBusErrorReply) {
        let target = try target(call.path)
        guard let expected = DBusAPI.methods[DBusAPI.propertiesInterface]?[call.member] else {
            throw DBusErrorReply(.unknownMethod, "\(DBusAPI.propertiesInterface) has no method \(call.member)")
        }
        try DBusAPI.check(signature: call.signature, expected: expected, arguments: call.arguments)
        guard case .string(let interface)? = call.arguments.first else { throw .invalidArgs("expected an interface name") }
        let all: [(String, TypedValue)]
        switch (target, interface) {
        case (.manager, DBusAPI.managerInterface): all = await managerProperties()
        case (.session(let number), DBusAPI.sessionInterface): all = await sessionProperties(number)
        default: throw DBusErrorReply(.unknownInterface, "\(call.path) has no interface \(interface)")
        }
        switch call.member {
        case DBusAPI.Standard.getAll.name:
            server.replyProperties(call.token, all)
        case DBusAPI.Standard.get.name:
            guard case .string(let name) = call.arguments[1] else { throw .invalidArgs("expected a property name") }
            guard let value = all.first(where: { $0.0 == name })?.1 else {
                throw DBusErrorReply(.unknownProperty, "\(interface) has no property \(name)")
            }
            server.replyVariant(call.token, value)
        default:
            throw DBusErrorReply(.propertyReadOnly, "every property of \(interface) is read-only")
        }
    }

    private func managerProperties() async -> [(String, TypedValue)] {
        let (route, ports, allPorts, silent, locked) = await (routes.route, routes.ports, routes.allPorts, routes.silentMode, routes.screenLocked)
        let engine = await routes.soundEngine
        let serverDefaults = await routes.soundServerDefaults
        let byUID = Dictionary(ports.map { ($0.uid, $0) }, uniquingKeysWith: { a, _ in a })
        var list: [DBusValue] = []
        var states: [DBusValue] = []
        for (number, open) in sessions.sorted(by: { $0.key < $1.key }) {
            let path = DBusAPI.sessionPath(number)
            guard let snapshot = await routes.snapshot(of: path) else { continue }
            list.append(
                DBusAPI.value(
                    of: SessionSummary(
                        path: path, owner: open.owner, app: open.app, configuration: snapshot.session.configuration,
                        isActive: snapshot.session.isActive)))
            states.append(DBusAPI.value(of: Self.state(of: snapshot, path: path)))
        }
        // The server's streams, listed as sessions of the owner "pipewire" at a path that has no
        // object (docs/dbus-api.md): their application names for `status`.
        for snapshot in await routes.serverStreamSessions {
            let path = DBusAPI.sessionObjectPath(snapshot.session.id)
            list.append(
                DBusAPI.value(
                    of: SessionSummary(
                        path: path, owner: "pipewire", app: snapshot.name ?? "",
                        configuration: snapshot.session.configuration, isActive: snapshot.session.isActive)))
            states.append(DBusAPI.value(of: Self.state(of: snapshot, path: path)))
        }
        typealias Manager = DBusAPI.Manager
        return [
            Self.property(Manager.versionProperty, .uint32(DBusAPI.version)),
            Self.property(Manager.routeProperty, DBusAPI.value(of: RoutePorts(route, describe: { byUID[$0] }))),
            Self.property(Manager.portsProperty, .array(ports.map(DBusAPI.value(of:)))),
            Self.property(Manager.silentModeProperty, .bool(silent)),
            Self.property(Manager.sessionsProperty, .array(list)),
            Self.property(Manager.allPortsProperty, .array(allPorts.map(DBusAPI.valueWithAvailability(of:)))),
            Self.property(Manager.screenLockedProperty, .bool(locked)),
            Self.property(Manager.soundServerProperty, DBusAPI.value(of: engine)),
            Self.property(Manager.soundServerDefaultsProperty, .string(serverDefaults)),
            Self.property(Manager.sessionStatesProperty, .array(states)),
        ]
    }

    /// A session's `SessionStates` entry.
    private static func state(of snapshot: SessionSnapshot, path: String) -> SessionState {
        let session = snapshot.session
        let activity: SessionState.Activity = session.isActive ? .active : session.isInterrupted ? .interrupted : .inactive
        var marks: [SessionState.Mark] = []
        if snapshot.controlsRoute { marks.append(.controlsRoute) }
        if session.isDucked { marks.append(.ducked) }
        if session.isSilenced { marks.append(.silenced) }
        return SessionState(
            path: path, processID: snapshot.process?.id, program: snapshot.process?.program, state: activity.rawValue, marks: marks.map(\.rawValue))
    }

    private func sessionProperties(_ number: Int) async -> [(String, TypedValue)] {
        guard let snapshot = await routes.snapshot(of: DBusAPI.sessionPath(number)) else { return [] }
        let configuration = snapshot.session.configuration
        typealias Session = DBusAPI.Session
        return [
            Self.property(Session.categoryProperty, .string(configuration.category.rawValue)),
            Self.property(Session.modeProperty, .string(configuration.mode.rawValue)),
            Self.property(Session.optionsProperty, .array(configuration.options.names.map(DBusValue.string))),
            Self.property(Session.activeProperty, .bool(snapshot.session.isActive)),
            Self.property(Session.preferredInputProperty, .string(snapshot.session.preferredInput ?? "")),
            Self.property(Session.otherAudioPlayingProperty, .bool(snapshot.isOtherAudioPlaying)),
            Self.property(Session.secondaryAudioShouldBeSilencedHintProperty, .bool(snapshot.secondaryAudioShouldBeSilencedHint)),
        ]
    }

    private static func property(_ property: BusProperty, _ value: DBusValue) -> (String, TypedValue) {
        (property.name, TypedValue(value, signature: property.signature))
    }
}
