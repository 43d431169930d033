// Spec §8: `audioroute simulate`. A scenario (ports, sessions, steps) runs
// through a Tower; each step yields one JSON line. A malformed scenario is
// refused whole, with the JSON path of the first fault; a refused step inside a
// valid scenario is reported in its line and the run goes on.

/// A fault in a scenario document, named by its JSON path.
public struct ScenarioError: Error, Sendable, Equatable, CustomStringConvertible {
    /// e.g. `steps[3].setCategory.options[1]`; empty for the document itself.
    public var path: String
    public var message: String
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

/// A parsed scenario.
public struct Scenario: Sendable {
    public var ports: [Port]
    public var sessions: [Session]
    public var steps: [Step]

    /// One step of a scenario.
    public enum Step: Sendable, Hashable {
        case activate(session: String)
        case deactivate(session: String, notifyOthers: Bool)
        case add([Port])
        case remove([String])
        case update(Port)
        case setCategory(session: String, category: Category, mode: Mode, options: CategoryOptions)
        case override(session: String, port: OutputOverride)
        case preferInput(session: String, uid: String?)
        case setPriority(uid: String, priority: Int)
        case open(Session)
        case close(session: String)
        case silentMode(Bool)
        case screenLocked(Bool)
        /// The hardware mutes or unmutes the built-in microphone.
        case micMuted(Bool)
        case wake
    }
}

extension Scenario {
    /// The step kinds, as spelled in a document.
    public static let stepKinds = [
        "activate", "deactivate", "add", "remove", "update", "setCategory", "override", "preferInput",
        "setPriority", "open", "close", "silentMode", "screenLocked", "micMuted", "wake",
    ]

    /// Parses a scenario document.
    public static func parse(_ bytes: [UInt8]) throws(ScenarioError) -> Scenario {
        let json: JSON
        do {
            json = try JSON.parse(bytes)
        } catch {
            // A repeated key is named like the other faults of structure, by its path.
            if let path = error.path { throw ScenarioError(path: Node.path(path), message: error.message) }
            throw ScenarioError(path: "", message: "invalid JSON: \(error)")
        }
        let root = Node(json, "")
        try root.allowOnly(["ports", "sessions", "steps"])
        var ports: [Port] = []
        if let list = try root.optional("ports") {
            for node in try list.elements() {
                let port = try node.port()
                if ports.contains(where: { $0.uid == port.uid }) {
                    throw ScenarioError(path: node.path + ".uid", message: "duplicate port uid \"\(port.uid)\"")
                }
                ports.append(port)
            }
        }
        var sessions: [Session] = []
        if let list = try root.optional("sessions") {
            for node in try list.elements() {
                let session = try node.session()
                if sessions.contains(where: { $0.id == session.id }) {
                    throw ScenarioError(path: node.path + ".id", message: "duplicate session id \"\(session.id)\"")
                }
                sessions.append(session)
            }
        }
        var steps: [Step] = []
        if let list = try root.optional("steps") {
            for node in try list.elements() { steps.append(try node.step()) }
        }
        return Scenario(ports: ports, sessions: sessions, steps: steps)
    }
}

/// A JSON value with its path, for readers that name faults.
struct Node {
    let value: JSON
    let path: String

    init(_ value: JSON, _ path: String) {
        self.value = value
        self.path = path
    }

    func fail(_ message: String) -> ScenarioError { ScenarioError(path: path, message: message) }

    func child(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    /// A parser's path in the form nodes name theirs (`steps[1].add`, empty for the document).
    static func path(_ components: [JSON.PathComponent]) -> String {
        components.reduce("") { path, component in
            switch component {
            case .key(let key): Node(.null, path).child(key)
            case .index(let index): "\(path)[\(index)]"
            }
        }
    }

    func members() throws(ScenarioError) -> [JSON.Member] {
        guard case .object(let members) = value else { throw fail("expected an object, found \(value.typeName)") }
        return members
    }

    func allowOnly(_ keys: [String]) throws(ScenarioError) {
        for member in try members() where !keys.contains(member.key) {
            throw ScenarioError(path: child(member.key), message: "unknown key \"\(member.key)\" (expected one of: \(keys.joined(separator: ", ")))")
        }
    }

    func optional(_ key: String) throws(ScenarioError) -> Node? {
        guard let member = try members().first(where: { $0.key == key }) else { return nil }
        return Node(member.value, child(key))
    }

    func required(_ key: String) throws(ScenarioError) -> Node {
        guard let node = try optional(key) else { throw fail("missing key \"\(key)\"") }
        return node
    }

    func elements() throws(ScenarioError) -> [Node] {
        guard case .array(let elements) = value else { throw fail("expected an array, found \(value.typeName)") }
        return elements.enumerated().map { Node($1, "\(path)[\($0)]") }
    }

    func string() throws(ScenarioError) -> String {
        guard case .string(let text) = value else { throw fail("expected a string, found \(value.typeName)") }
        return text
    }

    func identifier() throws(ScenarioError) -> String {
        let text = try string()
        guard !text.isEmpty else { throw fail("must not be empty") }
        return text
    }

    func alsaDevice() throws(ScenarioError) -> ALSADevice {
        let text = try identifier()
        do { return try ALSADevice(parsing: text) } catch { throw fail(error.description) }
    }

    func bool() throws(ScenarioError) -> Bool {
        guard case .bool(let flag) = value else { throw fail("expected true or false, found \(value.typeName)") }
        return flag
    }

    func integer() throws(ScenarioError) -> Int64 {
        guard case .integer(let number) = value else { throw fail("expected an integer, found \(value.typeName)") }
        return number
    }

    func name<T: RawRepresentable & CaseIterable>(_: T.Type, _ what: String) throws(ScenarioError) -> T where T.RawValue == String {
        let text = try string()
        guard let result = T(rawValue: text) else { throw fail(Suggestion.unknown(what, text, among: T.allCases.map(\.rawValue))) }
        return result
    }

    func options() throws(ScenarioError) -> CategoryOptions {
        var result: CategoryOptions = []
        for node in try elements() {
            let text = try node.string()
            guard let option = CategoryOptions(name: text) else { throw node.fail(Suggestion.unknown("option", text, among: CategoryOptions.named.map(\.name))) }
            result.formUnion(option)
        }
        return result
    }

    func port() throws(ScenarioError) -> Port {
        try allowOnly(["uid", "type", "device", "name", "direction", "priority", "sequence", "alsa", "availability", "dataSources"])
        let uid = try required("uid").identifier()
        let type = try required("type").name(PortType.self, "port type")
        let device = try required("device").identifier()
        var direction: PortDirection?
        if let node = try optional("direction") {
            let value = try node.name(PortDirection.self, "direction")
            guard type.allowedDirections.contains(value) else {
                throw node.fail("direction \(value.rawValue) is not possible for \(type.rawValue)")
            }
            direction = value
        }
        var priority: Int?
        if let node = try optional("priority") {
            let value = try node.integer()
            guard let fits = Int32(exactly: value) else { throw node.fail("priority out of range") }
            priority = Int(fits)
        }
        var sequence: UInt64 = 0
        if let node = try optional("sequence") {
            let value = try node.integer()
            guard value >= 1 else { throw node.fail("sequence must be 1 or more") }
            sequence = UInt64(value)
        }
        let name = try optional("name")?.string()
        let alsa = try optional("alsa")?.alsaDevice()
        let availability = try optional("availability")?.name(Port.Availability.self, "availability") ?? .available
        let dataSources = try optional("dataSources")?.dataSources() ?? []
        return Port(
            uid: uid, type: type, device: device, name: name, direction: direction, priority: priority, sequence: sequence, alsa: alsa,
            availability: availability, dataSources: dataSources)
    }

    /// `[{"id": ..., "name": ..., "alsa": ...}, ...]`: at most `DataSource.maximumPerPort`, ids unique.
    func dataSources() throws(ScenarioError) -> [DataSource] {
        let nodes = try elements()
        guard nodes.count <= DataSource.maximumPerPort else {
            throw fail("\(nodes.count) data sources (at most \(DataSource.maximumPerPort))")
        }
        var sources: [DataSource] = []
        for node in nodes {
            try node.allowOnly(["id", "name", "alsa"])
            let idNode = try node.required("id")
            let id = try idNode.identifier()
            guard !sources.contains(where: { $0.id == id }) else { throw idNode.fail("duplicate data source \"\(id)\"") }
            let alsaNode = try node.optional("alsa")
            let alsa = alsaNode?.value == .null ? nil : try alsaNode?.alsaDevice()
            sources.append(DataSource(id: id, name: try node.optional("name")?.string(), alsa: alsa))
        }
        return sources
    }

    /// `{"session": ..., "category": ..., "mode": ..., "options": [...]}` minus `session`.
    func configuration() throws(ScenarioError) -> (Category, Mode, CategoryOptions) {
        let category = try optional("category")?.name(Category.self, "category") ?? .soloAmbient
        let mode = try optional("mode")?.name(Mode.self, "mode") ?? .default
        let options = try optional("options")?.options() ?? []
        return (category, mode, options)
    }

    func session() throws(ScenarioError) -> Session {
        try allowOnly(["id", "category", "mode", "options", "prefersInterruptionOnRouteDisconnect"])
        let id = try required("id").identifier()
        let (category, mode, options) = try configuration()
        let configuration: SessionConfiguration
        do {
            configuration = try SessionConfiguration(category: category, mode: mode, options: options)
        } catch {
            throw ScenarioError(path: child("options"), message: error.description)
        }
        var session = Session(id: id, configuration: configuration)
        if let node = try optional("prefersInterruptionOnRouteDisconnect") {
            session.prefersInterruptionOnRouteDisconnect = try node.bool()
        }
        return session
    }

    /// A session named either as `"id"` or as `{"session": "id", ...}`.
    func sessionReference(allowing extra: [String] = []) throws(ScenarioError) -> String {
        if case .string = value { return try identifier() }
        try allowOnly(["session"] + extra)
        return try required("session").identifier()
    }

    func step() throws(ScenarioError) -> Scenario.Step {
        let members = try members()
        guard members.count == 1, let member = members.first else {
            throw fail("a step has exactly one kind, found \(members.count) keys")
        }
        let body = Node(member.value, child(member.key))
        switch member.key {
        case "activate":
            return .activate(session: try body.sessionReference())
        case "deactivate":
            let session = try body.sessionReference(allowing: ["notifyOthers"])
            var notify = false
            if case .object = body.value { notify = try body.optional("notifyOthers")?.bool() ?? false }
            return .deactivate(session: session, notifyOthers: notify)
        case "add":
            if case .array = body.value { return .add(try body.elements().map { (node) throws(ScenarioError) in try node.port() }) }
            return .add([try body.port()])
        case "remove":
            if case .array = body.value { return .remove(try body.elements().map { (node) throws(ScenarioError) in try node.identifier() }) }
            return .remove([try body.identifier()])
        case "update":
            return .update(try body.port())
        case "setCategory":
            try body.allowOnly(["session", "category", "mode", "options"])
            let session = try body.required("session").identifier()
            _ = try body.required("category")
            let (category, mode, options) = try body.configuration()
            return .setCategory(session: session, category: category, mode: mode, options: options)
        case "override":
            try body.allowOnly(["session", "port"])
            return .override(session: try body.required("session").identifier(), port: try body.required("port").name(OutputOverride.self, "override"))
        case "preferInput":
            try body.allowOnly(["session", "uid"])
            let session = try body.required("session").identifier()
            let uidNode = try body.required("uid")
            if case .null = uidNode.value { return .preferInput(session: session, uid: nil) }
            return .preferInput(session: session, uid: try uidNode.identifier())
        case "setPriority":
            try body.allowOnly(["uid", "priority"])
            let uid = try body.required("uid").identifier()
            let priorityNode = try body.required("priority")
            guard let priority = Int32(exactly: try priorityNode.integer()) else { throw priorityNode.fail("priority out of range") }
            return .setPriority(uid: uid, priority: Int(priority))
        case "open":
            return .open(try body.session())
        case "close":
            return .close(session: try body.sessionReference())
        case "silentMode":
            return .silentMode(try body.bool())
        case "screenLocked":
            return .screenLocked(try body.bool())
        case "micMuted":
            return .micMuted(try body.bool())
        case "wake":
            guard try body.bool() else { throw body.fail("expected true") }
            return .wake
        default:
            throw body.fail("unknown step kind \"\(member.key)\" (expected one of: \(Scenario.stepKinds.joined(separator: ", ")))")
        }
    }
}

/// Runs scenarios and renders each step as a JSON line.
public struct Simulator: Sendable {
    public private(set) var tower: Tower
    /// Every port of the scenario with its availability; the tower gets the usable ones, as the
    /// daemon's does.
    public private(set) var known = AvailabilityFilter()

    /// A warning for the step with this index (stderr material).
    public struct Warning: Sendable, Equatable {
        public var step: Int
        public var message: String
    }

    public init(scenario: Scenario) throws(SessionError) {
        _ = try known.apply(.added(scenario.ports))
        var tower = Tower()
        _ = try tower.addPorts(known.usablePorts)
        for session in scenario.sessions { _ = try tower.openSession(session) }
        self.tower = tower
    }

    /// Runs every step; `emit` gets line 0 (the initial state) and one line per step.
    public static func run(_ scenario: Scenario, emit: (String) -> Void) throws(SessionError) -> [Warning] {
        try run(scenario, emitUTF8: { emit(String(decoding: $0, as: UTF8.self)) })
    }

    /// Runs every step, handing each line as UTF-8 (no newline) to `emitUTF8`.
    public static func run(_ scenario: Scenario, emitUTF8: ([UInt8]) -> Void) throws(SessionError) -> [Warning] {
        var simulator = try Simulator(scenario: scenario)
        var buffer: [UInt8] = []
        func emit(_ line: JSON) {
            buffer.removeAll(keepingCapacity: true)
            line.write(to: &buffer)
            emitUTF8(buffer)
        }
        emit(Self.lineJSON(step: 0, route: simulator.tower.route, outcome: TowerOutcome(), error: nil))
        var warnings: [Warning] = []
        for (offset, step) in scenario.steps.enumerated() {
            let number = offset + 1
            do {
                let outcome = try simulator.apply(step)
                for message in outcome.warnings { warnings.append(Warning(step: number, message: message)) }
                emit(Self.lineJSON(step: number, route: simulator.tower.route, outcome: outcome, error: nil))
            } catch {
                emit(Self.lineJSON(step: number, route: simulator.tower.route, outcome: TowerOutcome(), error: error))
            }
        }
        return warnings
    }

    /// Applies one step to the tower.
    public mutating func apply(_ step: Scenario.Step) throws(SessionError) -> TowerOutcome {
        switch step {
        case .activate(let id): return try tower.setActive(true, session: id)
        case .deactivate(let id, let notify): return try tower.setActive(false, session: id, notifyOthers: notify)
        case .add(let ports): return try portEvent(.added(ports))
        case .remove(let uids): return try portEvent(.removed(uids))
        case .update(let port): return try portEvent(.updated(port))
        case .setCategory(let id, let category, let mode, let options):
            return try tower.setCategory(category, mode: mode, options: options, session: id)
        case .override(let id, let port): return try tower.overrideOutput(port, session: id)
        case .preferInput(let id, let uid): return try tower.setPreferredInput(uid, session: id)
        case .setPriority(let uid, let priority): return try tower.setPriority(priority, for: uid)
        case .open(let session): return try tower.openSession(session)
        case .close(let id): return try tower.closeSession(id)
        case .silentMode(let on): return tower.setSilentMode(on)
        case .screenLocked(let on): return tower.setScreenLocked(on)
        case .micMuted(let on): return tower.setBuiltInMicMuted(on)
        case .wake: return tower.wake()
        }
    }

    /// A port step through the availability filter: the tower sees only usable ports.
    private mutating func portEvent(_ event: PortEvent) throws(SessionError) -> TowerOutcome {
        let before = known
        guard let usable = try known.apply(event) else { return TowerOutcome() }
        do throws(SessionError) {
            return try tower.apply(usable)
        } catch {
            // The filter refuses what the tower would; should they ever disagree, nothing changes.
            known = before
            throw error
        }
    }

    /// One output line of spec §8.
    public static func line(step: Int, route: Route, outcome: TowerOutcome, error: SessionError?) -> String {
        lineJSON(step: step, route: route, outcome: outcome, error: error).text
    }

    static func lineJSON(step: Int, route: Route, outcome: TowerOutcome, error: SessionError?) -> JSON {
        var members: [JSON.Member] = [
            JSON.Member("step", .integer(Int64(step))),
            JSON.Member("route", route.json),
            JSON.Member("change", outcome.change.map { .object([JSON.Member("reason", .string($0.reason.rawValue)), JSON.Member("previous", $0.previous.json)]) } ?? .null),
            JSON.Member("events", .array(outcome.events.map(\.json))),
            JSON.Member("error", error.map { .string($0.code) } ?? .null),
        ]
        if let error { members.append(JSON.Member("message", .string(error.description))) }
        return .object(members)
    }
}

extension Route {
    /// `{"inputs": [...], "outputs": [...]}`.
    public var json: JSON {
        .object([JSON.Member("inputs", .array(inputs.map(JSON.string))), JSON.Member("outputs", .array(outputs.map(JSON.string)))])
    }
}

extension SessionEvent {
    /// `{"session": ..., "type": ..., ...keys}` as in spec §8.
    public var json: JSON {
        var members = [JSON.Member("session", .string(session)), JSON.Member("type", .string(kind.name))]
        switch kind {
        case .interruptionBegan(let reason): members.append(JSON.Member("reason", .string(reason.rawValue)))
        case .interruptionEnded(let shouldResume): members.append(JSON.Member("shouldResume", .bool(shouldResume)))
        case .ducked: members.append(JSON.Member("gain", .double(SessionEvent.duckedGain)))
        default: break
        }
        return .object(members)
    }
}

extension Port {
    /// The port as a JSON object (`audioroute monitor --json`), with `availability` only when
    /// the port is not available: a document of available ports reads as before it existed.
    public var json: JSON { json(withAvailability: availability != .available) }

    /// The port as a JSON object; `availability` last, when `withAvailability` (`audioroute
    /// ports --json`, which lists unavailable ports too, gives it always).
    public func json(withAvailability: Bool) -> JSON {
        var members = [
            JSON.Member("uid", .string(uid)), JSON.Member("type", .string(type.rawValue)),
            JSON.Member("direction", .string(direction.rawValue)), JSON.Member("device", .string(device)),
            JSON.Member("name", .string(name)), JSON.Member("priority", .integer(Int64(priority))),
            JSON.Member("sequence", .integer(Int64(clamping: sequence))), JSON.Member("alsa", alsa.map { .string($0.description) } ?? .null),
        ]
        if withAvailability { members.append(JSON.Member("availability", .string(availability.rawValue))) }
        // Only a port that has data sources says so: other ports' documents read as before.
        if !dataSources.isEmpty { members.append(JSON.Member("dataSources", .array(dataSources.map(\.json)))) }
        return .object(members)
    }
}
