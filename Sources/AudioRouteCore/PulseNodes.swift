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
