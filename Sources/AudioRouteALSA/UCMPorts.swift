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
    /// The PCM it is read from, as another process opens it (`UCMPortMapping.sharedPCM`).
    public var alsa: ALSADevice
    /// Its `CapturePriority` / `PlaybackPriority`, when the configuration gives one.
    public var priority: Int?
    /// A built-in mic's mute: its `CaptureSwitch` as a mixer element's name
    /// (`UCMControlName.mixerElement`), when the profile names one that can be followed.
    public var captureSwitch: String? = nil
}

/// A port made from UCM devices, with what UCM needs to route to it later.
public struct UCMPort: Sendable, Hashable {
    public var port: Port
    /// The UCM devices to enable for this port, highest priority first: one,
    /// or several data sources of one built-in mic.
    public var dataSources: [UCMDataSource]
    /// The jack control that gives the port's availability; nil means always available.
    public var jackControl: String?
    /// The profile's priority for the port (its first data source's), when it gives one.
    public var priority: Int? { dataSources.first?.priority }
}

/// The mapping from UCM device names to port types.
public enum UCMPortMapping {
    /// The port type of the UCM device `name` in `direction`, or nil for a device this
    /// mapping does not cover (Bluetooth, USB, Direct, modem links, …).
    /// The names are alsa-lib's standard ones (use-case.h: Speaker, Line, Mic, Headphones,
    /// Headset, Handset, Earpiece, SPDIF, HDMI), each with an optional number suffix
    /// ("HDMI1", "Line 2", "Mic2"), plus the PinePhone's own ("Headphone", "DigitalMic",
    /// "HeadsetMic"). A mic device with a jack control is not built in: HDA and SOF laptops
    /// name their combo jack's mic "Mic" or "Mic2" (JackControl "Mic Jack").
    public static func portType(
        device name: String, direction: PortDirection, jackControl: String? = nil
    ) -> PortType? {
        let type = baseType(split(name).base, direction: direction)
        return type == .builtInMic && jackControl != nil ? .headsetMic : type
    }

    private static func baseType(_ base: String, direction: PortDirection) -> PortType? {
        switch (base, direction) {
        case ("Earpiece", .output), ("Handset", .output): return .builtInReceiver
        case ("Speaker", .output): return .builtInSpeaker
        case ("Headphones", .output), ("Headphone", .output), ("Headset", .output): return .headphones
        case ("Headset", .input), ("HeadsetMic", .input): return .headsetMic
        case ("Mic", .input), ("DigitalMic", .input), ("Handset", .input): return .builtInMic
        // A line jack, or S/PDIF: a line-level output or input (iOS has no digital-out type).
        case ("Line", .output), ("SPDIF", .output): return .lineOut
        case ("Line", .input), ("SPDIF", .input): return .lineIn
        // UCM names DisplayPort outputs HDMI too.
        case ("HDMI", .output): return .HDMI
        default: return nil
        }
    }

    /// A device name without its number suffix (alsa-lib's use-case.h: "HDMI1", "Line 1" and
    /// "Line1" are numbered devices of one kind).
    public static func split(_ name: String) -> (base: String, number: Int?) {
        let digits = name.reversed().prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count < name.count else { return (name, nil) }
        var base = String(name.dropLast(digits.count))
        if base.hasSuffix(" ") { base.removeLast() }
        return (base, Int(String(digits.reversed())))
    }

    /// The PCM as another process opens it. A profile with its own alsa-lib configuration
    /// (ucm2/lib/generic.conf, which the stock ucm.conf includes) gets its PCM values prefixed
    /// by libasound (`_ucm0001.hw:sofhdadsp,6`): a name that only the process holding the UCM
    /// manager can open. The generic configuration's `hw` is the kernel's, so the prefix is
    /// dropped from an `hw:` name; any other PCM behind the prefix (a profile's own split or
    /// remapped PCM) is nil: no other process can open it.
    public static func sharedPCM(_ pcm: String) -> String? {
        guard pcm.hasPrefix("_ucm") else { return pcm }
        guard let dot = pcm.firstIndex(of: "."), pcm[pcm.index(after: dot)...].hasPrefix("hw:") else { return nil }
        return String(pcm[pcm.index(after: dot)...])
    }

    /// A built-in mic's `CaptureSwitch`, as the element the card's control device has (a plain
    /// name, or UCM's `name='…'` id on the mixer interface, index 0); nil, with a note, when it
    /// cannot be followed: not a bounded printable name, another element id, or on a control
    /// device that is not the card's own (`CaptureCTL` other than `hw:`).
    static func captureSwitch(_ device: UCMDevice, verb: String, notes: inout [String]) -> String? {
        guard let raw = device.values["CaptureSwitch"] else { return nil }
        if let ctl = device.values["CaptureCTL"], !(sharedPCM(ctl)?.hasPrefix("hw:") ?? false) {
            notes.append("\(verb)/\(device.name): CaptureSwitch on control device \(ctl), not the card's: its mute is not followed")
            return nil
        }
        switch UCMControlName.mixerElement(raw) {
        case .success(let name): return name
        case .failure(let fault):
            let shown = raw.utf8.count > 64 || !raw.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) ? "" : " \"\(raw)\""
            notes.append("\(verb)/\(device.name): CaptureSwitch\(shown) is \(fault): its mute is not followed")
            return nil
        }
    }

    /// The ports of `verb` on `card`: one per mapped device and direction, except that every
    /// built-in mic of the verb becomes one `builtInMic` port whose data sources are those
    /// devices, highest priority first. The port's ALSA name is the device's PlaybackPCM or
    /// CapturePCM (`sharedPCM`); a device without the PCM for a direction gives no port in
    /// that direction, and one whose PCM no other process can open gives a note instead. Its
    /// name is the device's comment ("Internal speaker"), or the device's name when it has
    /// none (the merged mic: its first data source's).
    public static func ports(card: String, verb: UCMVerb) -> [UCMPort] {
        var notes: [String] = []
        return ports(card: card, verb: verb, notes: &notes)
    }

    /// `ports(card:verb:)`, appending to `notes` why a device with a PCM gave no port.
    public static func ports(card: String, verb: UCMVerb, notes: inout [String]) -> [UCMPort] {
        func name(_ device: String) -> String {
            let comment = verb.devices.first { $0.name == device }?.comment ?? ""
            return comment.isEmpty ? device : comment
        }
        var ports: [UCMPort] = []
        var mics: [UCMDataSource] = []
        for device in verb.devices {
            var mapped = false
            for (direction, raw, priorityKey) in [
                (PortDirection.output, device.playbackPCM, "PlaybackPriority"),
                (PortDirection.input, device.capturePCM, "CapturePriority"),
            ] {
                guard let raw, let type = portType(device: device.name, direction: direction, jackControl: device.jackControl) else { continue }
                mapped = true
                guard let shared = sharedPCM(raw) else {
                    notes.append("\(verb.name)/\(device.name): \(direction.rawValue) PCM \(raw) is the profile's own alsa-lib PCM, which only its UCM manager's process can open: no port")
                    continue
                }
                // The profile's word, kept byte for byte where it is not a card's or BlueALSA's PCM.
                let pcm: ALSADevice
                do { pcm = try ALSADevice(parsing: shared) } catch {
                    notes.append("\(verb.name)/\(device.name): \(direction.rawValue) PCM refused: \(error): no port")
                    continue
                }
                let source = UCMDataSource(device: device.name, alsa: pcm, priority: device.values[priorityKey].flatMap { Int($0) })
                if type == .builtInMic {
                    var mic = source
                    mic.captureSwitch = captureSwitch(device, verb: verb.name, notes: &notes)
                    mics.append(mic)
                    continue
                }
                let port = Port(
                    uid: "ucm:\(card):\(device.name):\(direction.rawValue)", type: type, device: "ucm:\(card)",
                    name: name(device.name), direction: direction, alsa: pcm)
                ports.append(UCMPort(port: port, dataSources: [source], jackControl: device.jackControl))
            }
            if !mapped, device.playbackPCM != nil || device.capturePCM != nil {
                notes.append("\(verb.name)/\(device.name): no port type for this device")
            }
        }
        if !mics.isEmpty {
            // A stable sort: equal priorities keep the configuration's order.
            let sorted = mics.enumerated().sorted {
                let (a, b) = ($0.element.priority ?? Int.min, $1.element.priority ?? Int.min)
                return a != b ? a > b : $0.offset < $1.offset
            }.map(\.element)
            // Each mic is a data source of the port (docs/ucm.md): its device, comment and PCM.
            let port = Port(
                uid: "ucm:\(card):builtInMic", type: .builtInMic, device: "ucm:\(card)", name: name(sorted[0].device),
                direction: .input, alsa: sorted[0].alsa,
                dataSources: sorted.prefix(DataSource.maximumPerPort).map { DataSource(id: $0.device, name: name($0.device), alsa: $0.alsa) })
            // Built-in: no jack control (a mic with one became a headsetMic above).
            ports.append(UCMPort(port: port, dataSources: sorted, jackControl: nil))
        }
        return ports
    }
}
