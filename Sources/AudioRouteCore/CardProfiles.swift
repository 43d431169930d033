// A sound card's profile in the sound server, following the route (docs/daemon.md, "The PipeWire
// helper"; docs/decisions.md, "Card profiles"). PipeWire (and PulseAudio) make a card's sinks and
// sources from its active profile: with "off", an output-only profile while the route records
// from the card's mic, or analog while the route is the card's HDMI, the route's port has no
// node and its default cannot be set. Pure: the device as the helper reports it, the rules that
// choose a profile for the route, and the follower that asks once per profile and stops when the
// server keeps setting it back.

/// One profile of a server's card (PipeWire's `EnumProfile`, PulseAudio's card profile).
public struct PipeWireProfile: Sendable, Hashable {
    /// Whether the server says the profile can be used now (SPA's availability).
    public enum Availability: String, Sendable, Hashable, CaseIterable {
        case unknown, no, yes
    }

    /// The profile's index: what a request names.
    public var index: Int
    /// `output:analog-stereo+input:analog-stereo`, `off`, `pro-audio`, `HiFi`, …
    public var name: String
    public var description: String
    /// Higher is the server's own preference.
    public var priority: Int
    public var available: Availability
    /// How many `Audio/Sink` and `Audio/Source` nodes it makes (its `classes`).
    public var sinks: Int
    public var sources: Int

    /// The longest name or description kept, in UTF-8 bytes (a profile with a longer one is left out).
    public static let maximumTextLength = 192

    public init(index: Int, name: String, description: String = "", priority: Int = 0, available: Availability = .unknown, sinks: Int = 0, sources: Int = 0) {
        self.index = index
        self.name = name
        self.description = description
        self.priority = priority
        self.available = available
        self.sinks = sinks
        self.sources = sources
    }

    /// The ACP parts of its name (`output:hdmi-stereo`, `input:analog-stereo`), split at `+`.
    public var parts: [Substring] { name.split(separator: "+") }
    /// The names of its output parts (`hdmi-stereo-extra1`), without `output:`.
    public var outputParts: [Substring] { parts.filter { $0.hasPrefix("output:") }.map { $0.dropFirst(7) } }
    /// The names of its input parts, without `input:`.
    public var inputParts: [Substring] { parts.filter { $0.hasPrefix("input:") }.map { $0.dropFirst(6) } }
    /// Whether the name is in ACP's form (PulseAudio's and PipeWire's profiles of a card without UCM).
    public var isACP: Bool { !parts.isEmpty && parts.allSatisfy { $0.hasPrefix("output:") || $0.hasPrefix("input:") } }
    /// `off` and `pro-audio`: never set by AudioRoute.
    public var isNeverChosen: Bool { name == "off" || name == "pro-audio" }

    /// `3 "output:hdmi-stereo" (1 sink, 0 sources)`, for the log.
    public var summary: String { "\(index) \"\(name)\" (\(sinks) sink\(sinks == 1 ? "" : "s"), \(sources) source\(sources == 1 ? "" : "s"))" }
}

/// An ALSA card of the server (a PipeWire `Audio/Device`), with its profiles and the active one.
public struct PipeWireDevice: Sendable, Hashable {
    /// The device's global id (the registry's).
    public var id: UInt32
    /// Of its properties, those in `keys` whose value is at most `PipeWireNode.maximumValueLength` bytes.
    public var properties: [String: String]
    /// Its profiles, at most `maximumProfiles`, in the server's order.
    public var profiles: [PipeWireProfile]
    /// The active profile's index, nil when the server says none.
    public var active: Int?

    /// The properties reported: which card or Bluetooth device it is, and its names.
    public static let keys: [String] = ["device.name", "device.description", "device.api", "api.alsa.card", "alsa.card", "api.alsa.path", "api.bluez5.address"]
    /// The most profiles reported for one device; the rest are left out (logged by the helper).
    public static let maximumProfiles = 96
    /// The most devices the helper follows; more are logged and left out.
    public static let maximumDevices = 64

    public init(id: UInt32, properties: [String: String], profiles: [PipeWireProfile], active: Int?) {
        self.id = id
        self.properties = properties
        self.profiles = profiles
        self.active = active
    }

    /// A device with those of `all` that are reported (`keys`, values within the bound).
    public init(id: UInt32, selecting all: some Sequence<(key: String, value: String)>, profiles: [PipeWireProfile], active: Int?) {
        var properties: [String: String] = [:]
        for (key, value) in all where Self.keys.contains(key) && value.utf8.count <= PipeWireNode.maximumValueLength {
            properties[key] = value
        }
        self.init(id: id, properties: properties, profiles: profiles, active: active)
    }

    /// The ALSA card's index: `api.alsa.card` (PipeWire's), else `alsa.card` (PulseAudio's).
    public var card: Int? { (properties["api.alsa.card"] ?? properties["alsa.card"]).flatMap { Int($0) } }
    /// A Bluetooth device's address (`api.bluez5.address`; PulseAudio's `device.string`, reported
    /// under that key), upper-cased as BlueZ writes it; nil for a card.
    public var bluetoothAddress: String? { properties["api.bluez5.address"].map { $0.uppercased() } }
    /// `device.name` (`alsa_card.pci-0000_00_1b.0`, `bluez_card.00_AA_01_00_00_23`).
    public var name: String? { properties["device.name"] }
    /// The active profile, when the server says one.
    public var activeProfile: PipeWireProfile? { active.flatMap { index in profiles.first { $0.index == index } } }
}

/// What the chooser decided for one card, and why.
public struct CardProfileChoice: Sendable, Hashable, CustomStringConvertible {
    /// The profile to set, nil to leave the card as it is.
    public var profile: PipeWireProfile?
    /// The rule that decided.
    public var rule: CardProfileRule
    /// What the rule saw, for the log and `status`.
    public var reason: String

    public var description: String {
        profile.map { "set \($0.summary) (\(rule.rawValue): \(reason))" } ?? "leave it (\(rule.rawValue): \(reason))"
    }
}

/// The chooser's rules, in the order they are tried (docs/decisions.md, "Card profiles").
public enum CardProfileRule: String, Sendable, Hashable, CaseIterable {
    /// The route has no port on the card: it is left as it is.
    case cardNotInRoute
    /// Every route port on the card has a node already: whatever the profile, it serves.
    case nodesPresent
    /// A profile not in ACP's form (a UCM card's `HiFi`, one profile): left alone.
    case notACP
    /// The active profile makes what the route needs on the card (a sink of the port's kind, a source).
    case activeServes
    /// The highest-priority available profile that serves (never `off` or `pro-audio`).
    case bestProfile
    /// No profile serves: the card is left as it is.
    case noProfileServes
}

/// The route's needs on one card, and the rules that choose its profile.
public enum CardProfiles {
    /// What the route needs of one card.
    public struct Needs: Sendable, Hashable, CustomStringConvertible {
        /// The kinds of output part the route's outputs on the card need: `hdmi` for an HDMI or
        /// DisplayPort port, `analog` for the others.
        public var outputs: Set<OutputKind> = []
        /// Whether the route records from the card.
        public var input = false
        /// On a Bluetooth device, the profile family the route's ports there need (HFP when any
        /// of them is HFP's: one profile serves a device at a time).
        public var bluetooth: BluetoothFamily?

        public var isEmpty: Bool { outputs.isEmpty && !input && bluetooth == nil }
        public var description: String {
            if let bluetooth { return "an \(bluetooth.rawValue.uppercased()) profile" }
            let parts = outputs.sorted { $0.rawValue < $1.rawValue }.map { "an \($0.rawValue) output" } + (input ? ["an input"] : [])
            return parts.isEmpty ? "nothing" : parts.joined(separator: " and ")
        }
    }

    /// The two families of a Bluetooth device's profiles a port needs: A2DP's sink for music,
    /// the hands-free unit's for a call (its SCO carries both ways).
    public enum BluetoothFamily: String, Sendable, Hashable {
        case a2dp
        case hfp

        /// The family a port of `type` needs, nil for a port that is not a Bluetooth A2DP or HFP one.
        public init?(_ type: PortType) {
            switch type {
            case .bluetoothA2DP: self = .a2dp
            case .bluetoothHFP: self = .hfp
            default: return nil
            }
        }

        /// Whether `profile` is of this family, by its name: PipeWire's bluez5 names
        /// (`a2dp-sink`, `a2dp-sink-aac`; `headset-head-unit`, `headset-head-unit-msbc`) and
        /// PulseAudio's (`a2dp_sink`; `handsfree_head_unit`, `headset_head_unit`). The computer as
        /// the sink (`a2dp-source`, `audio-gateway`) is never one: a port is the remote's.
        public func matches(_ profile: PipeWireProfile) -> Bool {
            let name = profile.name
            switch self {
            case .a2dp: return name.hasPrefix("a2dp-sink") || name.hasPrefix("a2dp_sink")
            case .hfp:
                return name.hasPrefix("headset-head-unit") || name.hasPrefix("headset_head_unit") || name.hasPrefix("handsfree_head_unit")
            }
        }
    }

    /// ACP's two families of output part a port needs.
    public enum OutputKind: String, Sendable, Hashable {
        case analog
        case hdmi

        /// The kind of a port's output: HDMI and DisplayPort are `hdmi-*` parts, the rest `analog-*`.
        public init(_ type: PortType) { self = type == .HDMI || type == .displayPort ? .hdmi : .analog }

        /// Whether an output part (`hdmi-stereo-extra1`, `analog-surround-51`) is of this kind.
        public func matches(_ part: Substring) -> Bool { part.hasPrefix(rawValue == "hdmi" ? "hdmi-" : "analog-") }
    }

    /// The route's ports on `device`: those whose ALSA PCM is on its card (`cards` turns a card
    /// id into its index), or, for a Bluetooth device, whose BlueALSA PCM names its address.
    public static func routePorts(on device: PipeWireDevice, route: RoutePorts, cards: [String: Int]) -> (outputs: [Port], inputs: [Port]) {
        let on: (Port) -> Bool
        if let address = device.bluetoothAddress {
            on = { port in
                guard case .bluealsa(let pcm)? = port.alsa else { return false }
                return pcm.address.uppercased() == address
            }
        } else if let card = device.card {
            on = { port in isOnCard(port, card: card, cards: cards) }
        } else {
            return ([], [])
        }
        return (route.outputs.filter(on), route.inputs.filter(on))
    }

    /// What `route` needs of card `card` (its index): its outputs and inputs whose ALSA PCM is on
    /// the card (`cards` turns a card id into its index).
    public static func needs(of route: RoutePorts, card: Int, cards: [String: Int]) -> Needs {
        func onCard(_ port: Port) -> Bool { isOnCard(port, card: card, cards: cards) }
        var needs = Needs()
        for port in route.outputs where onCard(port) { needs.outputs.insert(OutputKind(port.type)) }
        needs.input = route.inputs.contains(where: onCard)
        return needs
    }

    /// What the route's ports on a Bluetooth device need: HFP if any is HFP's, else A2DP if any
    /// is A2DP's (LE audio's ports have no profile to set).
    public static func bluetoothNeeds(outputs: [Port], inputs: [Port]) -> Needs {
        let families = Set((outputs + inputs).compactMap { BluetoothFamily($0.type) })
        var needs = Needs()
        needs.bluetooth = families.contains(.hfp) ? .hfp : families.first
        return needs
    }

    /// Whether `port`'s ALSA PCM is on card `card` (its index; `cards` turns a card id into one).
    static func isOnCard(_ port: Port, card: Int, cards: [String: Int]) -> Bool {
        port.alsa?.cardPCM.map { PipeWireNodeMapping.index(of: $0.card, cards: cards) == card } ?? false
    }

    /// Rule bestProfile's ranking: the highest priority, then the lowest index.
    static func best(_ profiles: [PipeWireProfile]) -> PipeWireProfile? {
        profiles.max { a, b in a.priority != b.priority ? a.priority < b.priority : a.index > b.index }
    }

    /// Whether `profile` makes what `needs` asks: a sink whose output part is of each kind asked
    /// (`strictKinds`: else any sink), a source when the route records.
    public static func serves(_ profile: PipeWireProfile, _ needs: Needs, strictKinds: Bool = true) -> Bool {
        if !needs.outputs.isEmpty {
            guard profile.sinks > 0 else { return false }
            if strictKinds && profile.isACP {
                for kind in needs.outputs where !profile.outputParts.contains(where: kind.matches) { return false }
            }
        }
        if needs.input && profile.sources == 0 { return false }
        return true
    }

    /// The profile for `device` under `route`: the rules in order, the first that decides.
    /// - Parameters:
    ///   - nodesPresent: whether every route port on the card has a node now (PipeWireNodeMapping).
    public static func choose(for device: PipeWireDevice, route: RoutePorts, cards: [String: Int], nodesPresent: Bool) -> CardProfileChoice {
        if let address = device.bluetoothAddress { return chooseBluetooth(for: device, address: address, route: route, cards: cards, nodesPresent: nodesPresent) }
        guard let card = device.card else { return CardProfileChoice(profile: nil, rule: .cardNotInRoute, reason: "the device names no ALSA card") }
        let needs = needs(of: route, card: card, cards: cards)
        // Rule cardNotInRoute.
        if needs.isEmpty { return CardProfileChoice(profile: nil, rule: .cardNotInRoute, reason: "the route has no port on card \(card)") }
        // Rule nodesPresent.
        if nodesPresent { return CardProfileChoice(profile: nil, rule: .nodesPresent, reason: "every route port on card \(card) has a node") }
        let active = device.activeProfile
        // Rule notACP: a UCM card's one profile (HiFi), or any profile not named output:…/input:….
        let named = device.profiles.filter { !$0.isNeverChosen }
        if !named.isEmpty && !named.contains(where: \.isACP) {
            return CardProfileChoice(profile: nil, rule: .notACP, reason: "card \(card)'s profiles are not ACP's (\(named.map(\.name).prefix(3).joined(separator: ", ")))")
        }
        let candidates = device.profiles.filter { $0.available != .no && !$0.isNeverChosen && $0.isACP }
        // The kinds are asked strictly when the card's profiles have output parts of each kind at
        // all, available or not: an unplugged HDMI is not stood in for by analog, but a USB card
        // without `analog-*` parts takes any profile with a sink.
        let offered = device.profiles.filter { !$0.isNeverChosen && $0.isACP }.flatMap(\.outputParts)
        let strict = needs.outputs.allSatisfy { kind in offered.contains(where: kind.matches) }
        // Rule activeServes.
        if let active, !active.isNeverChosen, active.available != .no, serves(active, needs, strictKinds: strict) {
            return CardProfileChoice(profile: nil, rule: .activeServes, reason: "the active profile \(active.summary) gives \(needs)")
        }
        // Rule bestProfile: the highest priority, then the lowest index.
        let best = best(candidates.filter { serves($0, needs, strictKinds: strict) })
        let was = active.map { "the active profile \($0.summary)" } ?? "no active profile"
        if let best {
            return CardProfileChoice(profile: best, rule: .bestProfile, reason: "\(was) does not give \(needs); the highest-priority available profile that does")
        }
        return CardProfileChoice(profile: nil, rule: .noProfileServes, reason: "\(was) does not give \(needs), and no available profile does")
    }

    /// The same rules for a Bluetooth device (PipeWire's bluez5 device, PulseAudio's bluez card):
    /// a profile serves when it is of the family the route's ports there need (A2DP for music,
    /// HFP while the route is a call's: the resolver decides which), and `notACP` does not apply.
    static func chooseBluetooth(for device: PipeWireDevice, address: String, route: RoutePorts, cards: [String: Int], nodesPresent: Bool) -> CardProfileChoice {
        let ports = routePorts(on: device, route: route, cards: cards)
        let needs = bluetoothNeeds(outputs: ports.outputs, inputs: ports.inputs)
        // Rule cardNotInRoute.
        guard let family = needs.bluetooth else {
            return CardProfileChoice(profile: nil, rule: .cardNotInRoute, reason: "the route has no A2DP or HFP port on Bluetooth device \(address)")
        }
        // Rule nodesPresent.
        if nodesPresent { return CardProfileChoice(profile: nil, rule: .nodesPresent, reason: "every route port on Bluetooth device \(address) has a node") }
        let active = device.activeProfile
        // Rule activeServes.
        if let active, active.available != .no, family.matches(active) {
            return CardProfileChoice(profile: nil, rule: .activeServes, reason: "the active profile \(active.summary) gives \(needs)")
        }
        // Rule bestProfile: the family's highest priority available profile, then the lowest index.
        let best = best(device.profiles.filter { $0.available != .no && family.matches($0) })
        let was = active.map { "the active profile \($0.summary)" } ?? "no active profile"
        if let best {
            return CardProfileChoice(profile: best, rule: .bestProfile, reason: "\(was) does not give \(needs); the highest-priority available profile that does")
        }
        return CardProfileChoice(profile: nil, rule: .noProfileServes, reason: "\(was) does not give \(needs), and no available profile does")
    }
}

/// Asks for each card's profile once, and stops when the server keeps setting it back (no loop
/// fighting the session manager): the daemon's memory of what it asked (docs/decisions.md,
/// "Card profiles"). A set-back is the card moved away from the profile asked, to one that does
/// not serve the route (the profile is needed again); a move to another profile that serves (the
/// user's choice, say) ends the matter (`settled`).
public struct CardProfileFollower: Sendable, Hashable {
    /// How many times the server may set a card back from the profile asked before AudioRoute stops asking.
    public static let maximumSetBacks = 2

    struct Record: Sendable, Hashable {
        var target: Int
        /// Asked, and the server's answer (the device's active profile changing) not seen yet.
        var awaiting = true
        /// Moved away from the target after it was reached or while it was asked.
        var movedAway = false
        var setBacks = 0
        var gaveUp = false
    }

    var records: [UInt32: Record] = [:]
    /// Each device's active profile as last seen.
    var actives: [UInt32: Int] = [:]

    public init() {}

    /// What to do about a profile the chooser wants.
    public enum Ask: Sendable, Hashable {
        /// Ask the server for it.
        case ask
        /// Nothing now: asked already, the server's answer not seen, or given up (said before).
        case wait
        /// The server set the card back `maximumSetBacks` times (or refused as often): not asked
        /// again; said once, here.
        case gaveUp(setBacks: Int)
    }

    /// The device as the server now has it (added or changed). A report without an active
    /// profile (the server between two) changes nothing.
    public mutating func deviceChanged(_ device: PipeWireDevice) {
        guard let active = device.active else { return }
        let previous = actives.updateValue(active, forKey: device.id)
        guard previous != active, var record = records[device.id], !record.gaveUp else { return }
        if active == record.target {
            record.awaiting = false
            record.movedAway = false
        } else {
            // Away from the target after it was asked or reached.
            record.awaiting = false
            record.movedAway = true
        }
        records[device.id] = record
    }

    /// The chooser keeps the device's active profile (it serves the route, or the route does not use
    /// the card): what was asked of it is forgotten, unless the active one is the profile asked.
    public mutating func settled(_ device: PipeWireDevice) {
        guard let record = records[device.id], device.active != record.target else { return }
        records[device.id] = nil
    }

    /// The device went away: forgotten.
    public mutating func deviceRemoved(_ id: UInt32) {
        records[id] = nil
        actives[id] = nil
    }

    /// A request for the device that failed: counted as a set-back (a refusal is not asked again and again).
    public mutating func requestFailed(device id: UInt32) {
        guard var record = records[id], !record.gaveUp else { return }
        record.awaiting = false
        record.movedAway = true
        records[id] = record
    }

    /// Whether to ask for `choice`'s profile on `device` now; remembers the request when so.
    public mutating func ask(_ choice: CardProfileChoice, device: PipeWireDevice) -> Ask {
        guard let profile = choice.profile, device.active != profile.index else { return .wait }
        guard var record = records[device.id], record.target == profile.index else {
            records[device.id] = Record(target: profile.index)
            return .ask
        }
        guard !record.gaveUp, !record.awaiting else { return .wait }
        if record.movedAway {
            record.movedAway = false
            record.setBacks += 1
            if record.setBacks >= Self.maximumSetBacks {
                record.gaveUp = true
                records[device.id] = record
                return .gaveUp(setBacks: record.setBacks)
            }
        }
        record.awaiting = true
        records[device.id] = record
        return .ask
    }

    /// Whether AudioRoute stopped asking for a profile on `device`.
    public func gaveUp(on device: UInt32) -> Bool { records[device]?.gaveUp ?? false }
}
