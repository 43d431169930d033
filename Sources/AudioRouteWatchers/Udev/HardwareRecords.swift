// Pure snapshots of what udev and evdev say about sound hardware. The event
// loop (the only code here that calls C) fills them in; classification and the
// port-set state work on them alone, so both can be unit-tested without udev.
import AudioRouteCore
import AudioRouteSystem

/// One PCM device of a card: `pcmC<n>D<m>p` (playback) or `pcmC<n>D<m>c` (capture).
public struct PCMDevice: Sendable, Hashable, Comparable {
    public var device: Int
    public var playback: Bool
    /// The PCM's sysfs `pcm_class` attribute (`generic`, `multi`, `modem`, `digitizer`), when read.
    public var pcmClass: String?
    /// The PCM's id, as the control device's PCM info gives it (`snd_pcm_info_get_id`, the first
    /// name `aplay -l` prints: `HDMI 0`, `ALC289 Analog`, `Jack Out (*)`), or a record's `id` attribute.
    public var id: String?
    /// The PCM's name (`snd_pcm_info_get_name`, the bracketed one in `aplay -l`: `HDMI 0`,
    /// `bcm2835 Headphones`; often empty on ASoC cards), when it was read.
    public var name: String?

    public init(device: Int, playback: Bool, pcmClass: String? = nil, id: String? = nil, name: String? = nil) {
        self.device = device
        self.playback = playback
        self.pcmClass = pcmClass
        self.id = id
        self.name = name
    }

    /// Parses a sysfs name such as `pcmC1D3p`; nil for anything else.
    public init?(sysname: String) {
        guard let (_, device, suffix) = Self.parse(sysname) else { return nil }
        self.device = device
        self.playback = suffix == "p"
    }

    static func parse(_ name: String) -> (card: Int, device: Int, suffix: Character)? {
        guard name.hasPrefix("pcmC"), let last = name.last, last == "p" || last == "c" else { return nil }
        let body = name.dropFirst(4).dropLast()
        let parts = body.split(separator: "D", omittingEmptySubsequences: false)
        guard parts.count == 2, let card = Int(parts[0]), let device = Int(parts[1]), card >= 0, device >= 0 else { return nil }
        return (card, device, last)
    }

    public static func < (a: PCMDevice, b: PCMDevice) -> Bool {
        a.device != b.device ? a.device < b.device : (a.playback && !b.playback)
    }
}

/// What the card's parent device says: the bus it hangs off and, for PCI, whether
/// it is the audio function of a graphics card (HDMI/DisplayPort audio).
public struct CardParent: Sendable, Hashable {
    /// The parent's subsystem: "usb", "pci", "platform", ... (nil if unknown).
    public var subsystem: String?
    /// The parent's kernel driver ("snd_hda_intel", "snd-usb-audio", "asoc-simple-card").
    public var driver: String?
    /// The PCI class of the parent function ("0x040300" for HDA audio).
    public var pciClass: String?
    /// True when function 0 of the same PCI device is a display controller (class 0x03xxxx).
    public var isGraphicsAudioFunction: Bool
    /// The PCI class of function 0 of the same PCI device (`0x030000`), when it was seen.
    public var function0Class: String?
    /// A platform parent's device-tree node name (`OF_NAME`: `hdmi`, `zynqmp_dp_snd_card`, `sound`).
    public var ofName: String?
    /// A platform parent's device-tree compatibles (`OF_COMPATIBLE_0...`: `brcm,bcm2711-hdmi0`, `xlnx,dp-snd-card`).
    public var ofCompatible: [String]

    public init(
        subsystem: String? = nil, driver: String? = nil, pciClass: String? = nil, isGraphicsAudioFunction: Bool = false,
        function0Class: String? = nil, ofName: String? = nil, ofCompatible: [String] = []
    ) {
        self.subsystem = subsystem
        self.driver = driver
        self.pciClass = pciClass
        self.isGraphicsAudioFunction = isGraphicsAudioFunction
        self.function0Class = function0Class
        self.ofName = ofName
        self.ofCompatible = ofCompatible
    }
}

/// One pin of an HDA codec, as its default configuration describes the wiring (the firmware's
/// word, `Pin Default 0x90170110: [Fixed] Speaker at Int N/A` in `/proc/asound/card<n>/codec#<m>`):
/// a fixed speaker or mic is built in, a jack is plugged into, an unconnected pin is not there.
public struct HDAPin: Sendable, Hashable {
    /// The codec's address on the HDA link (`codec#<m>`).
    public var codec: Int
    /// The pin widget's node id (`Node 0x14`).
    public var node: Int
    /// The 32-bit default configuration.
    public var defaultConfig: UInt32
    /// The pin's capabilities (`Pincap 0x...`), when the file gave them: whether it can sense
    /// what is plugged (presence detect, bit 2).
    public var capabilities: UInt32?

    public init(codec: Int = 0, node: Int, defaultConfig: UInt32, capabilities: UInt32? = nil) {
        self.codec = codec
        self.node = node
        self.defaultConfig = defaultConfig
        self.capabilities = capabilities
    }

    /// Port connectivity, bits 31:30 (HDA specification, 7.3.3.31).
    public enum Connectivity: Int, Sendable, Hashable {
        case jack = 0, none = 1, fixed = 2, both = 3
    }

    /// Default device, bits 23:20.
    public enum Device: Int, Sendable, Hashable {
        case lineOut = 0, speaker, headphoneOut, cd, spdifOut, digitalOtherOut, modemLineSide, modemHandsetSide
        case lineIn, aux, micIn, telephony, spdifIn, digitalOtherIn, reserved, other
    }

    public var connectivity: Connectivity { Connectivity(rawValue: Int(defaultConfig >> 30) & 0x3)! }
    public var device: Device { Device(rawValue: Int(defaultConfig >> 20) & 0xF)! }
    /// Location, bits 29:24 (`0x01` external rear, `0x02` external front, `0x10`–`0x1F` internal...).
    public var location: Int { Int(defaultConfig >> 24) & 0x3F }
}

/// One sound card as udev shows it at one moment.
public struct CardRecord: Sendable, Hashable {
    /// `/sys/devices/.../sound/card1`: the card's identity for the watcher's lifetime.
    public var syspath: String
    /// `card1`.
    public var sysname: String
    /// The card device's udev properties (ID_BUS, ID_PATH, ID_SERIAL, SOUND_FORM_FACTOR, AUDIOROUTE_*...).
    public var properties: [String: String]
    /// The card's sysfs attributes that matter: `id` and `number`.
    public var attributes: [String: String]
    /// Its PCM children, sorted.
    public var pcms: [PCMDevice]
    /// Whether its `controlC<n>` child exists. The kernel registers the control
    /// device last, so without it the card is still being set up (or torn down).
    public var hasControl: Bool
    public var parent: CardParent
    /// Faults found while reading it (non-UTF-8 values...), logged once each.
    public var faults: [String]
    /// What its control device says of it, when the control device could be read (nil: not read,
    /// as under umockdev or without permission).
    public var info: ALSACardInfo?
    /// The pins of its HDA codecs (empty: not an HDA card, or not read).
    public var hdaPins: [HDAPin]
    /// The PCM devices its `ELD` controls name (interface PCM, one per HDMI/DP stream: HDA's HDMI
    /// codecs and ASoC's hdmi-codec make them), ascending; empty when not read.
    public var eldDevices: [Int]
    /// The names of its `… Phantom Jack` controls (HDA makes one for each pin that cannot sense a
    /// plug: `Speaker Phantom Jack`, `Internal Mic Phantom Jack`); empty when not read.
    public var phantomJacks: [String]
    /// A USB card's widest playback format on each PCM device, by device number
    /// (`/proc/asound/card<n>/stream<m>`); empty when not USB or not read.
    public var usbPlayback: [Int: USBPlaybackFormat]
    /// Its `Capture Switch` control (the capture mute a mic-mute key and the mic-mute LED follow):
    /// on (any channel on) or off; nil when it has none, or it was not read.
    public var captureSwitch: Bool?
    /// The mixer switches the watcher was asked to follow on this card (a UCM profile's mute
    /// controls), by name: on (any channel on) or off. A name that is not on the card, or cannot
    /// be read, is absent.
    public var namedSwitches: [String: Bool]

    public init(
        syspath: String, sysname: String? = nil, properties: [String: String] = [:], attributes: [String: String] = [:],
        pcms: [PCMDevice] = [], hasControl: Bool = true, parent: CardParent = CardParent(), faults: [String] = [],
        info: ALSACardInfo? = nil, hdaPins: [HDAPin] = [], eldDevices: [Int] = [], phantomJacks: [String] = [],
        usbPlayback: [Int: USBPlaybackFormat] = [:], captureSwitch: Bool? = nil, namedSwitches: [String: Bool] = [:]
    ) {
        self.syspath = syspath
        self.sysname = sysname ?? String(syspath.split(separator: "/").last ?? "")
        self.properties = properties
        self.attributes = attributes
        self.pcms = pcms.sorted()
        self.hasControl = hasControl
        self.parent = parent
        self.faults = faults
        self.info = info
        self.hdaPins = hdaPins
        self.eldDevices = eldDevices
        self.phantomJacks = phantomJacks
        self.usbPlayback = usbPlayback
        self.captureSwitch = captureSwitch
        self.namedSwitches = namedSwitches
    }
}

/// Switch codes of the evdev EV_SW type (linux/input-event-codes.h), as a bit set.
public struct SwitchSet: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The set with the bit of switch `code` (0...31).
    public init(code: Int) { self.init(rawValue: code >= 0 && code < 32 ? 1 << UInt32(code) : 0) }

    public static let headphoneInsert = SwitchSet(code: 0x02)
    public static let microphoneInsert = SwitchSet(code: 0x04)
    public static let lineoutInsert = SwitchSet(code: 0x06)
    public static let jackPhysicalInsert = SwitchSet(code: 0x07)
    public static let videooutInsert = SwitchSet(code: 0x08)
    public static let lineinInsert = SwitchSet(code: 0x0d)

    /// The switches that say something about audio jacks.
    public static let jackSwitches: SwitchSet = [
        .headphoneInsert, .microphoneInsert, .lineoutInsert, .jackPhysicalInsert, .videooutInsert, .lineinInsert,
    ]

    public var description: String {
        let names: [(SwitchSet, String)] = [
            (.headphoneInsert, "headphone"), (.microphoneInsert, "microphone"), (.lineoutInsert, "lineout"),
            (.jackPhysicalInsert, "jackPhysical"), (.videooutInsert, "videoout"), (.lineinInsert, "linein"),
        ]
        let listed = names.filter { contains($0.0) }.map(\.1)
        return "[" + listed.joined(separator: ",") + "]"
    }
}

/// Where a jack's state is read from.
public enum JackSource: String, Sendable, Hashable {
    /// An evdev switch device below the card (`/dev/input/eventN`).
    case evdev
    /// A boolean `… Jack` element of the card's control device (`/dev/snd/controlC<n>`).
    case control
}

/// A jack of a sound card: an evdev switch device, or a `… Jack` control of the card.
/// Both sources describe one jack in the same terms (its switches); the classifier
/// merges them by kind, so one jack is one port whichever source reports it.
public struct JackRecord: Sendable, Hashable {
    /// The `eventN` device's syspath; for a control, the control device's syspath and
    /// `#numid` (`.../sound/card0/controlC0#12`).
    public var syspath: String
    /// The owning card's syspath.
    public var cardSyspath: String
    /// The input device's name ("HDA Intel PCH Headphone", "HDA Intel PCH HDMI/DP,pcm=3"),
    /// or the control's ("Headphone Jack", "HDMI/DP,pcm=3 Jack").
    public var name: String
    /// Properties of the input device (AUDIOROUTE_* may be set on it).
    public var properties: [String: String]
    /// The switches the device reports.
    public var supported: SwitchSet
    /// The switches that are on now (empty when `stateKnown` is false).
    public var state: SwitchSet
    /// False when the switch state could not be read (the device node is not readable or
    /// not there, as without the udev rule or in a static dump): only the udev `NAME` and
    /// `SW` bitmap are known.
    public var stateKnown: Bool
    public var source: JackSource

    public init(
        syspath: String, cardSyspath: String, name: String, properties: [String: String] = [:], supported: SwitchSet, state: SwitchSet,
        stateKnown: Bool = true, source: JackSource = .evdev
    ) {
        self.source = source
        self.syspath = syspath
        self.cardSyspath = cardSyspath
        self.name = name
        self.properties = properties
        self.supported = supported
        self.state = stateKnown ? state : []
        self.stateKnown = stateKnown
    }

    /// The PCM device an HDMI/DP jack stands for (`...,pcm=3`), if the name says.
    public var hdmiPCM: Int? {
        guard isVideoJack else { return nil }
        guard let range = name.firstRange(ofText: "pcm=") else { return nil }
        let digits = name[range.upperBound...].prefix { $0.isASCII && $0.isNumber }
        return Int(digits)
    }

    /// Whether the name says HDMI or DisplayPort (`HDA NVidia HDMI/DP,pcm=3`, `vc4-hdmi-0 HDMI Jack`).
    public var isVideoJack: Bool {
        name.contains(text: "HDMI") || name.contains(text: "DP,pcm=") || name.hasSuffix(" DP Jack") || name.contains(text: "DisplayPort")
    }

    /// The switch bitmap udev's input builtin exports as `SW=` on the input device
    /// (hex words, most significant first: `140` is SW_LINEOUT_INSERT | SW_VIDEOOUT_INSERT).
    public static func switches(fromUdevBitmap raw: String) -> SwitchSet? {
        let words = raw.split(separator: " ")
        guard let last = words.last, let value = UInt64(last, radix: 16) else { return nil }
        return SwitchSet(rawValue: UInt32(truncatingIfNeeded: value))
    }
}

/// What the event loop reports. Snapshots, not deltas: the state diffs them.
public enum HardwareEvent: Sendable, Hashable {
    /// A card appeared or changed (or one of its PCM/control children did).
    case card(CardRecord)
    /// A card went away.
    case cardRemoved(syspath: String, action: String)
    /// A jack switch device appeared (or was seen again) with its current state.
    case jack(JackRecord)
    /// A jack switch device's state after an EV_SW ... SYN_REPORT burst.
    case jackState(syspath: String, state: SwitchSet)
    /// A jack switch device went away.
    case jackRemoved(syspath: String)
    /// Something odd the loop saw and dropped; logged once per key.
    case fault(key: String, message: String)
    /// A UCM card's helper announced the card's ports (nil: it failed or ended; the card's
    /// ports are udev's again). Only for a card in `UdevPortState.ucmCandidates`.
    case ucm(syspath: String, card: UCMCard?)
    /// The initial enumeration is complete.
    case enumerated
    /// The monitor's receive buffer overflowed (ENOBUFS): uevents were lost. These are
    /// every card and jack present now, re-enumerated after the overflow; they replace
    /// what the events had built.
    case resynced(cards: [CardRecord], jacks: [JackRecord])
}

extension HardwareEvent {
    /// Whether the event can change the set of cards (or a UCM card's helper state).
    var changesCards: Bool {
        switch self {
        case .card, .cardRemoved, .resynced, .ucm: true
        case .jack, .jackState, .jackRemoved, .fault, .enumerated: false
        }
    }
}
