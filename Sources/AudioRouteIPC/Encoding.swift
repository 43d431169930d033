// The wire form of the API's values, both ways: ports, routes, sessions, the session
// signals and Explain's reply as the daemon sends them, and as clients read them back.
// Every decoding failure names the fault.
import AudioRouteCore
import AudioRouteDBus

/// A value from the other side that does not have the API's shape.
public struct WireError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A change of one session, as `Monitor1.SessionChanged` broadcasts it: what monitors show.
public struct SessionActivity: Sendable, Hashable {
    /// What changed.
    public enum Change: String, Sendable, Hashable, CaseIterable {
        case opened, closed, activated, deactivated
        case interruptionBegan, interruptionEnded, ducked, unducked, silenced, unsilenced
        case silenceSecondaryAudioBegin, silenceSecondaryAudioEnd
    }

    /// The session's object path (a sound server's stream: `managerPath` + "/pipewire/N").
    public var path: String
    /// The app name it was opened with ("" when none).
    public var app: String
    public var change: Change
    /// `category/mode` and options for `opened` and `activated` ("playback/voicePrompt
    /// duckOthers"), the reason for `interruptionBegan`, "shouldResume" or ""
    /// for `interruptionEnded`, "" otherwise.
    public var detail: String

    public init(path: String, app: String, change: Change, detail: String = "") {
        self.path = path
        self.app = app
        self.change = change
        self.detail = detail
    }

    /// The activity a tower event stands for.
    public init(path: String, app: String, event kind: SessionEvent.Kind) {
        switch kind {
        case .interruptionBegan(let reason): self.init(path: path, app: app, change: .interruptionBegan, detail: reason.rawValue)
        case .interruptionEnded(let shouldResume): self.init(path: path, app: app, change: .interruptionEnded, detail: shouldResume ? "shouldResume" : "")
        case .ducked: self.init(path: path, app: app, change: .ducked)
        case .unducked: self.init(path: path, app: app, change: .unducked)
        case .silenced: self.init(path: path, app: app, change: .silenced)
        case .unsilenced: self.init(path: path, app: app, change: .unsilenced)
        case .silenceSecondaryAudioBegin: self.init(path: path, app: app, change: .silenceSecondaryAudioBegin)
        case .silenceSecondaryAudioEnd: self.init(path: path, app: app, change: .silenceSecondaryAudioEnd)
        }
    }

    /// `opened`'s and `activated`'s detail: "category/mode", then the options, comma-separated.
    public static func detail(of configuration: SessionConfiguration) -> String {
        let options = configuration.options.names
        return configuration.category.rawValue + "/" + configuration.mode.rawValue + (options.isEmpty ? "" : " " + options.joined(separator: ","))
    }
}

/// A session as `Sessions` lists it.
public struct SessionSummary: Sendable, Hashable {
    public var path: String
    public var owner: String
    public var app: String
    public var category: String
    public var mode: String
    public var options: [String]
    public var isActive: Bool

    public init(path: String, owner: String, app: String, category: String, mode: String, options: [String], isActive: Bool) {
        self.path = path
        self.owner = owner
        self.app = app
        self.category = category
        self.mode = mode
        self.options = options
        self.isActive = isActive
    }

    /// A session of `configuration`.
    public init(path: String, owner: String, app: String, configuration: SessionConfiguration, isActive: Bool) {
        self.init(
            path: path, owner: owner, app: app, category: configuration.category.rawValue, mode: configuration.mode.rawValue,
            options: configuration.options.names, isActive: isActive)
    }
}

/// A session as `SessionStates` lists it (since Version 7): who holds it and where it stands.
public struct SessionState: Sendable, Hashable {
    /// `active`, `inactive` or `interrupted`: inactive because another session's activation (or
    /// the built-in mic's mute) interrupted it, until that ends.
    public enum Activity: String, Sendable, Hashable, CaseIterable {
        case active, inactive, interrupted
    }
    /// What else holds of an active session; a client ignores a name it does not know.
    public enum Mark: String, Sendable, Hashable, CaseIterable {
        /// The route follows it (`Tower.controllingSession`).
        case controlsRoute
        /// Another active session ducks others.
        case ducked
        /// Silent mode or the screen lock silences it.
        case silenced
    }

    public var path: String
    /// The owner's process as the bus said when it opened the session (a sound server's stream:
    /// its `application.process.id`); nil when not known.
    public var processID: UInt32?
    /// That process's command name when the session opened (`/proc/PID/comm`), from the process
    /// itself: print it escaped. Nil when not known.
    public var program: String?
    /// `Activity`'s name; another name from a later daemon is kept as it came.
    public var state: String
    /// `Mark`s' names, in that order.
    public var marks: [String]

    public init(path: String, processID: UInt32?, program: String?, state: String, marks: [String]) {
        self.path = path
        self.processID = processID
        self.program = program
        self.state = state
        self.marks = marks
    }
}

/// What `Explain` returns: which rule chose the route and why each other port lost, as text.
public struct ExplainReply: Sendable, Hashable {
    public var outputRule: String
    public var inputRule: String
    /// Per port uid, the reasons.
    public var ports: [(uid: String, reasons: [String])]

    public init(outputRule: String, inputRule: String, ports: [(uid: String, reasons: [String])]) {
        self.outputRule = outputRule
        self.inputRule = inputRule
        self.ports = ports
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.outputRule == b.outputRule && a.inputRule == b.inputRule
            && a.ports.map(\.uid) == b.ports.map(\.uid) && a.ports.map(\.reasons) == b.ports.map(\.reasons)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(outputRule)
        hasher.combine(inputRule)
        for port in ports {
            hasher.combine(port.uid)
            hasher.combine(port.reasons)
        }
    }
}

// MARK: Encoding (the daemon)

extension DBusAPI {
    /// A port as `(ssssssit)`.
    public static func value(of port: Port) -> DBusValue {
        .structure(fields(of: port))
    }

    /// A port with its availability as `(ssssssits)` (`AllPorts`).
    public static func valueWithAvailability(of port: Port) -> DBusValue {
        .structure(fields(of: port) + [.string(port.availability.rawValue)])
    }

    private static func fields(of port: Port) -> [DBusValue] {
        [
            .string(port.uid), .string(port.type.rawValue), .string(port.direction.rawValue), .string(port.device), .string(port.name),
            .string(port.alsa?.description ?? ""), .int32(Int32(clamping: port.priority)), .uint64(port.sequence),
        ]
    }

    /// A route as `(a(ssssssit)a(ssssssit))`: outputs, then inputs.
    public static func value(of route: RoutePorts) -> DBusValue {
        .structure([.array(route.outputs.map(value(of:))), .array(route.inputs.map(value(of:)))])
    }

    /// A session as `(ossssasb)`.
    public static func value(of session: SessionSummary) -> DBusValue {
        .structure([
            .objectPath(session.path), .string(session.owner), .string(session.app), .string(session.category), .string(session.mode),
            .array(session.options.map(DBusValue.string)), .bool(session.isActive),
        ])
    }

    /// A session's state as `(oussas)`: 0 and "" for an unknown process and program.
    public static func value(of state: SessionState) -> DBusValue {
        .structure([
            .objectPath(state.path), .uint32(state.processID ?? 0), .string(state.program ?? ""), .string(state.state),
            .array(state.marks.map(DBusValue.string)),
        ])
    }

    /// The sound server as `(ssbauss)` (`SoundServer`): server or "", summary, a PulseAudio
    /// protocol server answers, the cards it holds, the deciding rule, its signal.
    public static func value(of engine: SoundEngine) -> DBusValue {
        .structure([
            .string(engine.server?.rawValue ?? ""), .string(engine.summary), .bool(engine.pulseProtocol),
            .array(engine.heldCards.map { .uint32(UInt32(clamping: $0)) }), .string(engine.rule.rawValue), .string(engine.signal),
        ])
    }

    /// `RouteChanged`'s arguments.
    public static func routeChangedArguments(_ change: RouteChange) -> [DBusValue] {
        [.string(change.reason.rawValue), value(of: change.previousPorts), value(of: change.currentPorts)]
    }

    /// `PortsChanged`'s arguments.
    public static func portsChangedArguments(_ kind: PortChange.Kind, _ port: Port) -> [DBusValue] {
        [.string(kind.rawValue), value(of: port)]
    }

    /// `AllPortsChanged`'s arguments.
    public static func allPortsChangedArguments(_ kind: PortChange.Kind, _ port: Port) -> [DBusValue] {
        [.string(kind.rawValue), valueWithAvailability(of: port)]
    }

    /// `Explain`'s reply: the rules, and per port the side it was chosen for or why not.
    public static func explainReply(_ explanation: RouteExplanation) -> [DBusValue] {
        let ports: [DBusValue] = explanation.ports.map { port in
            let chosen = port.chosen.map { "\($0.side.rawValue): chosen by rule \($0.rule.rawValue)" }
            return .structure([.string(port.uid), .array((chosen + port.reasons).map(DBusValue.string))])
        }
        return [.string(explanation.outputRule.rawValue), .string(explanation.inputRule.rawValue), .array(ports)]
    }

    /// `SessionChanged`'s arguments.
    public static func sessionChangedArguments(_ activity: SessionActivity) -> [DBusValue] {
        [.objectPath(activity.path), .string(activity.app), .string(activity.change.rawValue), .string(activity.detail)]
    }

    /// The object path a session id is listed and announced at: a D-Bus session's id is its path;
    /// a sound server's stream (`pipewire/N`) has no object, and is named under the manager's.
    public static func sessionObjectPath(_ id: String) -> String {
        id.hasPrefix("/") ? id : managerPath + "/" + id
    }

    /// The signal a session event becomes: member, signature, values.
    public static func signal(for kind: SessionEvent.Kind) -> (member: String, signature: String, values: [DBusValue]) {
        let (signal, values): (BusSignalMember, [DBusValue])
        switch kind {
        case .interruptionBegan(let reason): (signal, values) = (Session.interruption, [.string("began"), .string(reason.rawValue), .bool(false)])
        case .interruptionEnded(let shouldResume): (signal, values) = (Session.interruption, [.string("ended"), .string(""), .bool(shouldResume)])
        case .ducked: (signal, values) = (Session.ducked, [])
        case .unducked: (signal, values) = (Session.unducked, [])
        case .silenceSecondaryAudioBegin: (signal, values) = (Session.silenceSecondaryAudioHint, [.string("begin")])
        case .silenceSecondaryAudioEnd: (signal, values) = (Session.silenceSecondaryAudioHint, [.string("end")])
        case .silenced: (signal, values) = (Session.silenced, [])
        case .unsilenced: (signal, values) = (Session.unsilenced, [])
        }
        return (signal.name, signal.signature, values)
    }
}

// MARK: Decoding (clients)

extension DBusAPI {
    /// A `(ssssssit)` port. The struct has no availability: the port reads as available.
    public static func port(_ value: DBusValue) throws(WireError) -> Port {
        guard case .structure(let f) = value.unwrapped, f.count == 8, let port = try port(fields: f[...]) else {
            throw WireError("a port is not \(portSignature): \(value.typeName)")
        }
        return port
    }

    /// A `(ssssssits)` port with its availability (`AllPorts`).
    public static func portWithAvailability(_ value: DBusValue) throws(WireError) -> Port {
        guard case .structure(let f) = value.unwrapped, f.count == 9, var port = try port(fields: f[..<8]),
            case .string(let availability) = f[8]
        else { throw WireError("a port is not \(portWithAvailabilitySignature): \(value.typeName)") }
        guard let known = Port.Availability(rawValue: availability) else {
            throw WireError("port \(port.uid): unknown availability \"\(availability)\"")
        }
        port.availability = known
        return port
    }

    /// A port from its eight fields, or nil when their types are not `ssssssit`.
    private static func port(fields slice: ArraySlice<DBusValue>) throws(WireError) -> Port? {
        let f = Array(slice)
        guard case .string(let uid) = f[0], case .string(let type) = f[1], case .string(let direction) = f[2],
            case .string(let device) = f[3], case .string(let name) = f[4], case .string(let alsa) = f[5],
            case .int32(let priority) = f[6], case .uint64(let sequence) = f[7]
        else { return nil }
        guard let portType = PortType(rawValue: type) else { throw WireError("port \(uid): unknown port type \"\(type)\"") }
        guard let portDirection = PortDirection(rawValue: direction) else {
            throw WireError("port \(uid): unknown direction \"\(direction)\"")
        }
        var pcm: ALSADevice?
        if !alsa.isEmpty {
            do { pcm = try ALSADevice(parsing: alsa) } catch { throw WireError("port \(uid): \(error)") }
        }
        return Port(
            uid: uid, type: portType, device: device, name: name, direction: portDirection, priority: Int(priority), sequence: sequence,
            alsa: pcm)
    }

    /// An `a(ssssssit)` list of ports.
    public static func ports(_ value: DBusValue) throws(WireError) -> [Port] {
        guard case .array(let items) = value.unwrapped else { throw WireError("ports are not an array: \(value.typeName)") }
        var result: [Port] = []
        for item in items { result.append(try port(item)) }
        return result
    }

    /// An `a(ssssssits)` list of ports with their availability (`AllPorts`).
    public static func portsWithAvailability(_ value: DBusValue) throws(WireError) -> [Port] {
        guard case .array(let items) = value.unwrapped else { throw WireError("AllPorts is not an array: \(value.typeName)") }
        var result: [Port] = []
        for item in items { result.append(try portWithAvailability(item)) }
        return result
    }

    /// A `(a(ssssssit)a(ssssssit))` route: outputs, then inputs.
    public static func route(_ value: DBusValue) throws(WireError) -> RoutePorts {
        guard case .structure(let sides) = value.unwrapped, sides.count == 2 else {
            throw WireError("a route is not \(routeSignature): \(value.typeName)")
        }
        return RoutePorts(outputs: try ports(sides[0]), inputs: try ports(sides[1]))
    }

    /// `RouteChanged`'s arguments.
    public static func routeChange(_ arguments: [DBusValue]) throws(WireError) -> RouteChange {
        guard arguments.count == 3, case .string(let name) = arguments[0] else {
            throw WireError("RouteChanged is not (s, Route, Route)")
        }
        guard let reason = RouteChangeReason(rawValue: name) else { throw WireError("RouteChanged: unknown reason \"\(name)\"") }
        return RouteChange(reason: reason, previous: try route(arguments[1]), current: try route(arguments[2]))
    }

    /// `PortsChanged`'s arguments.
    public static func portsChanged(_ arguments: [DBusValue]) throws(WireError) -> (kind: PortChange.Kind, port: Port) {
        guard arguments.count == 2, case .string(let name) = arguments[0] else { throw WireError("PortsChanged is not (s, Port)") }
        guard let kind = PortChange.Kind(rawValue: name) else { throw WireError("PortsChanged: unknown change \"\(name)\"") }
        return (kind, try port(arguments[1]))
    }

    /// `AllPortsChanged`'s arguments.
    public static func allPortsChanged(_ arguments: [DBusValue]) throws(WireError) -> (kind: PortChange.Kind, port: Port) {
        guard arguments.count == 2, case .string(let name) = arguments[0] else {
            throw WireError("AllPortsChanged is not (s, \(portWithAvailabilitySignature))")
        }
        guard let kind = PortChange.Kind(rawValue: name) else { throw WireError("AllPortsChanged: unknown change \"\(name)\"") }
        return (kind, try portWithAvailability(arguments[1]))
    }

    /// The activity a `SessionChanged` signal carries.
    public static func sessionChanged(_ arguments: [DBusValue]) throws(WireError) -> SessionActivity {
        guard arguments.count == 4, case .objectPath(let path) = arguments[0], case .string(let app) = arguments[1],
            case .string(let changeName) = arguments[2], case .string(let detail) = arguments[3]
        else { throw WireError("SessionChanged is not (osss)") }
        guard let change = SessionActivity.Change(rawValue: changeName) else { throw WireError("SessionChanged: unknown change \"\(changeName)\"") }
        return SessionActivity(path: path, app: app, change: change, detail: detail)
    }

    /// The session event a session signal stands for; nil for a member the API does not have.
    public static func sessionEvent(member: String, _ arguments: [DBusValue]) throws(WireError) -> SessionEvent.Kind? {
        switch member {
        case Session.interruption.name:
            guard arguments.count == 3, case .string(let type) = arguments[0], case .string(let reasonName) = arguments[1],
                case .bool(let shouldResume) = arguments[2]
            else { throw WireError("Interruption is not (ssb)") }
            switch InterruptionType(rawValue: type) {
            case .began:
                // should_resume means nothing on began; an empty reason is the default one.
                guard let reason = InterruptionReason(rawValue: reasonName.isEmpty ? "default" : reasonName) else {
                    throw WireError("Interruption: unknown reason \"\(reasonName)\"")
                }
                return .interruptionBegan(reason: reason)
            case .ended: return .interruptionEnded(shouldResume: shouldResume)
            case nil: throw WireError("Interruption: unknown type \"\(type)\"")
            }
        case Session.ducked.name: return .ducked
        case Session.unducked.name: return .unducked
        case Session.silenced.name: return .silenced
        case Session.unsilenced.name: return .unsilenced
        case Session.silenceSecondaryAudioHint.name:
            guard let first = arguments.first else { throw WireError("SilenceSecondaryAudioHint is not begin/end") }
            switch try string(first, member) {
            case "begin": return .silenceSecondaryAudioBegin
            case "end": return .silenceSecondaryAudioEnd
            default: throw WireError("SilenceSecondaryAudioHint is not begin/end")
            }
        default: return nil
        }
    }

    /// `Sessions`: `a(ossssasb)`.
    public static func sessions(_ value: DBusValue) throws(WireError) -> [SessionSummary] {
        guard case .array(let items) = value.unwrapped else { throw WireError("Sessions is not an array") }
        var result: [SessionSummary] = []
        for item in items {
            guard case .structure(let f) = item, f.count == 7, case .objectPath(let path) = f[0], case .string(let owner) = f[1],
                case .string(let app) = f[2], case .string(let category) = f[3], case .string(let mode) = f[4],
                case .array(let options) = f[5], case .bool(let active) = f[6]
            else { throw WireError("a session is not \(sessionSummarySignature): \(item.typeName)") }
            var names: [String] = []
            for option in options {
                guard case .string(let name) = option else { throw WireError("session \(path): an option is not a string") }
                names.append(name)
            }
            result.append(SessionSummary(path: path, owner: owner, app: app, category: category, mode: mode, options: names, isActive: active))
        }
        return result
    }

    /// `SessionStates`: `a(oussas)`.
    public static func sessionStates(_ value: DBusValue) throws(WireError) -> [SessionState] {
        guard case .array(let items) = value.unwrapped else { throw WireError("SessionStates is not an array") }
        var result: [SessionState] = []
        for item in items {
            guard case .structure(let f) = item, f.count == 5, case .objectPath(let path) = f[0], case .uint32(let pid) = f[1],
                case .string(let program) = f[2], case .string(let state) = f[3], case .array(let list) = f[4]
            else { throw WireError("a session state is not \(sessionStateSignature): \(item.typeName)") }
            var marks: [String] = []
            for mark in list {
                guard case .string(let name) = mark else { throw WireError("session \(path): a mark is not a string") }
                marks.append(name)
            }
            result.append(SessionState(path: path, processID: pid == 0 ? nil : pid, program: program.isEmpty ? nil : program, state: state, marks: marks))
        }
        return result
    }

    /// `Explain`'s reply.
    public static func explanation(_ arguments: [DBusValue]) throws(WireError) -> ExplainReply {
        guard arguments.count == 3, case .string(let output) = arguments[0], case .string(let input) = arguments[1],
            case .array(let items) = arguments[2]
        else { throw WireError("Explain did not return (s, s, a(sas))") }
        var ports: [(uid: String, reasons: [String])] = []
        for item in items {
            guard case .structure(let f) = item, f.count == 2, case .string(let uid) = f[0], case .array(let list) = f[1] else {
                throw WireError("Explain: an entry is not (sas)")
            }
            var reasons: [String] = []
            for reason in list {
                guard case .string(let text) = reason else { throw WireError("Explain: port \(uid): a reason is not a string") }
                reasons.append(text)
            }
            ports.append((uid, reasons))
        }
        return ExplainReply(outputRule: output, inputRule: input, ports: ports)
    }

    /// A boolean (a property's value, a signal's argument); `what` names it in the error.
    public static func bool(_ value: DBusValue, _ what: String) throws(WireError) -> Bool {
        guard case .bool(let flag) = value.unwrapped else { throw WireError("\(what) is not a boolean: \(value.typeName)") }
        return flag
    }

    /// A string; `what` names it in the error.
    public static func string(_ value: DBusValue, _ what: String) throws(WireError) -> String {
        guard case .string(let text) = value.unwrapped else { throw WireError("\(what) is not a string: \(value.typeName)") }
        return text
    }

    /// The `SoundServer` property's `(ssbauss)` (its summary is made again from the fields).
    public static func soundEngine(_ value: DBusValue) throws(WireError) -> SoundEngine {
        guard case .structure(let fields) = value.unwrapped, fields.count == 6 else {
            throw WireError("SoundServer is not a (ssbauss) structure: \(value.typeName)")
        }
        let name = try string(fields[0], "SoundServer's server")
        let server: SoundServerKind?
        if name.isEmpty {
            server = nil
        } else if let kind = SoundServerKind(rawValue: name) {
            server = kind
        } else {
            throw WireError("SoundServer: unknown server \"\(name.prefix(64))\"")
        }
        let pulse = try bool(fields[2], "SoundServer's pulseProtocol")
        guard case .array(let list) = fields[3] else { throw WireError("SoundServer's cards are not an array: \(fields[3].typeName)") }
        var cards: [Int] = []
        for card in list {
            guard case .uint32(let number) = card else { throw WireError("SoundServer: a card is not a uint32: \(card.typeName)") }
            cards.append(Int(number))
        }
        let ruleName = try string(fields[4], "SoundServer's rule")
        guard let rule = SoundEngineRule(rawValue: ruleName) else { throw WireError("SoundServer: unknown rule \"\(ruleName.prefix(64))\"") }
        return SoundEngine(server: server, pulseProtocol: pulse, heldCards: cards, rule: rule, signal: try string(fields[5], "SoundServer's signal"))
    }
}

// MARK: Checking and reading calls (the daemon)

extension DBusAPI {
    /// Checks a call's signature against the API's, and every string's length.
    public static func check(signature: String, expected: String, arguments: [DBusValue]) throws(DBusErrorReply) {
        guard signature == expected else {
            throw .invalidArgs("expected signature \"\(expected)\", got \"\(signature)\"")
        }
        for argument in arguments { try checkStrings(argument) }
    }

    private static func checkStrings(_ value: DBusValue) throws(DBusErrorReply) {
        switch value {
        case .string(let text), .objectPath(let text), .signature(let text):
            if text.utf8.count > maxStringBytes { throw .invalidArgs("a string of \(text.utf8.count) bytes; at most \(maxStringBytes) are accepted") }
        case .invalidString: throw .invalidArgs("a string that is not valid UTF-8")
        case .array(let items), .structure(let items): for item in items { try checkStrings(item) }
        case .dictionary(let entries):
            for entry in entries {
                try checkStrings(entry.key)
                try checkStrings(entry.value)
            }
        case .variant(let inner): try checkStrings(inner)
        default: break
        }
    }

    public static func category(_ name: String) throws(DBusErrorReply) -> Category {
        guard let value = Category(rawValue: name) else { throw .unknownName(Suggestion.unknown("category", name, among: Category.allCases.map(\.rawValue))) }
        return value
    }

    public static func mode(_ name: String) throws(DBusErrorReply) -> Mode {
        guard let value = Mode(rawValue: name) else { throw .unknownName(Suggestion.unknown("mode", name, among: Mode.allCases.map(\.rawValue))) }
        return value
    }

    public static func options(_ names: [String]) throws(DBusErrorReply) -> CategoryOptions {
        var options: CategoryOptions = []
        for name in names {
            guard let option = CategoryOptions(name: name) else { throw .unknownName(Suggestion.unknown("option", name, among: CategoryOptions.named.map(\.name))) }
            options.formUnion(option)
        }
        return options
    }

    public static func outputOverride(_ name: String) throws(DBusErrorReply) -> OutputOverride {
        guard let value = OutputOverride(rawValue: name) else { throw .unknownName("unknown override \"\(name)\"; use none or speaker") }
        return value
    }

    /// `SetCategory`'s arguments.
    public static func setCategoryArguments(_ category: Category, mode: Mode, options: CategoryOptions) -> [DBusValue] {
        [.string(category.rawValue), .string(mode.rawValue), .array(options.names.map(DBusValue.string))]
    }
}

/// What `DataSources` returns (Version 4): a port's data sources, the one it uses now and why.
public struct DataSourcesReply: Sendable, Hashable {
    /// The port's data sources, the profile's highest priority first; empty for a port without any.
    public var sources: [DataSource]
    /// The id of the data source the port uses now; nil for a port without any.
    public var selected: String?
    /// Why that one (`DataSourceSelection.reason`), or why there is none.
    public var reason: String

    public init(sources: [DataSource], selected: String?, reason: String) {
        self.sources = sources
        self.selected = selected
        self.reason = reason
    }
}

extension DBusAPI {
    /// `DataSources`' reply: `a(sss)` (id, name, alsa; "" for no PCM), the selected id ("" for
    /// none) and the reason.
    public static func dataSourcesReply(_ reply: DataSourcesReply) -> [DBusValue] {
        let sources: [DBusValue] = reply.sources.map {
            .structure([.string($0.id), .string($0.name), .string($0.alsa?.description ?? "")])
        }
        return [.array(sources), .string(reply.selected ?? ""), .string(reply.reason)]
    }

    /// `DataSources`' reply, read back. Names the fault of a reply of another shape, of a PCM
    /// that is not one, and of a selected id that is none of the sources.
    public static func dataSources(_ arguments: [DBusValue]) throws(WireError) -> DataSourcesReply {
        guard arguments.count == 3, case .array(let items) = arguments[0], case .string(let selected) = arguments[1],
            case .string(let reason) = arguments[2]
        else { throw WireError("DataSources did not return (a(sss), s, s)") }
        var sources: [DataSource] = []
        for item in items {
            guard case .structure(let f) = item, f.count == 3, case .string(let id) = f[0], case .string(let name) = f[1],
                case .string(let pcm) = f[2], !id.isEmpty
            else { throw WireError("DataSources: an entry is not (sss) with an id") }
            var alsa: ALSADevice?
            if !pcm.isEmpty {
                do { alsa = try ALSADevice(parsing: pcm) } catch { throw WireError("DataSources: \(id): PCM \(pcm): \(error)") }
            }
            sources.append(DataSource(id: id, name: name, alsa: alsa))
        }
        guard selected.isEmpty || sources.contains(where: { $0.id == selected }) else {
            throw WireError("DataSources: the selected \(selected) is none of the port's data sources")
        }
        return DataSourcesReply(sources: sources, selected: selected.isEmpty ? nil : selected, reason: reason)
    }
}
