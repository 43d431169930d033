// A route's port → the PipeWire node that plays it (docs/daemon.md, "The PipeWire helper").
// Pure, and small named rules in order: the first that finds a node decides, and the choice
// names the rule and the properties that matched, as `ports --explain` names its signals.
// The properties are those PipeWire's ALSA and BlueZ nodes carry (`alsa.card`, `alsa.device`,
// `api.alsa.path`, `api.bluez5.address`, `api.bluez5.profile`).

/// Which node a port is played or recorded through, and why; or why none.
public struct PipeWireNodeChoice: Sendable, Hashable, CustomStringConvertible {
    /// The node, or nil when no rule found one.
    public var node: PipeWireNode?
    /// The rule that decided (`alsaCardAndDevice`, …), or `none`.
    public var rule: String
    /// What matched, or why nothing did: for the log and `status`.
    public var reason: String

    /// The choice in words, for the log.
    public var description: String {
        node.map { "node \($0.id) \"\($0.name ?? "")\" (\(rule): \(reason))" } ?? "no node (\(reason))"
    }
}

/// The rules that map a route's port to a PipeWire node (docs/daemon.md, "The PipeWire helper").
public enum PipeWireNodeMapping {
    /// The media classes a port of `direction` can be played or recorded through.
    public static func mediaClasses(for direction: PortDirection) -> [String] {
        switch direction {
        case .output: ["Audio/Sink", "Audio/Duplex"]
        case .input: ["Audio/Source", "Audio/Duplex"]
        case .duplex: ["Audio/Duplex", "Audio/Sink", "Audio/Source"]
        }
    }

    /// The node for `port`, used in `direction` (the port's own unless given: a duplex port is
    /// a route's output or input), among `nodes`. `cards` gives the index of each card by its id
    /// (`PCH` → 0): a port names its card by id, a PipeWire ALSA node by index.
    public static func node(for port: Port, direction: PortDirection? = nil, among nodes: [PipeWireNode], cards: [String: Int]) -> PipeWireNodeChoice {
        let classes = mediaClasses(for: direction ?? port.direction)
        // Lowest id first: when several nodes match, the first the server made.
        let candidates = nodes.filter { $0.mediaClass.map(classes.contains) ?? false && $0.name != nil }.sorted { $0.id < $1.id }
        guard let alsa = port.alsa else {
            return PipeWireNodeChoice(node: nil, rule: "none", reason: "port \(port.uid) has no ALSA device to match")
        }
        switch alsa {
        case .card(let pcm):
            if let choice = alsaCardAndDevice(pcm, candidates, cards: cards) { return choice }
            if let choice = alsaPath(pcm, candidates, cards: cards) { return choice }
            return PipeWireNodeChoice(
                node: nil, rule: "none",
                reason: "no \(classes[0]) node has alsa.card \(index(of: pcm.card, cards: cards).map(String.init) ?? "?")"
                    + " and alsa.device \(pcm.device ?? 0), or api.alsa.path on \(pcm.card),\(pcm.device ?? 0)")
        case .bluealsa(let pcm):
            if let choice = bluez(pcm, candidates) { return choice }
            return PipeWireNodeChoice(
                node: nil, rule: "none", reason: "no \(classes[0]) node has api.bluez5.address \(pcm.address) and a \(pcm.profile.rawValue) profile")
        case .named(let name):
            return PipeWireNodeChoice(node: nil, rule: "none", reason: "PCM \(name) names no card or Bluetooth device")
        }
    }

    /// The card's index: its own when it is given by index, else by its id in `cards`.
    public static func index(of card: ALSACard, cards: [String: Int]) -> Int? {
        switch card {
        case .index(let index): index
        case .id(let id): cards[id]
        }
    }

    /// Rule `alsaCardAndDevice`: the node's `alsa.card` and `alsa.device` (PipeWire's ALSA nodes,
    /// with or without UCM) are the port's card, by index, and PCM device.
    static func alsaCardAndDevice(_ pcm: ALSACardPCM, _ nodes: [PipeWireNode], cards: [String: Int]) -> PipeWireNodeChoice? {
        guard let card = index(of: pcm.card, cards: cards) else { return nil }
        let device = pcm.device ?? 0
        let matches = nodes.filter { $0.properties["alsa.card"] == String(card) && $0.properties["alsa.device"] == String(device) }
        return choice(matches, rule: "alsaCardAndDevice", reason: "alsa.card \(card), alsa.device \(device)")
    }

    /// Rule `alsaPath`: the node's `api.alsa.path` names the port's card (by id or index) and
    /// device (the path's own, else the node's `alsa.device`; a UCM node's path is `hw:<id>`).
    static func alsaPath(_ pcm: ALSACardPCM, _ nodes: [PipeWireNode], cards: [String: Int]) -> PipeWireNodeChoice? {
        let device = pcm.device ?? 0
        let index = index(of: pcm.card, cards: cards)
        let matches = nodes.filter { node in
            guard let text = node.properties["api.alsa.path"], let path = ALSACardPCM(text) else { return false }
            let sameCard = path.card == pcm.card || (index != nil && self.index(of: path.card, cards: cards) == index)
            let nodeDevice = path.device ?? node.properties["alsa.device"].flatMap { Int($0) } ?? 0
            return sameCard && nodeDevice == device
        }
        return choice(matches, rule: "alsaPath", reason: "api.alsa.path on card \(pcm.card), device \(device)")
    }

    /// Rule `bluezAddressAndProfile`: the node's `api.bluez5.address` is the device's and its
    /// `api.bluez5.profile` the port's kind (`a2dp-…` for A2DP, `headset-…`, `hsp-…`, `hfp-…`
    /// for a call's SCO; PulseAudio's `bluetooth.protocol`, reported under that key, is `a2dp_sink`,
    /// `headset_head_unit` or `handsfree_head_unit`).
    static func bluez(_ pcm: BlueALSAPCM, _ nodes: [PipeWireNode]) -> PipeWireNodeChoice? {
        let address = pcm.address.uppercased()
        let prefixes = pcm.profile == .a2dp ? ["a2dp"] : ["headset", "hsp", "hfp", "handsfree"]
        let matches = nodes.filter { node in
            guard node.properties["api.bluez5.address"]?.uppercased() == address, let profile = node.properties["api.bluez5.profile"] else { return false }
            return prefixes.contains { profile.hasPrefix($0) }
        }
        return choice(matches, rule: "bluezAddressAndProfile", reason: "api.bluez5.address \(address), \(pcm.profile.rawValue) profile")
    }

    static func choice(_ matches: [PipeWireNode], rule: String, reason: String) -> PipeWireNodeChoice? {
        guard let first = matches.first else { return nil }
        let more = matches.count > 1 ? "; \(matches.count) nodes matched, the lowest id taken" : ""
        return PipeWireNodeChoice(node: first, rule: rule, reason: reason + more)
    }

    /// The defaults for a route: each of its first output and first input port's node name, nil
    /// where the route has no such port or no node was found (that default is left as it is).
    public static func defaults(output: Port?, input: Port?, among nodes: [PipeWireNode], cards: [String: Int])
        -> (defaults: PipeWireDefaults, output: PipeWireNodeChoice?, input: PipeWireNodeChoice?)
    {
        let outputChoice = output.map { node(for: $0, direction: .output, among: nodes, cards: cards) }
        let inputChoice = input.map { node(for: $0, direction: .input, among: nodes, cards: cards) }
        return (PipeWireDefaults(sink: outputChoice?.node?.name, source: inputChoice?.node?.name), outputChoice, inputChoice)
    }
}
