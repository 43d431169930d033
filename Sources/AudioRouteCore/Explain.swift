// `audioroute explain`: which rule chose the route, and why each other port lost.

/// Why one port is, or is not, in the route.
public struct PortExplanation: Sendable, Hashable {
    public var uid: String
    /// The sides the port was chosen for, with the deciding rule.
    public var chosen: [(side: Side, rule: RouteRuleName)]
    /// A sentence per side the port was not chosen for.
    public var reasons: [String]

    public enum Side: String, Sendable, Hashable {
        case output
        case input
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.uid == b.uid && a.reasons == b.reasons && a.chosen.map(\.side) == b.chosen.map(\.side)
            && a.chosen.map(\.rule) == b.chosen.map(\.rule)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(uid)
        hasher.combine(reasons)
    }
}

/// The route for `request` over `ports`, with the deciding rules and, for every
/// port, why it is or is not part of it.
public struct RouteExplanation: Sendable {
    public var route: Route
    public var outputRule: RouteRuleName
    public var inputRule: RouteRuleName
    public var ports: [PortExplanation]
}

/// Explains the resolution of `request` over `ports`.
public func explainRoute(_ request: RouteRequest, ports: [Port]) -> RouteExplanation {
    let resolution = resolveRoute(request, ports: ports)
    let context = RouteContext(ports: ports, request: request)
    let outputs = [resolution.output].compactMap { $0 } + resolution.extraOutputs
    var explained: [PortExplanation] = []
    for index in ports.indices {
        let port = ports[index]
        var entry = PortExplanation(uid: port.uid, chosen: [], reasons: [])
        if outputs.contains(index) {
            entry.chosen.append((.output, resolution.outputRule))
        } else if port.direction.isOutput {
            entry.reasons.append("output: " + whyNot(index, side: .output, winner: resolution.output, rule: resolution.outputRule, output: resolution.output, context))
        }
        if resolution.input == index {
            entry.chosen.append((.input, resolution.inputRule))
        } else if port.direction.isInput {
            entry.reasons.append("input: " + whyNot(index, side: .input, winner: resolution.input, rule: resolution.inputRule, output: resolution.output, context))
        }
        explained.append(entry)
    }
    return RouteExplanation(
        route: resolution.route(in: ports), outputRule: resolution.outputRule, inputRule: resolution.inputRule, ports: explained)
}

private func whyNot(
    _ index: Int, side: PortExplanation.Side, winner: Int?, rule: RouteRuleName, output: Int?, _ context: RouteContext
) -> String {
    let port = context.ports[index]
    let category = context.category.rawValue
    if side == .output {
        guard context.category.hasOutput else { return "category \(category) plays nothing" }
        if !context.eligibleOutput(index) {
            switch port.type {
            case .builtInReceiver: return "the receiver is only used by playAndRecord"
            case .bluetoothHFP: return "Bluetooth HFP needs the allowBluetooth option"
            case .bluetoothA2DP:
                return context.category == .playAndRecord
                    ? "Bluetooth A2DP needs the allowBluetoothA2DP option in playAndRecord" : "Bluetooth A2DP is never used by \(category)"
            case .bluetoothLE: return "Bluetooth LE is not eligible in \(category) without allowBluetooth"
            default: return "not eligible in \(category)"
            }
        }
        if context.category == .multiRoute {
            return "multiRoute plays to USB, line out, headphones, HDMI and DisplayPort only"
        }
    } else {
        guard context.category.hasInput else { return "category \(category) records nothing" }
        if !context.eligibleInput(index) { return "\(port.type.rawValue) input needs the allowBluetooth option" }
        if !context.inputKeepsHFPTogether(index, output: output) {
            return "an HFP input is only used with its own device's HFP output"
        }
    }
    guard let winner else { return "no route" }
    let other = context.ports[winner]
    switch rule {
    case .speakerOverride: return "the speaker override chose \(other.uid)"
    case .preferredInput: return "the preferred input chose \(other.uid)"
    case .inputFollowsOutput: return "the input follows the output's device (\(other.device)): \(other.uid)"
    case .builtInFallback:
        if port.type.isBuiltIn { return "the built-in fallback chose \(other.uid) for \(category)" }
        return "built-in \(other.uid) outranks it"
    default: break
    }
    if port.type.isBuiltIn { return "built-in ports are only the fallback; \(other.uid) is connected" }
    if port.priority < 0 { return "priority \(port.priority) is below the built-ins': used only where there is no built-in port" }
    if port.type == .bluetoothA2DP && other.type == .bluetoothHFP && port.device == other.device {
        return "HFP wins over A2DP on the same device (the session needs a duplex link)"
    }
    if port.priority != other.priority { return "priority \(port.priority) is below \(other.uid)'s \(other.priority)" }
    if port.sequence != other.sequence { return "connected before \(other.uid) (last in wins: \(port.sequence) < \(other.sequence))" }
    return "\(other.uid) comes first in type order"
}

extension Tower {
    /// Explains the current route: the controlling session's request over the present ports.
    public func explain() -> RouteExplanation {
        explainRoute(controllingSession?.request ?? RouteRequest(), ports: ports)
    }
}
