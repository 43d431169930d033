// The lines `audioroute-ucm` writes and reads (docs/ucm.md, "The helper's protocol"): one
// JSON object per line. Pure: values in, AudioRouteCore JSON out, so the tests check the
// messages without a card, and the helper's main loop only moves lines.
import AudioRouteCore

/// A port of the hello: one UCM port over every verb that has it.
public struct UCMHelperPort: Sendable {
    public var port: Port
    /// For each verb that has the port, in the configuration's verb order: the UCM devices
    /// to enable for it, highest priority first.
    public var devices: [(verb: String, devices: [String])]
    public var jackControl: String?
}

/// A request the helper could not take: the fault, named.
public struct UCMRequestError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

public enum UCMHelperProtocol {
    /// The ports of every verb of `configuration`, merged by uid (the first verb that has
    /// a port gives its other members), in the order first seen.
    public static func ports(_ configuration: UCMConfiguration) -> [UCMHelperPort] {
        var ports: [UCMHelperPort] = []
        for verb in configuration.verbs {
            for ucm in UCMPortMapping.ports(card: configuration.card, verb: verb) {
                let devices = ucm.dataSources.map(\.device)
                if let index = ports.firstIndex(where: { $0.port.uid == ucm.port.uid }) {
                    ports[index].devices.append((verb.name, devices))
                } else {
                    ports.append(UCMHelperPort(port: ucm.port, devices: [(verb.name, devices)], jackControl: ucm.jackControl))
                }
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

    /// The first line: the card, its verbs, its ports (Port.json's members but "sequence",
    /// then "devices" and "jackControl"), the jacks that could be read.
    public static func hello(_ configuration: UCMConfiguration, ports: [UCMHelperPort], jacks: [String: Bool]) -> JSON {
        let portObjects: [JSON] = ports.map { port in
            guard case .object(var members) = port.port.json else { return port.port.json }
            // Port.json's members, in the core's order, then the helper's. Without "sequence":
            // the connection order is the daemon's to give, and its decoder (the scenario
            // parser's port) takes 1 or more only.
            members.removeAll { $0.key == "sequence" }
            members.append(JSON.Member("devices", .object(port.devices.map { JSON.Member($0.verb, .array($0.devices.map(JSON.string))) })))
            members.append(JSON.Member("jackControl", port.jackControl.map(JSON.string) ?? .null))
            return .object(members)
        }
        let jackMembers = jackControls(ports).compactMap { name in jacks[name].map { JSON.Member(name, .bool($0)) } }
        return .object([
            JSON.Member("card", .string(configuration.card)),
            JSON.Member("verbs", .array(configuration.verbs.map { .string($0.name) })),
            JSON.Member("ports", .array(portObjects)),
            JSON.Member("jacks", .object(jackMembers)),
        ])
    }

    /// `{"error": "…"}`: the hello's failure.
    public static func error(_ message: String) -> JSON { .object([JSON.Member("error", .string(message))]) }

    /// `{"jack": "Headphone Jack", "plugged": true}`.
    public static func jack(_ name: String, plugged: Bool) -> JSON {
        .object([JSON.Member("jack", .string(name)), JSON.Member("plugged", .bool(plugged))])
    }

    /// A request line: `{"verb": "Voice Call" or null, "devices": ["Earpiece", …]}`, both members
    /// required, no others.
    public static func request(_ line: [UInt8]) -> Result<UCMState, UCMRequestError> {
        let json: JSON
        do throws(JSONSyntaxError) {
            json = try JSON.parse(line)
        } catch {
            return .failure(UCMRequestError("malformed JSON: \(error)"))
        }
        guard case .object(let members) = json else {
            return .failure(UCMRequestError("a request is a JSON object, not \(json.typeName)"))
        }
        for member in members where member.key != "verb" && member.key != "devices" {
            return .failure(UCMRequestError("unknown member \"\(member.key)\" (a request has \"verb\" and \"devices\")"))
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
        return .success(UCMState(verb: verb, devices: devices))
    }

    /// The reply to a request carried out: what is current now, and the steps taken.
    public static func reply(_ state: UCMState, steps: [UCMStep]) -> JSON {
        .object(state.members + [JSON.Member("steps", .array(steps.map { .string($0.description) }))])
    }

    /// The reply to a request refused or failed: the fault, and what is current now.
    public static func failure(_ message: String, state: UCMState) -> JSON {
        .object([JSON.Member("error", .string(message))] + state.members)
    }
}
