// A UCM card as the daemon knows it: the ports its helper (`audioroute-ucm`, docs/ucm.md)
// announced, and which verb and devices a route asks of it. Pure: the helper process owns
// libasound; the daemon only reads its hello line and writes requests.

/// One port of a UCM card, with the UCM devices behind it in each verb.
public struct UCMCardPort: Sendable, Hashable {
    public var port: Port
    /// For each verb that has the port: its UCM devices, highest priority first (a merged
    /// built-in mic lists its data sources; the first one is enabled).
    public var devices: [String: [String]]
    /// The ALSA control that says whether the port is plugged in; nil: always there.
    public var jackControl: String?

    public init(port: Port, devices: [String: [String]], jackControl: String? = nil) {
        self.port = port
        self.devices = devices
        self.jackControl = jackControl
    }
}

/// A card's UCM configuration, from its helper's hello line.
public struct UCMCard: Sendable, Hashable {
    /// The name the helper opened ("hw:PinePhone").
    public var card: String
    /// The verbs, in the configuration's order.
    public var verbs: [String]
    public var ports: [UCMCardPort]
    /// The jack controls' values when the helper started.
    public var jacks: [String: Bool]

    public init(card: String, verbs: [String], ports: [UCMCardPort], jacks: [String: Bool] = [:]) {
        self.card = card
        self.verbs = verbs
        self.ports = ports
        self.jacks = jacks
    }

    /// The verb for a session configuration: "Voice Call" for a voice or video chat in
    /// playAndRecord, when the card has it; otherwise "HiFi", or the first verb.
    public func verb(for configuration: SessionConfiguration?) -> String? {
        if let configuration, configuration.category == .playAndRecord,
            configuration.mode == .voiceChat || configuration.mode == .videoChat, verbs.contains("Voice Call")
        {
            return "Voice Call"
        }
        return verbs.contains("HiFi") ? "HiFi" : verbs.first
    }

    /// What this card must be set to for a route: the verb for the controlling session, and
    /// the first device of each of the route's ports on this card (outputs, then inputs).
    /// No route port on the card: no verb and no device (the helper turns the card off).
    public func target(route: Route, configuration: SessionConfiguration?) -> UCMState {
        let byUID = Dictionary(ports.map { ($0.port.uid, $0) }, uniquingKeysWith: { first, _ in first })
        let mine = (route.outputs + route.inputs).compactMap { byUID[$0] }
        guard !mine.isEmpty, let verb = verb(for: configuration) else { return UCMState() }
        var devices: [String] = []
        for port in mine {
            if let device = port.devices[verb]?.first, !devices.contains(device) { devices.append(device) }
        }
        return UCMState(verb: verb, devices: devices)
    }
}

extension UCMState {
    /// The helper's request line for this state (docs/ucm.md, "The helper's protocol").
    public var request: JSON { .object(members) }

    /// `verb` (null: inactive) and `devices`, as requests and replies carry them.
    public var members: [JSON.Member] {
        [JSON.Member("verb", verb.map { .string($0) } ?? .null), JSON.Member("devices", .array(devices.map { .string($0) }))]
    }
}

extension UCMCard {
    /// The longest hello line the daemon reads: a phone's has a dozen ports (about 3 KiB).
    public static let maximumHelloBytes = UCMLineSplitter.maximumLineLength

    /// Parses the helper's hello line. Names the fault: an `error` member (the helper
    /// could not open the card), malformed JSON, a bad port.
    public static func parseHello(_ bytes: [UInt8]) throws(ScenarioError) -> UCMCard {
        guard bytes.count <= maximumHelloBytes else {
            throw ScenarioError(path: "", message: "hello line of \(bytes.count) bytes (at most \(maximumHelloBytes))")
        }
        let json: JSON
        do {
            json = try JSON.parse(bytes, maxDepth: 8)
        } catch {
            throw ScenarioError(path: "", message: "invalid JSON: \(error)")
        }
        let root = Node(json, "")
        if let error = try root.optional("error") { throw ScenarioError(path: "", message: try error.string()) }
        try root.allowOnly(["card", "verbs", "ports", "jacks"])
        let card = try root.required("card").identifier()
        let verbs = try root.required("verbs").elements().map { (node) throws(ScenarioError) in try node.identifier() }
        var ports: [UCMCardPort] = []
        for node in try root.required("ports").elements() {
            let members = try node.members()
            let portNode = Node(.object(members.filter { $0.key != "devices" && $0.key != "jackControl" }), node.path)
            let port = try portNode.port()
            guard !ports.contains(where: { $0.port.uid == port.uid }) else {
                throw ScenarioError(path: node.path + ".uid", message: "duplicate port uid \"\(port.uid)\"")
            }
            var devices: [String: [String]] = [:]
            let devicesNode = try node.required("devices")
            for member in try devicesNode.members() {
                guard verbs.contains(member.key) else {
                    throw ScenarioError(path: devicesNode.child(member.key), message: "not one of the verbs")
                }
                devices[member.key] = try Node(member.value, devicesNode.child(member.key)).elements().map {
                    (device) throws(ScenarioError) in try device.identifier()
                }
            }
            var jackControl: String?
            if let jack = try node.optional("jackControl"), jack.value != .null { jackControl = try jack.identifier() }
            ports.append(UCMCardPort(port: port, devices: devices, jackControl: jackControl))
        }
        var jacks: [String: Bool] = [:]
        if let node = try root.optional("jacks") {
            for member in try node.members() { jacks[member.key] = try Node(member.value, node.child(member.key)).bool() }
        }
        return UCMCard(card: card, verbs: verbs, ports: ports, jacks: jacks)
    }

    /// A jack event line (`{"jack": "Headphone Jack", "plugged": true}`), or nil for any other line.
    public static func parseJackEvent(_ bytes: [UInt8]) -> (control: String, plugged: Bool)? {
        guard bytes.count <= maximumHelloBytes, let json = try? JSON.parse(bytes, maxDepth: 2),
            case .object(let members) = json, members.count == 2,
            case .string(let control)? = members.first(where: { $0.key == "jack" })?.value,
            case .bool(let plugged)? = members.first(where: { $0.key == "plugged" })?.value
        else { return nil }
        return (control, plugged)
    }
}
