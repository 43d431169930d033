// The D-Bus API (docs/dbus-api.md) as a Service: calls become RouteService
// requests, DaemonEvents become signals, and a client that leaves the bus has
// its sessions closed as if it had deactivated with notifyOthers.
import AudioRouteCore
import AudioRouteLinux
import Logging
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// Serves `org.audioroute.AudioRoute1` for a RouteService.
public actor DBusService: Service {
    /// Who may change things on the system bus (docs/security.md).
    public struct AccessPolicy: Sendable, Hashable {
        /// Nil on the session bus: the bus itself admits only its user.
        public var audioGroup: UInt32?
        public var checksCredentials: Bool

        /// The session bus: no checks.
        public static let sessionBus = AccessPolicy(audioGroup: nil, checksCredentials: false)

        /// The system bus: root and members of `group` (nil when the group does not exist: root only).
        public static func systemBus(audioGroup: UInt32?) -> AccessPolicy { AccessPolicy(audioGroup: audioGroup, checksCredentials: true) }

        /// Whether a caller with these credentials may change routing, sessions, priorities or silent mode.
        public func allowsChanges(by credentials: DBusCredentials?) -> Bool {
            guard checksCredentials else { return true }
            guard let credentials else { return false }
            if credentials.uid == 0 { return true }
            guard let audioGroup else { return false }
            return credentials.groups.contains(audioGroup)
        }
    }

    private struct SessionRecord {
        var id: String
        var owner: String
        var app: String
    }

    private let routes: RouteService
    private let bus: BusChoice
    private let policy: AccessPolicy
    private let logger: Logger
    private let onReady: @Sendable () -> Void
    private var server: DBusServer?
    private var sessions: [String: SessionRecord] = [:]
    private var pathByID: [String: String] = [:]
    private var sessionCount = 0
    /// Every port ever announced, so a route that names a port that has just gone still describes it.
    private var known: [String: Port] = [:]

    /// - Parameters:
    ///   - onReady: called once the name is owned and calls are served.
    public init(routes: RouteService, bus: BusChoice, policy: AccessPolicy, logger: Logger, onReady: @escaping @Sendable () -> Void = {}) {
        self.routes = routes
        self.bus = bus
        self.policy = policy
        self.logger = logger
        self.onReady = onReady
    }

    public func run() async throws {
        // Subscribe before serving, so nothing that happens meanwhile is missed.
        let announcements = routes.events.subscribe()
        for port in await routes.ports { known[port.uid] = port }
        let server = try DBusServer(
            bus: bus, name: DBusAPI.busName, objectPath: DBusAPI.managerPath, wantsCredentials: policy.checksCredentials, logger: logger)
        let events = try await server.start()
        self.server = server
        logger.info("serving on the bus", metadata: ["name": "\(DBusAPI.busName)"])
        onReady()
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask {
                for await event in announcements { await self.announce(event) }
            }
            group.addTask {
                try? await gracefulShutdown()
                server.stop()
            }
            for await event in events {
                switch event {
                case .call(let call): group.addTask { await self.handle(call) }
                case .nameVanished(let name): await ownerVanished(name)
                }
            }
            if server.lostBus { throw DBusServerError.disconnected }
            group.cancelAll()
        }
    }

    // MARK: Calls

    private func handle(_ call: DBusCall) async {
        let reply: DBusReply
        do throws(APIError) {
            reply = try await dispatch(call)
        } catch {
            reply = error.reply
        }
        server?.reply(call.id, reply)
    }

    private func dispatch(_ call: DBusCall) async throws(APIError) -> DBusReply {
        switch call.interface {
        case "org.freedesktop.DBus.Introspectable":
            guard call.member == "Introspect" else { throw unknownMethod(call) }
            try DBusCoding.check(call, "")
            return .values([.string(introspection(call.path))], signature: "s")
        case "org.freedesktop.DBus.Properties":
            return try await properties(call)
        case DBusAPI.managerInterface where call.path == DBusAPI.managerPath:
            return try await manager(call)
        case DBusAPI.sessionInterface:
            return try await session(call)
        default:
            throw unknownMethod(call)
        }
    }

    private func unknownMethod(_ call: DBusCall) -> APIError {
        APIError(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(call.interface).\(call.member) on \(call.path)")
    }

    private func requireChangeRights(_ call: DBusCall) throws(APIError) {
        guard policy.allowsChanges(by: call.credentials) else {
            throw APIError(
                name: "org.freedesktop.DBus.Error.AccessDenied",
                message: "\(call.member) needs root or membership of group audio on the system bus (docs/security.md)")
        }
    }

    private func manager(_ call: DBusCall) async throws(APIError) -> DBusReply {
        switch call.member {
        case "OpenSession":
            try DBusCoding.check(call, "s")
            try requireChangeRights(call)
            guard case .string(let app) = call.arguments[0] else { throw .invalidArgs("OpenSession takes \"s\"") }
            let owned = sessions.values.filter { $0.owner == call.sender }.count
            guard owned < DBusAPI.maxSessionsPerName else {
                throw APIError(
                    name: "org.freedesktop.DBus.Error.LimitsExceeded", message: "\(call.sender) already has \(owned) sessions")
            }
            sessionCount += 1
            let path = DBusAPI.sessionPathPrefix + String(sessionCount)
            let id = "\(call.sender)#\(sessionCount)"
            do throws(SessionError) {
                try await routes.openSession(id: id, name: app.isEmpty ? nil : app)
            } catch {
                throw APIError(error)
            }
            sessions[path] = SessionRecord(id: id, owner: call.sender, app: app)
            pathByID[id] = path
            logger.debug("session opened", metadata: ["path": "\(path)", "owner": "\(call.sender)", "app": "\(app)"])
            return .values([.objectPath(path)], signature: "o")
        case "SetPortPriority":
            try DBusCoding.check(call, "si")
            try requireChangeRights(call)
            guard case .string(let uid) = call.arguments[0], case .int32(let priority) = call.arguments[1] else {
                throw .invalidArgs("SetPortPriority takes \"si\"")
            }
            guard DBusAPI.priorityRange.contains(Int(priority)) else {
                throw .invalidArgs("priority \(priority) is outside \(DBusAPI.priorityRange.lowerBound)…\(DBusAPI.priorityRange.upperBound)")
            }
            do throws(RequestError) {
                try await routes.setPriority(Int(priority), for: uid)
            } catch {
                throw APIError(error)
            }
            return .empty
        case "SetSilentMode":
            try DBusCoding.check(call, "b")
            try requireChangeRights(call)
            guard case .bool(let on) = call.arguments[0] else { throw .invalidArgs("SetSilentMode takes \"b\"") }
            let was = await routes.silentMode
            await routes.setSilentMode(on)
            if was != on {
                server?.emit(
                    path: DBusAPI.managerPath, interface: DBusAPI.managerInterface, member: "SilentModeChanged", signature: "b",
                    values: [.bool(on)])
            }
            return .empty
        case "Explain":
            try DBusCoding.check(call, "")
            let explanation = await routes.explainRoute()
            let ports = explanation.ports.map { port -> DBusValue in
                let chosen = port.chosen.map { "\($0.side.rawValue): chosen by \($0.rule.rawValue)" }
                return .structure([.string(port.uid), .array((chosen + port.reasons).map { .string($0) })])
            }
            return .values(
                [.string(explanation.outputRule.rawValue), .string(explanation.inputRule.rawValue), .array(ports)], signature: "ssa(sas)")
        default:
            throw unknownMethod(call)
        }
    }

    private func session(_ call: DBusCall) async throws(APIError) -> DBusReply {
        guard let record = sessions[call.path] else {
            throw APIError(name: "org.freedesktop.DBus.Error.UnknownObject", message: "no session \(call.path)")
        }
        guard record.owner == call.sender else {
            throw APIError(name: "org.audioroute.Error.NotOwner", message: "\(call.path) belongs to \(record.owner), not \(call.sender)")
        }
        try requireChangeRights(call)
        do {
            switch call.member {
            case "SetCategory":
                try DBusCoding.check(call, "ssas")
                guard case .string(let category) = call.arguments[0], case .string(let mode) = call.arguments[1],
                    case .array(let options) = call.arguments[2]
                else { throw APIError.invalidArgs("SetCategory takes \"ssas\"") }
                try await routes.setCategory(
                    try DBusCoding.category(category), mode: try DBusCoding.mode(mode), options: try DBusCoding.options(options),
                    session: record.id)
            case "SetActive":
                try DBusCoding.check(call, "bb")
                guard case .bool(let active) = call.arguments[0], case .bool(let notify) = call.arguments[1] else {
                    throw APIError.invalidArgs("SetActive takes \"bb\"")
                }
                try await routes.setActive(active, session: record.id, notifyOthers: notify)
            case "OverrideOutput":
                try DBusCoding.check(call, "s")
                guard case .string(let name) = call.arguments[0] else { throw APIError.invalidArgs("OverrideOutput takes \"s\"") }
                try await routes.overrideOutput(try DBusCoding.override(name), session: record.id)
            case "SetPreferredInput":
                try DBusCoding.check(call, "s")
                guard case .string(let uid) = call.arguments[0] else { throw APIError.invalidArgs("SetPreferredInput takes \"s\"") }
                do throws(RequestError) {
                    try await routes.setPreferredInput(uid.isEmpty ? nil : uid, session: record.id)
                } catch {
                    throw APIError(error)
                }
            case "SetPrefersInterruptionOnRouteDisconnect":
                try DBusCoding.check(call, "b")
                guard case .bool(let value) = call.arguments[0] else { throw APIError.invalidArgs("takes \"b\"") }
                try await routes.setPrefersInterruptionOnRouteDisconnect(value, session: record.id)
            case "Close":
                try DBusCoding.check(call, "")
                try await close(call.path)
            default:
                throw unknownMethod(call)
            }
        } catch let error as APIError {
            throw error
        } catch let error as SessionError {
            throw APIError(error)
        } catch {
            throw APIError(name: "org.freedesktop.DBus.Error.Failed", message: "\(error)")
        }
        return .empty
    }

    private func close(_ path: String) async throws(SessionError) {
        guard let record = sessions[path] else { return }
        try await routes.closeSession(record.id)
        sessions[path] = nil
        pathByID[record.id] = nil
    }

    private func ownerVanished(_ name: String) async {
        for (path, record) in sessions where record.owner == name {
            logger.debug("session owner left the bus", metadata: ["path": "\(path)", "owner": "\(name)"])
            try? await close(path)
        }
    }

    // MARK: Properties

    private func properties(_ call: DBusCall) async throws(APIError) -> DBusReply {
        let interface: String
        var property: String?
        switch call.member {
        case "Get":
            try DBusCoding.check(call, "ss")
            guard case .string(let i) = call.arguments[0], case .string(let p) = call.arguments[1] else { throw .invalidArgs("Get takes \"ss\"") }
            interface = i
            property = p
        case "GetAll":
            try DBusCoding.check(call, "s")
            guard case .string(let i) = call.arguments[0] else { throw .invalidArgs("GetAll takes \"s\"") }
            interface = i
        case "Set":
            throw APIError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "every property is read-only; use the methods")
        default:
            throw unknownMethod(call)
        }
        let all: [(String, DBusValue)]
        if interface == DBusAPI.managerInterface && call.path == DBusAPI.managerPath {
            all = await managerProperties()
        } else if interface == DBusAPI.sessionInterface, let record = sessions[call.path] {
            all = await sessionProperties(record)
        } else {
            throw APIError(name: "org.freedesktop.DBus.Error.UnknownInterface", message: "no interface \(interface) on \(call.path)")
        }
        if let property {
            guard let value = all.first(where: { $0.0 == property })?.1 else {
                throw APIError(name: "org.freedesktop.DBus.Error.UnknownProperty", message: "no property \(interface).\(property)")
            }
            return .values([value], signature: "v")
        }
        return .values([.dictionary(all.map { .init(key: .string($0.0), value: $0.1) })], signature: "a{sv}")
    }

    private func managerProperties() async -> [(String, DBusValue)] {
        let ports = await routes.ports
        for port in ports { known[port.uid] = port }
        let towerSessions = await routes.sessions
        var rows: [DBusValue] = []
        for (path, record) in sessions.sorted(by: { $0.key < $1.key }) {
            guard let session = towerSessions.first(where: { $0.id == record.id }) else { continue }
            let configuration = session.configuration
            rows.append(
                .structure([
                    .objectPath(path), .string(record.owner), .string(record.app), .string(configuration.category.rawValue),
                    .string(configuration.mode.rawValue), .array(configuration.options.names.map { .string($0) }), .bool(session.isActive),
                ]))
        }
        return [
            ("Version", .typedVariant(.uint32(DBusAPI.version), signature: "u")),
            ("Route", .typedVariant(DBusCoding.route(await routes.route, known: known), signature: DBusAPI.routeSignature)),
            ("Ports", .typedVariant(.array(ports.map(DBusCoding.port)), signature: "a" + DBusAPI.portSignature)),
            ("SilentMode", .typedVariant(.bool(await routes.silentMode), signature: "b")),
            ("Sessions", .typedVariant(.array(rows), signature: "a(ossssasb)")),
        ]
    }

    private func sessionProperties(_ record: SessionRecord) async -> [(String, DBusValue)] {
        guard let session = await routes.session(record.id) else { return [] }
        let configuration = session.configuration
        return [
            ("Category", .typedVariant(.string(configuration.category.rawValue), signature: "s")),
            ("Mode", .typedVariant(.string(configuration.mode.rawValue), signature: "s")),
            ("Options", .typedVariant(.array(configuration.options.names.map { .string($0) }), signature: "as")),
            ("Active", .typedVariant(.bool(session.isActive), signature: "b")),
            ("PreferredInput", .typedVariant(.string(session.preferredInput ?? ""), signature: "s")),
            ("OtherAudioPlaying", .typedVariant(.bool(await routes.isOtherAudioPlaying(for: record.id)), signature: "b")),
            (
                "SecondaryAudioShouldBeSilencedHint",
                .typedVariant(.bool(await routes.secondaryAudioShouldBeSilencedHint(for: record.id)), signature: "b")
            ),
        ]
    }

    private func introspection(_ path: String) -> String {
        if path == DBusAPI.managerPath {
            return DBusInterfaceXML.node(DBusAPI.managerInterface, children: sessions.isEmpty ? [] : ["session"])
        }
        if sessions[path] != nil { return DBusInterfaceXML.node(DBusAPI.sessionInterface) }
        if path + "/" == DBusAPI.sessionPathPrefix {
            let children = sessions.keys.map { String($0.dropFirst(DBusAPI.sessionPathPrefix.count)) }.sorted()
            return DBusInterfaceXML.emptyNode.replacingLast("</node>\n", with: children.map { "  <node name=\"\($0)\"/>\n" }.joined() + "</node>\n")
        }
        return DBusInterfaceXML.emptyNode
    }

    // MARK: Signals

    private func announce(_ event: DaemonEvent) {
        guard let server else { return }
        switch event {
        case .portChanged(let change):
            known[change.port.uid] = change.port
            server.emit(
                path: DBusAPI.managerPath, interface: DBusAPI.managerInterface, member: "PortsChanged", signature: "s" + DBusAPI.portSignature,
                values: [.string(change.kind.rawValue), DBusCoding.port(change.port)])
        case .routeChanged(let change):
            server.emit(
                path: DBusAPI.managerPath, interface: DBusAPI.managerInterface, member: "RouteChanged",
                signature: "s" + DBusAPI.routeSignature + DBusAPI.routeSignature,
                values: [
                    .string(change.reason.rawValue), DBusCoding.route(change.previous, known: known), DBusCoding.route(change.current, known: known),
                ])
        case .session(let event):
            guard let path = pathByID[event.session], let record = sessions[path], let signal = DBusCoding.interruption(event.kind) else { return }
            server.emit(
                path: path, interface: DBusAPI.sessionInterface, member: signal.member, signature: signal.signature, values: signal.values,
                destination: record.owner)
        }
    }
}

extension String {
    fileprivate func replacingLast(_ suffix: String, with replacement: String) -> String {
        guard hasSuffix(suffix) else { return self }
        return String(dropLast(suffix.count)) + replacement
    }
}
