// The lines `audioroute-ucm` writes and reads (docs/ucm.md, "The helper's protocol"): one
// JSON object per line, each naming the card it is about. Pure: values in, AudioRouteCore
// JSON out, so the tests check the messages without a card, and the helper's main loop only
// moves lines.
import AudioRouteCore

/// A port of the hello: one UCM port over every verb that has it.
public struct UCMHelperPort: Sendable {
    public var port: Port
    /// For each verb that has the port, in the configuration's verb order: the UCM devices
    /// to enable for it, highest priority first.
    public var devices: [(verb: String, devices: [String])]
    public var jackControl: String?
    /// The profile's PlaybackPriority or CapturePriority for the port in the first verb that
    /// has it, when the profile gives one.
    public var priority: Int?
    /// For each verb that has the port: the `CaptureSwitch` of each of its data sources that
    /// names one (a built-in mic's mute), in `devices`' order.
    public var captureSwitches: [(verb: String, switches: [(device: String, control: String)])] = []
}

/// A line the helper could not take: the fault, named.
public struct UCMRequestError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// What the daemon asks of the helper, one line each.
public enum UCMHelperMessage: Sendable, Hashable {
    /// `{"open": "hw:PCH"}`: open the card's UCM configuration; the answer is its hello, or
    /// an error with `"closed": true`.
    case open(card: String)
    /// `{"close": "hw:PCH"}`: forget the card (it went away); the answer is `"closed": true`.
    case close(card: String)
    /// `{"card": "hw:PCH", "verb": "HiFi" or null, "devices": […]}`: set the card so.
    case request(card: String, target: UCMState)
}

public enum UCMHelperProtocol {
    /// The ports of every verb of `configuration`, merged by uid (the first verb that has
    /// a port gives its other members), in the order first seen.
    public static func ports(_ configuration: UCMConfiguration) -> [UCMHelperPort] {
        var notes: [String] = []
        return ports(configuration, notes: &notes)
    }

    /// `ports(_:)`, appending to `notes` why a device with a PCM gave no port.
    public static func ports(_ configuration: UCMConfiguration, notes: inout [String]) -> [UCMHelperPort] {
        var ports: [UCMHelperPort] = []
        for verb in configuration.verbs {
            for ucm in UCMPortMapping.ports(card: configuration.card, verb: verb, notes: &notes) {
                let devices = ucm.dataSources.map(\.device)
                let switches = ucm.dataSources.compactMap { source in source.captureSwitch.map { (source.device, $0) } }
                let index: Int
                if let known = ports.firstIndex(where: { $0.port.uid == ucm.port.uid }) {
                    index = known
                    ports[index].devices.append((verb.name, devices))
                    // A mic only a later verb has is a data source of the port too.
                    for source in ucm.port.dataSources
                    where !ports[index].port.dataSources.contains(where: { $0.id == source.id })
                        && ports[index].port.dataSources.count < DataSource.maximumPerPort
                    {
                        ports[index].port.dataSources.append(source)
                    }
                } else {
                    index = ports.count
                    ports.append(
                        UCMHelperPort(port: ucm.port, devices: [(verb.name, devices)], jackControl: ucm.jackControl, priority: ucm.priority))
                }
                if !switches.isEmpty { ports[index].captureSwitches.append((verb.name, switches)) }
            }
        }
        return ports
    }

    /// The jack controls the ports name, each once, in the order first named.
    public static func jackControls(_ ports: [UCMHelperPort]) -> [String] {
        var names: [String] = []
        for case let name? in ports.map(\.jackControl) where !names.contains(name) { names.append(name) }
        return names
    }

    /// The hello for a card opened: the card, its verbs, its ports (Port.json's members but
    /// "sequence", then "devices", "jackControl", "profilePriority", and "captureSwitch" where a
    /// data source names its mute control), the jacks that could
    /// be read, and the notes (devices that gave no port, and why).
    public static func hello(
        _ configuration: UCMConfiguration, ports: [UCMHelperPort], jacks: [String: Bool], notes: [String] = []
    ) -> JSON {
        let portObjects: [JSON] = ports.map { port in
            guard case .object(var members) = port.port.json else { return port.port.json }
            // Port.json's members, in the core's order, then the helper's. Without "sequence":
            // the connection order is the daemon's to give, and its decoder (the scenario
            // parser's port) takes 1 or more only.
            members.removeAll { $0.key == "sequence" }
            members.append(JSON.Member("devices", .object(port.devices.map { JSON.Member($0.verb, .array($0.devices.map(JSON.string))) })))
            members.append(JSON.Member("jackControl", port.jackControl.map(JSON.string) ?? .null))
            members.append(JSON.Member("profilePriority", port.priority.map { .integer(Int64($0)) } ?? .null))
            // Only where a data source names one: a hello without mute controls reads as before.
            if !port.captureSwitches.isEmpty {
                members.append(
                    JSON.Member(
                        "captureSwitch",
                        .object(port.captureSwitches.map { verb in
                            JSON.Member(verb.verb, .object(verb.switches.map { JSON.Member($0.device, .string($0.control)) }))
                        })))
            }
            return .object(members)
        }
        let jackMembers = jackControls(ports).compactMap { name in jacks[name].map { JSON.Member(name, .bool($0)) } }
        return .object([
            JSON.Member("card", .string(configuration.card)),
            JSON.Member("verbs", .array(configuration.verbs.map { .string($0.name) })),
            JSON.Member("ports", .array(portObjects)),
            JSON.Member("jacks", .object(jackMembers)),
            JSON.Member("notes", .array(notes.map(JSON.string))),
        ])
    }

    /// `{"card": "hw:PCH", "error": "…", "closed": true}`: the answer to an open that failed
    /// (the configuration could not be opened or read), with `"noProfile": true` when there is
    /// none for the card (alsa-lib's ENOENT) or its profile says the card is not supported (ENXIO,
    /// an `Error` line): what every card with the same driver, names and components is told.
    public static func notOpen(card: String, _ message: String, noProfile: Bool = false) -> JSON {
        .object(
            [JSON.Member("card", .string(card)), JSON.Member("error", .string(message)), JSON.Member("closed", .bool(true))]
                + (noProfile ? [JSON.Member("noProfile", .bool(true))] : []))
    }

    /// `{"card": "hw:PCH", "closed": true}`: the answer to a close.
    public static func closed(card: String) -> JSON {
        .object([JSON.Member("card", .string(card)), JSON.Member("closed", .bool(true))])
    }

    /// `{"error": "…"}`: a line that names no card the helper could answer for.
    public static func error(_ message: String) -> JSON { .object([JSON.Member("error", .string(message))]) }

    /// `{"card": "hw:PCH", "jack": "Headphone Jack", "plugged": true}`.
    public static func jack(card: String, _ name: String, plugged: Bool) -> JSON {
        .object([JSON.Member("card", .string(card)), JSON.Member("jack", .string(name)), JSON.Member("plugged", .bool(plugged))])
    }

    /// One line from the daemon: an open, a close, or a request (`card`, `verb` and `devices`,
    /// all required, no others).
    public static func message(_ line: [UInt8]) -> Result<UCMHelperMessage, UCMRequestError> {
        let json: JSON
        do throws(JSONSyntaxError) {
            json = try JSON.parse(line)
        } catch {
            return .failure(UCMRequestError("malformed JSON: \(error)"))
        }
        guard case .object(let members) = json else {
            return .failure(UCMRequestError("a message is a JSON object, not \(json.typeName)"))
        }
        for key in ["open", "close"] where json[key] != nil {
            guard members.count == 1, case .string(let card)? = json[key], !card.isEmpty else {
                return .failure(UCMRequestError("\"\(key)\" takes a card name, alone: {\"\(key)\": \"hw:<card>\"}"))
            }
            return .success(key == "open" ? .open(card: card) : .close(card: card))
        }
        for member in members where !["card", "verb", "devices"].contains(member.key) {
            return .failure(UCMRequestError("unknown member \"\(member.key)\" (a request has \"card\", \"verb\" and \"devices\")"))
        }
        guard let cardValue = json["card"] else { return .failure(UCMRequestError("missing member \"card\"")) }
        guard case .string(let card) = cardValue, !card.isEmpty else {
            return .failure(UCMRequestError("\"card\" is a card name, not \(cardValue.typeName)"))
        }
        let verb: String?
        switch json["verb"] {
        case .string(let name)?: verb = name
        case .null?: verb = nil
        case let other?: return .failure(UCMRequestError("\"verb\" is a string or null, not \(other.typeName)"))
        case nil: return .failure(UCMRequestError("missing member \"verb\""))
        }
        guard let list = json["devices"] else { return .failure(UCMRequestError("missing member \"devices\"")) }
        guard case .array(let elements) = list else {
            return .failure(UCMRequestError("\"devices\" is an array of strings, not \(list.typeName)"))
        }
        var devices: [String] = []
        for (index, element) in elements.enumerated() {
            guard case .string(let device) = element else {
                return .failure(UCMRequestError("\"devices\"[\(index)] is a string, not \(element.typeName)"))
            }
            devices.append(device)
        }
        return .success(.request(card: card, target: UCMState(verb: verb, devices: devices)))
    }

    /// The card a line names, when it names one ("open", "close" or "card"): for an error
    /// about a line that is otherwise wrong.
    public static func card(of line: [UInt8]) -> String? {
        guard let json = try? JSON.parse(line), case .object = json else { return nil }
        for key in ["card", "open", "close"] { if case .string(let card)? = json[key] { return card } }
        return nil
    }

    /// The reply to a request carried out: what is current now, and the steps taken.
    public static func reply(card: String, _ state: UCMState, steps: [UCMStep]) -> JSON {
        .object([JSON.Member("card", .string(card))] + state.members + [JSON.Member("steps", .array(steps.map { .string($0.description) }))])
    }

    /// The reply to a request refused or failed: the fault, and what is current now.
    public static func failure(card: String, _ message: String, state: UCMState) -> JSON {
        .object([JSON.Member("card", .string(card)), JSON.Member("error", .string(message))] + state.members)
    }

    /// The reply to a request for a card that is not open: the fault, no state.
    public static func failure(card: String, _ message: String) -> JSON {
        .object([JSON.Member("card", .string(card)), JSON.Member("error", .string(message))])
    }
}
