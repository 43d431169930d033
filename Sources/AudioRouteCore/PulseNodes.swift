// PulseAudio's sinks, sources and streams as the PipeWire helper protocol's nodes (docs/daemon.md,
// "The PulseAudio helper"): `audioroute-pulse` reports them so, and PipeWireNodeMapping maps a
// port to one unchanged. Pure: the properties come from PulseAudio's modules (module-alsa-card's
// alsa-util.c and alsa-sink.c, module-bluez5-device.c), under the names PipeWire's nodes use.

/// The four kinds of PulseAudio object reported, each with indices of its own.
public enum PulseFacility: Int32, Sendable, CaseIterable {
    case sink = 0, source = 1, sinkInput = 2, sourceOutput = 3

    /// The media class a PipeWire node of this kind has.
    public var mediaClass: String {
        switch self {
        case .sink: "Audio/Sink"
        case .source: "Audio/Source"
        case .sinkInput: "Stream/Output/Audio"
        case .sourceOutput: "Stream/Input/Audio"
        }
    }

    /// The largest index kept apart from the other kinds': the two top bits of a node id are the kind.
    public static let maximumIndex: UInt32 = (1 << 30) - 1

    /// The node id for this kind's `index` (sinks keep their index, sources have bit 30, sink
    /// inputs bit 31, source outputs both), or nil past `maximumIndex`.
    public func nodeID(_ index: UInt32) -> UInt32? {
        index <= Self.maximumIndex ? UInt32(rawValue) << 30 | index : nil
    }
}

/// PulseAudio's properties as PipeWireNode's keys (docs/daemon.md, "The PulseAudio helper"):
/// what PulseAudio's ALSA and BlueZ modules set, under the names the PipeWire mapping reads.
public enum PulseProperties {
    /// The node for an object of `facility`: `name` is a sink's or source's name (node.name),
    /// `value` a property of the object's proplist.
    public static func node(id: UInt32, facility: PulseFacility, name: String?, value: (String) -> String?) -> PipeWireNode {
        var all: [(key: String, value: String)] = [("media.class", facility.mediaClass)]
        if let name { all.append(("node.name", name)) }
        func copy(_ from: String, as key: String) {
            if let text = value(from) { all.append((key, text)) }
        }
        copy("device.description", as: "node.description")
        switch facility {
        case .sink, .source:
            let api = value("device.api")
            copy("device.api", as: "device.api")
            copy("alsa.card", as: "alsa.card")
            copy("alsa.device", as: "alsa.device")
            // An ALSA sink's PCM (`front:0`, `hw:1,0`); a BlueZ sink's device string is its address.
            if api == "alsa" { copy("device.string", as: "api.alsa.path") }
            if api == "bluez" {
                copy("device.string", as: "api.bluez5.address")
                copy("bluetooth.protocol", as: "api.bluez5.profile")
            }
        case .sinkInput, .sourceOutput:
            copy("media.role", as: "media.role")
            copy("application.name", as: "application.name")
            copy("application.process.id", as: "application.process.id")
        }
        return PipeWireNode(id: id, selecting: all)
    }
}

/// One profile of a PulseAudio card as libpulse gives it (pa_card_profile_info2).
public struct PulseCardProfile: Sendable, Hashable {
    public var name: String
    public var description: String
    public var sinks: UInt32
    public var sources: UInt32
    public var priority: UInt32
    /// libpulse's `available`: false when the server knows the profile useless now; true says
    /// only that it knows no reason why it would be (not PipeWire's "yes").
    public var available: Bool

    public init(name: String, description: String = "", sinks: UInt32 = 0, sources: UInt32 = 0, priority: UInt32 = 0, available: Bool = true) {
        self.name = name
        self.description = description
        self.sinks = sinks
        self.sources = sources
        self.priority = priority
        self.available = available
    }
}

extension PulseProperties {
    /// The protocol's device for a PulseAudio card (module-alsa-card's or module-bluez5-device's),
    /// or nil for another. module-alsa-card's card has `alsa.card` and no `device.api` (its sinks
    /// have one): an ALSA card is one with `alsa.card` whose `device.api`, if any, is `alsa`. A
    /// BlueZ card has `device.api` `bluez` and the remote's address as `device.string`: it is
    /// reported as PipeWire's bluez5 device is (`api.bluez5.address`). Its id is the card's index (devices
    /// have ids of their own in the protocol); a profile's index is its position in `profiles`
    /// as libpulse listed them, so that a request names the same profile while the card exists.
    /// A profile with an empty name or a text over `PipeWireProfile.maximumTextLength` is left
    /// out (its position is not reused); `active` is a position in `profiles`.
    public static func device(index: UInt32, name: String, profiles: [PulseCardProfile], active: Int?, value: (String) -> String?) -> PipeWireDevice? {
        var all: [(key: String, value: String)]
        if value("device.api") == "bluez" {
            // module-bluez5-device's card: its device string is the remote's address.
            guard let address = value("device.string") else { return nil }
            all = [("device.api", "bluez5"), ("api.bluez5.address", address)]
        } else {
            guard value("alsa.card") != nil, (value("device.api") ?? "alsa") == "alsa" else { return nil }
            all = [("device.api", "alsa")]
            if let card = value("alsa.card") { all.append(("alsa.card", card)) }
        }
        if !name.isEmpty { all.append(("device.name", name)) }
        if let text = value("device.description") { all.append(("device.description", text)) }
        var kept: [PipeWireProfile] = []
        for (position, profile) in profiles.prefix(PipeWireDevice.maximumProfiles).enumerated() {
            guard !profile.name.isEmpty, profile.name.utf8.count <= PipeWireProfile.maximumTextLength,
                profile.description.utf8.count <= PipeWireProfile.maximumTextLength
            else { continue }
            kept.append(
                PipeWireProfile(
                    index: position, name: profile.name, description: profile.description, priority: Int(min(profile.priority, UInt32(Int32.max))),
                    available: profile.available ? .unknown : .no, sinks: Int(min(profile.sinks, 1024)), sources: Int(min(profile.sources, 1024))))
        }
        let activeIndex = active.flatMap { position in kept.contains { $0.index == position } ? position : nil }
        return PipeWireDevice(id: index, selecting: all, profiles: kept, active: activeIndex)
    }
}
