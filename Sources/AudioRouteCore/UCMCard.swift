// A UCM card as the daemon knows it: the ports its helper (`audioroute-ucm`, docs/ucm.md)
// announced, and which verb and devices a route asks of it; and the helper's other lines.
// Pure: the helper process owns libasound; the daemon only reads its lines and writes requests.

/// One port of a UCM card, with the UCM devices behind it in each verb.
public struct UCMCardPort: Sendable, Hashable {
    public var port: Port
    /// For each verb that has the port: its UCM devices, highest priority first (a merged
    /// built-in mic lists its data sources; the selected one is enabled, by default the first).
    public var devices: [String: [String]]
    /// The ALSA control that says whether the port is plugged in; nil: always there.
    public var jackControl: String?
    /// The profile's PlaybackPriority/CapturePriority for the port, when it gives one.
    public var profilePriority: Int?
    /// A built-in mic's mute controls: for each verb, each data source's `CaptureSwitch` (a
    /// mixer element's name, index 0), where the profile names a usable one.
    public var captureSwitches: [String: [String: String]]

    public init(
        port: Port, devices: [String: [String]], jackControl: String? = nil, profilePriority: Int? = nil,
        captureSwitches: [String: [String: String]] = [:]
    ) {
        self.port = port
        self.devices = devices
        self.jackControl = jackControl
        self.profilePriority = profilePriority
        self.captureSwitches = captureSwitches
    }
}

/// A UCM `CaptureSwitch` value as a control another process can follow: the name of a boolean
/// mixer element, index 0, on the card's own control device.
public enum UCMControlName {
    /// The longest element name the kernel keeps (SNDRV_CTL_ELEM_ID_NAME_MAXLEN, 44 with its NUL).
    public static let maximumLength = 43

    /// The element name of `value`: a plain name (`Dmic0 Capture Switch`), or UCM's id form
    /// with a name and nothing but the mixer interface and index 0 (`name='Capture Switch'`,
    /// `iface=MIXER,name='Capture Switch',index=0`). Names the fault of anything else: empty, too
    /// long, not printable ASCII, another interface or index, a numid, an unterminated quote.
    public static func mixerElement(_ value: String) -> Result<String, UCMControlNameFault> {
        guard value.utf8.count <= 4 * maximumLength else { return .failure(.init("a value of \(value.utf8.count) bytes")) }
        guard value.hasPrefix("name=") || value.hasPrefix("iface=") || value.hasPrefix("index=") || value.hasPrefix("numid=") else {
            return checked(value)
        }
        var name: String?
        var rest = Substring(value)
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "=") else { return .failure(.init("\"\(value)\" is no control id")) }
            let key = rest[..<equals].lowercased()
            rest = rest[rest.index(after: equals)...]
            let field: Substring
            if let quote = rest.first, quote == "'" || quote == "\"" {
                let body = rest.dropFirst()
                guard let end = body.firstIndex(of: quote) else { return .failure(.init("\"\(value)\": unterminated quote")) }
                field = body[..<end]
                rest = body[body.index(after: end)...]
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                field = rest[..<end]
                rest = rest[end...]
            }
            if rest.first == "," { rest = rest.dropFirst() } else if !rest.isEmpty {
                return .failure(.init("\"\(value)\" is no control id"))
            }
            switch key {
            case "name": name = String(field)
            case "iface" where field.uppercased() == "MIXER": break
            case "index" where field == "0": break
            default: return .failure(.init("\"\(value)\": \(key)=\(field) is not the card's mixer element, index 0"))
            }
        }
        guard let name else { return .failure(.init("\"\(value)\" names no element")) }
        return checked(name)
    }

    private static func checked(_ name: String) -> Result<String, UCMControlNameFault> {
        guard !name.isEmpty else { return .failure(.init("an empty name")) }
        guard name.utf8.count <= maximumLength else {
            return .failure(.init("a name of \(name.utf8.count) bytes (a control's has at most \(maximumLength))"))
        }
        guard name.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else { return .failure(.init("a name that is not printable ASCII")) }
        return .success(name)
    }
}

/// Why a UCM control value cannot be followed.
public struct UCMControlNameFault: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
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
    /// What the helper noted about devices that gave no port.
    public var notes: [String]
    /// What the helper last said is current on the card (its hello: no verb; then each reply);
    /// nil while a request is on its way, when the card's controls are the sequences' to move.
    public var enabled: UCMState?

    public init(
        card: String, verbs: [String], ports: [UCMCardPort], jacks: [String: Bool] = [:], notes: [String] = [],
        enabled: UCMState? = UCMState()
    ) {
        self.card = card
        self.verbs = verbs
        self.ports = ports
        self.jacks = jacks
        self.notes = notes
        self.enabled = enabled
    }

    /// The mute control of `port` now: the `CaptureSwitch` of its data source that is enabled
    /// (the first of the current verb's that is). Nil when none of them is enabled (its switch
    /// is then the profile's sequences', not a mute), it names none, or a request is on its way.
    public func enabledCaptureSwitch(of port: UCMCardPort) -> String? {
        guard let enabled, let verb = enabled.verb, let device = port.devices[verb]?.first(where: enabled.devices.contains) else {
            return nil
        }
        return port.captureSwitches[verb]?[device]
    }

    /// Every mute control the built-in mic ports name, each once, sorted: what the watcher follows.
    public var followedSwitches: [String] {
        Set(ports.filter { $0.port.type == .builtInMic }.flatMap { $0.captureSwitches.values.flatMap(\.values) }).sorted()
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
    /// for each of the route's ports on this card (outputs, then inputs) its selected data
    /// source (`dataSources`, by port uid) when the verb has that device, else its first
    /// device in the verb (the profile's highest priority).
    /// No route port on the card: no verb and no device (the helper turns the card off).
    public func target(route: Route, configuration: SessionConfiguration?, dataSources: [String: String] = [:]) -> UCMState {
        let byUID = Dictionary(ports.map { ($0.port.uid, $0) }, uniquingKeysWith: { first, _ in first })
        let mine = (route.outputs + route.inputs).compactMap { byUID[$0] }
        guard !mine.isEmpty, let verb = verb(for: configuration) else { return UCMState() }
        var devices: [String] = []
        for port in mine {
            guard let candidates = port.devices[verb] else { continue }
            let selected = dataSources[port.port.uid].flatMap { id in candidates.first { $0 == id } }
            if let device = selected ?? candidates.first, !devices.contains(device) { devices.append(device) }
        }
        return UCMState(verb: verb, devices: devices)
    }
}

extension UCMState {
    /// The helper's request line setting `card` to this state (docs/ucm.md, "The helper's protocol").
    public func request(card: String) -> JSON { .object([JSON.Member("card", .string(card))] + members) }

    /// `verb` (null: inactive) and `devices`, as requests and replies carry them.
    public var members: [JSON.Member] {
        [JSON.Member("verb", verb.map { .string($0) } ?? .null), JSON.Member("devices", .array(devices.map { .string($0) }))]
    }
}

extension UCMCard {
    /// The longest hello line the daemon reads: a phone's has a dozen ports (about 3 KiB).
    public static let maximumHelloBytes = UCMLineSplitter.maximumLineLength

    /// One of the helper's lines as JSON, its size checked before it is decoded; `what` names
    /// the line in the error.
    static func helperLineRoot(_ bytes: [UInt8], _ what: String) throws(ScenarioError) -> Node {
        guard bytes.count <= maximumHelloBytes else {
            throw ScenarioError(path: "", message: "\(what) of \(bytes.count) bytes (at most \(maximumHelloBytes))")
        }
        let json: JSON
        do {
            json = try JSON.parse(bytes, maxDepth: 8)
        } catch {
            throw ScenarioError(path: "", message: "invalid JSON: \(error)")
        }
        return Node(json, "")
    }

    /// Parses the helper's hello line. Names the fault: an `error` member (the helper
    /// could not open the card), malformed JSON, a bad port.
    public static func parseHello(_ bytes: [UInt8]) throws(ScenarioError) -> UCMCard {
        let root = try helperLineRoot(bytes, "hello line")
        if let error = try root.optional("error") { throw ScenarioError(path: "", message: try error.string()) }
        try root.allowOnly(["card", "verbs", "ports", "jacks", "notes"])
        let card = try root.required("card").identifier()
        let verbs = try root.required("verbs").elements().map { (node) throws(ScenarioError) in try node.identifier() }
        var ports: [UCMCardPort] = []
        for node in try root.required("ports").elements() {
            let members = try node.members()
            let helperKeys = ["devices", "jackControl", "profilePriority", "captureSwitch"]
            let portNode = Node(.object(members.filter { !helperKeys.contains($0.key) }), node.path)
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
            var profilePriority: Int?
            if let priority = try node.optional("profilePriority"), priority.value != .null {
                guard let value = Int32(exactly: try priority.integer()) else { throw priority.fail("priority out of range") }
                profilePriority = Int(value)
            }
            var captureSwitches: [String: [String: String]] = [:]
            if let switches = try node.optional("captureSwitch") {
                for member in try switches.members() {
                    let verbNode = Node(member.value, switches.child(member.key))
                    guard let enabled = devices[member.key] else { throw verbNode.fail("not one of the port's verbs") }
                    for source in try verbNode.members() {
                        let sourceNode = Node(source.value, verbNode.child(source.key))
                        guard enabled.contains(source.key) else { throw sourceNode.fail("not one of the port's devices in \(member.key)") }
                        switch UCMControlName.mixerElement(try sourceNode.string()) {
                        case .success(let name): captureSwitches[member.key, default: [:]][source.key] = name
                        case .failure(let fault): throw sourceNode.fail("not a control name: \(fault)")
                        }
                    }
                }
            }
            ports.append(
                UCMCardPort(
                    port: port, devices: devices, jackControl: jackControl, profilePriority: profilePriority, captureSwitches: captureSwitches))
        }
        var jacks: [String: Bool] = [:]
        if let node = try root.optional("jacks") {
            for member in try node.members() { jacks[member.key] = try Node(member.value, node.child(member.key)).bool() }
        }
        let notes = try root.optional("notes")?.elements().map { (note) throws(ScenarioError) in try note.string() } ?? []
        return UCMCard(card: card, verbs: verbs, ports: ports, jacks: jacks, notes: notes)
    }

}

/// One line from the UCM helper (docs/ucm.md, "The helper's protocol").
public enum UCMHelperLine: Sendable, Hashable {
    /// A card's hello: it is open, with these ports.
    case hello(UCMCard)
    /// The card is not open in the helper: the answer to an open that failed (why, in
    /// `message`; `noProfile` when alsa-lib has no profile for the card, or its profile says it
    /// is not supported: what any card like it would be told), or to a close (no message).
    case closed(card: String, message: String?, noProfile: Bool)
    /// A jack the helper watches changed.
    case jack(card: String, control: String, plugged: Bool)
    /// A request carried out: what is current on the card now.
    case reply(card: String, state: UCMState)
    /// A request refused or failed, and what is current now.
    case failure(card: String, message: String, state: UCMState?)
    /// A line the helper could not take, about no card it has open.
    case error(String)

    /// Parses one line; names the fault of a line that is none of these.
    public static func parse(_ bytes: [UInt8]) throws(ScenarioError) -> UCMHelperLine {
        let root = try UCMCard.helperLineRoot(bytes, "line")
        guard let cardNode = try root.optional("card") else {
            guard let message = try root.optional("error") else { throw ScenarioError(path: "", message: "a line without \"card\" or \"error\"") }
            return .error(try message.string())
        }
        let card = try cardNode.identifier()
        if try root.optional("verbs") != nil { return .hello(try UCMCard.parseHello(bytes)) }
        if let closed = try root.optional("closed") {
            try root.allowOnly(["card", "closed", "error", "noProfile"])
            guard try closed.bool() else { throw closed.fail("\"closed\" is only ever true") }
            let message = try root.optional("error")?.string()
            let noProfile = try root.optional("noProfile")?.bool() ?? false
            if noProfile && message == nil { throw ScenarioError(path: "noProfile", message: "\"noProfile\" without an \"error\"") }
            return .closed(card: card, message: message, noProfile: noProfile)
        }
        if let jack = try root.optional("jack") {
            try root.allowOnly(["card", "jack", "plugged"])
            return .jack(card: card, control: try jack.identifier(), plugged: try root.required("plugged").bool())
        }
        var state: UCMState?
        if let verb = try root.optional("verb") {
            let devices = try root.required("devices").elements().map { (device) throws(ScenarioError) in try device.identifier() }
            state = UCMState(verb: verb.value == .null ? nil : try verb.identifier(), devices: devices)
        }
        if let message = try root.optional("error") {
            try root.allowOnly(["card", "error", "verb", "devices"])
            return .failure(card: card, message: try message.string(), state: state)
        }
        try root.allowOnly(["card", "verb", "devices", "steps"])
        guard let state else { throw ScenarioError(path: "", message: "a line about card \(card) that is no hello, jack, reply or error") }
        return .reply(card: card, state: state)
    }
}

extension UCMCard {
    /// The card with its ports under the uids and devices udev's classification gives the same
    /// ports (docs/ports.md, "Uids"): `<base>/speaker`, `<base>/headphones` on device
    /// `<base>/jack`, `<base>/hdmi-<PCM>`... So a port keeps its uid (and the priority a user
    /// gave it) whether its card's ports come from UCM or from udev. A second port of one role
    /// gets `-2`, and so on. Each port's priority is its type's default, plus its rank among
    /// the card's ports of that type by the profile's priority (0 for the lowest): UCM's
    /// priorities order one card's devices, and mean nothing next to another card's ports.
    public func withPublicUIDs(base: String) -> UCMCard {
        var card = self
        var used: [String: Int] = [:]
        for index in card.ports.indices {
            let port = card.ports[index].port
            let (role, device) = Self.role(of: port, base: base)
            used[role, default: 0] += 1
            let uid = "\(base)/\(role)" + (used[role]! > 1 ? "-\(used[role]!)" : "")
            card.ports[index].port.uid = uid
            card.ports[index].port.device = device ?? uid
        }
        for index in card.ports.indices {
            let type = card.ports[index].port.type
            let priorities = Set(card.ports.filter { $0.port.type == type }.map { $0.profilePriority ?? Int.min }).sorted()
            let rank = priorities.firstIndex(of: card.ports[index].profilePriority ?? Int.min) ?? 0
            card.ports[index].port.priority = type.defaultPriority + rank
        }
        return card
    }

    /// A port's role in its uid, and its device (nil: its own uid), as udev names them.
    static func role(of port: Port, base: String) -> (role: String, device: String?) {
        switch port.type {
        case .builtInSpeaker: return ("speaker", base)
        case .builtInReceiver: return ("receiver", base)
        case .builtInMic: return ("mic", base)
        case .headphones: return ("headphones", base + "/jack")
        case .headsetMic: return ("headset-mic", base + "/jack")
        case .lineOut: return ("line-out", base + "/line")
        case .lineIn: return ("line-in", base + "/line")
        case .HDMI, .displayPort:
            let prefix = port.type == .HDMI ? "hdmi" : "dp"
            return (port.alsa.flatMap(pcmDevice).map { "\(prefix)-\($0)" } ?? prefix, nil)
        case .usbAudio, .bluetoothA2DP, .bluetoothHFP, .bluetoothLE: return (port.type.rawValue, base)
        }
    }

    /// The PCM device number of an `hw:` PCM (`hw:PCH,3`, `hw:CARD=PCH,DEV=3`; `hw:PCH` is 0).
    public static func pcmDevice(_ pcm: ALSADevice) -> Int? {
        guard let card = pcm.cardPCM, card.plugin == .hw, card.otherArguments.isEmpty else { return nil }
        return card.deviceNumber
    }
}
