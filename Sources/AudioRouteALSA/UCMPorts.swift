// Ports from a card's ALSA UCM configuration (docs/ucm.md): a pure mapping from
// what UCMReader reads (verbs, devices, their values) to AudioRouteCore ports.
// No libasound here, so it is tested on plain values as well as on real files.
import AudioRouteCore

/// One UCM device of one verb, as `snd_use_case_get` gives it.
public struct UCMDevice: Sendable, Hashable {
    /// The device's name ("Speaker", "Earpiece", "HeadsetMic").
    public var name: String
    /// The configuration's comment ("Internal speaker").
    public var comment: String
    /// The device's values (`PlaybackPCM`, `CapturePCM`, `JackControl`,
    /// `PlaybackPriority`, …), as substituted by libasound.
    public var values: [String: String]

    public init(name: String, comment: String = "", values: [String: String] = [:]) {
        self.name = name
        self.comment = comment
        self.values = values
    }

    /// The PCM to play to, when the device plays.
    public var playbackPCM: String? { values["PlaybackPCM"] }
    /// The PCM to record from, when the device records.
    public var capturePCM: String? { values["CapturePCM"] }
    /// The ALSA control that tells whether the device is plugged in (`… Jack`);
    /// nil for built-in devices, which are always there.
    public var jackControl: String? { values["JackControl"] }
}

/// One UCM verb ("HiFi", "Voice Call") and its devices, in the configuration's order.
public struct UCMVerb: Sendable, Hashable {
    public var name: String
    public var comment: String
    public var devices: [UCMDevice]

    public init(name: String, comment: String = "", devices: [UCMDevice]) {
        self.name = name
        self.comment = comment
        self.devices = devices
    }
}

/// A card's UCM configuration as read: its verbs in order.
public struct UCMConfiguration: Sendable, Hashable {
    /// The name the configuration was opened with ("hw:PinePhone").
    public var card: String
    public var verbs: [UCMVerb]

    public init(card: String, verbs: [UCMVerb]) {
        self.card = card
        self.verbs = verbs
    }

    /// The verb named `name`, if the configuration has it.
    public func verb(_ name: String) -> UCMVerb? { verbs.first { $0.name == name } }
}

/// One of several UCM devices behind one port (e.g. a phone's two built-in mics).
public struct UCMDataSource: Sendable, Hashable {
    /// The UCM device's name ("Mic1").
    public var device: String
    /// The PCM it is read from.
    public var alsa: String
    /// Its `CapturePriority` / `PlaybackPriority`, when the configuration gives one.
    public var priority: Int?
}

/// A port made from UCM devices, with what UCM needs to route to it later.
public struct UCMPort: Sendable, Hashable {
    public var port: Port
    /// The UCM devices to enable for this port, highest priority first: one,
    /// or several data sources of one built-in mic.
    public var dataSources: [UCMDataSource]
    /// The jack control that gives the port's availability; nil means always available.
    public var jackControl: String?
}

/// The mapping from UCM device names to port types (issue 19, item 3).
public enum UCMPortMapping {
    /// The port type of the UCM device `name` in `direction`, or nil for a
    /// device this mapping does not cover (HDMI, Line, modem links, …).
    /// The names are alsa-ucm-conf's (ucm2/DEVICE.md lists the standard ones)
    /// plus the PinePhone's own ("Headphone", "DigitalMic", "HeadsetMic").
    /// A mic device with a jack control is not built in: HDA and SOF laptops
    /// name their combo jack's mic "Mic" (JackControl "Mic Jack").
    public static func portType(
        device name: String, direction: PortDirection, jackControl: String? = nil
    ) -> PortType? {
        let type = nameType(device: name, direction: direction)
        return type == .builtInMic && jackControl != nil ? .headsetMic : type
    }

    private static func nameType(device name: String, direction: PortDirection) -> PortType? {
        switch (name, direction) {
        case ("Earpiece", .output), ("Handset", .output): return .builtInReceiver
        case ("Speaker", .output): return .builtInSpeaker
        case ("Headphones", .output), ("Headphone", .output), ("Headset", .output): return .headphones
        case ("Headset", .input), ("HeadsetMic", .input): return .headsetMic
        case ("Mic", .input), ("Mic1", .input), ("Mic2", .input), ("DigitalMic", .input), ("Handset", .input):
            return .builtInMic
        default: return nil
        }
    }

    /// The ports of `verb` on `card`: one per mapped device and direction,
    /// except that every built-in mic of the verb becomes one `builtInMic`
    /// port whose data sources are those devices, highest priority first.
    /// The port's ALSA name is the device's PlaybackPCM or CapturePCM; a device
    /// without the PCM for a direction gives no port in that direction. Its name is the
    /// device's comment ("Internal speaker"), or the device's name when it has none (the
    /// merged mic: its first data source's).
    public static func ports(card: String, verb: UCMVerb) -> [UCMPort] {
        func name(_ device: String) -> String {
            let comment = verb.devices.first { $0.name == device }?.comment ?? ""
            return comment.isEmpty ? device : comment
        }
        var ports: [UCMPort] = []
        var mics: [UCMDataSource] = []
        for device in verb.devices {
            for (direction, pcm, priorityKey) in [
                (PortDirection.output, device.playbackPCM, "PlaybackPriority"),
                (PortDirection.input, device.capturePCM, "CapturePriority"),
            ] {
                guard let pcm,
                    let type = portType(device: device.name, direction: direction, jackControl: device.jackControl)
                else { continue }
                let source = UCMDataSource(
                    device: device.name, alsa: pcm, priority: device.values[priorityKey].flatMap { Int($0) })
                if type == .builtInMic {
                    mics.append(source)
                    continue
                }
                let port = Port(
                    uid: "ucm:\(card):\(device.name):\(direction.rawValue)", type: type, device: "ucm:\(card)",
                    name: name(device.name), direction: direction, alsa: pcm)
                ports.append(UCMPort(port: port, dataSources: [source], jackControl: device.jackControl))
            }
        }
        if !mics.isEmpty {
            // A stable sort: equal priorities keep the configuration's order.
            let sorted = mics.enumerated().sorted {
                let (a, b) = ($0.element.priority ?? Int.min, $1.element.priority ?? Int.min)
                return a != b ? a > b : $0.offset < $1.offset
            }.map(\.element)
            let port = Port(
                uid: "ucm:\(card):builtInMic", type: .builtInMic, device: "ucm:\(card)", name: name(sorted[0].device),
                direction: .input, alsa: sorted[0].alsa)
            // Built-in: no jack control (a mic with one became a headsetMic above).
            ports.append(UCMPort(port: port, dataSources: sorted, jackControl: nil))
        }
        return ports
    }
}
