// The ALSA PCM a port opens, as a value: which plugin, which card, which device, how shared.
// Watchers build it from what they read; it becomes text only where it leaves the program
// (the route file, JSON, the D-Bus API), and text from outside (a UCM profile, a udev
// property, JSON, a scenario) is parsed once, where it comes in (docs/ports.md, "The name as
// a value").

/// The ALSA PCM a port opens.
///
/// Its text form (`description`) is the PCM name as alsa-lib takes it: `dmix:CARD=PCH,DEV=0`,
/// `bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp`, or a name of someone else's (`default`, a
/// UCM profile's `plughw:…`). Parsing any text and rendering it gives the same bytes back.
/// Two devices are equal when their text forms are: alsa-lib opens what the text says.
public enum ALSADevice: Sendable, Hashable, CustomStringConvertible {
    /// A PCM device of a sound card, through one of alsa-lib's plugins for cards.
    case card(ALSACardPCM)
    /// A Bluetooth device's PCM, through BlueALSA's plugin.
    case bluealsa(BlueALSAPCM)
    /// A PCM this program does not take apart (an administrator's `AUDIOROUTE_ALSA_PCM`, a UCM
    /// profile's own name, `default`), passed on as it was given, byte for byte.
    case named(String)

    /// The longest PCM name accepted from outside, in UTF-8 bytes: checked before the text is
    /// read, so that input of any size costs no more than this.
    public static let maxLength = 256

    /// The PCM name as alsa-lib takes it.
    public var description: String {
        switch self {
        case .card(let pcm): pcm.description
        case .bluealsa(let pcm): pcm.description
        case .named(let name): name
        }
    }

    /// The PCM name as alsa-lib takes it (`description`).
    public var alsaName: String { description }

    /// Parses a PCM name that comes from outside. Names of a card's PCM (`hw`, `plughw`, `dmix`,
    /// `dsnoop` and `hdmi` with a card) and BlueALSA's are taken apart; any other name is kept
    /// as it is (`named`). The result renders `text` exactly.
    /// - Throws: `ALSADeviceError` when `text` is empty, longer than `maxLength` bytes, or holds
    ///   a control character: no PCM has such a name, and a newline would end the route file's
    ///   string.
    public init(parsing text: String) throws(ALSADeviceError) {
        let bytes = text.utf8.count
        guard bytes > 0 else { throw .empty }
        guard bytes <= Self.maxLength else { throw .tooLong(bytes: bytes) }
        if let offset = text.utf8.firstIndex(where: { $0 < 0x20 || $0 == 0x7F }).map({ text.utf8.distance(from: text.utf8.startIndex, to: $0) }) {
            throw .controlCharacter(offset: offset)
        }
        if let pcm = ALSACardPCM(text) {
            self = .card(pcm)
        } else if let pcm = BlueALSAPCM(text) {
            self = .bluealsa(pcm)
        } else {
            self = .named(text)
        }
    }

    /// The card PCM, when this is one.
    public var cardPCM: ALSACardPCM? {
        if case .card(let pcm) = self { return pcm }
        return nil
    }

    /// The card whose PCM this is, when it is a card's PCM.
    public var card: ALSACard? { cardPCM?.card }

    /// Whether several streams can play (or record) at once through it: dmix and dsnoop.
    public var isShared: Bool { cardPCM?.plugin.isShared ?? false }

    public static func == (a: ALSADevice, b: ALSADevice) -> Bool { a.description == b.description }
    public func hash(into hasher: inout Hasher) { hasher.combine(description) }
}

/// Why a text is no PCM name.
public enum ALSADeviceError: Error, Sendable, Hashable, CustomStringConvertible {
    case empty
    case tooLong(bytes: Int)
    case controlCharacter(offset: Int)

    public var description: String {
        switch self {
        case .empty: "empty ALSA PCM name"
        case .tooLong(let bytes): "ALSA PCM name of \(bytes) bytes, longer than \(ALSADevice.maxLength)"
        case .controlCharacter(let offset): "control character in ALSA PCM name at byte \(offset)"
        }
    }
}

extension ALSADevice: ExpressibleByStringLiteral {
    /// A name written in the code: parsed as text from outside is; a literal the parser
    /// refuses (empty, a control character) is kept as it is, for the writer of the route
    /// file to refuse in its turn.
    public init(stringLiteral value: String) {
        self = (try? ALSADevice(parsing: value)) ?? .named(value)
    }
}

extension ALSADevice: Codable {
    /// Decodes the text form; a text that is no PCM name is an error naming the fault.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            self = try ALSADevice(parsing: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    /// Encodes the text form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// A sound card, as a PCM name names it.
public enum ALSACard: Sendable, Hashable, CustomStringConvertible {
    /// The card's id (`PCH`, `sofhdadsp`): stable when cards are renumbered.
    case id(String)
    /// The card's index (`0`, `1`): a fallback when the id is unusable.
    case index(Int)

    /// The card as a PCM name's argument: its id, or its index in decimal.
    public var description: String {
        switch self {
        case .id(let id): id
        case .index(let index): String(index)
        }
    }
}

/// A PCM device of a sound card through one of alsa-lib's plugins: `dmix:CARD=PCH,DEV=0`,
/// `dsnoop:1,0`, `hw:PinePhone,0`, `dmix:CARD=Audio,DEV=0,CHANNELS=8`.
public struct ALSACardPCM: Sendable, Hashable, CustomStringConvertible {
    /// The plugin the PCM is opened through, as the name's prefix says.
    public enum Plugin: String, Sendable, Hashable, CaseIterable {
        /// The device itself, one stream, its own formats.
        case hw
        /// The device, one stream, any format (converted).
        case plughw
        /// Shared playback: several streams mixed (alsa-lib's `pcm/dmix.conf`).
        case dmix
        /// Shared capture: several readers of one stream (`pcm/dsnoop.conf`).
        case dsnoop
        /// alsa-lib's IEC958 PCM for a card that takes only IEC958 subframes, one stream.
        case hdmi

        /// Whether several streams play or record at once through it.
        public var isShared: Bool { self == .dmix || self == .dsnoop }
    }

    /// How the card and device are written: `CARD=<card>,DEV=<n>` or `<card>,<n>` (`CHANNELS=`
    /// has no place of its own: always a keyword).
    public enum Arguments: Sendable, Hashable {
        case keywords
        case positional
    }

    public let plugin: Plugin
    public let card: ALSACard
    /// The PCM device number; nil: not said (alsa-lib's default, 0).
    public let device: Int?
    /// dmix's channel count (`CHANNELS=`); nil: not said (alsa-lib's default, 2).
    public let channels: Int?
    public let arguments: Arguments
    /// Arguments beyond the card, device and channels (`SUBDEV=1`, `RATE=48000`, a third
    /// positional one), as written: passed on, not read.
    public let otherArguments: [String]
    /// The text this was parsed from, where the value alone would render it otherwise (a
    /// quoted card, arguments in another order): the outside's own word, kept.
    private let spelling: String?

    /// A card's PCM. `channels` is written as `CHANNELS=`, after the device.
    public init(
        plugin: Plugin, card: ALSACard, device: Int?, channels: Int? = nil, arguments: Arguments = .keywords, otherArguments: [String] = []
    ) {
        self.plugin = plugin
        self.card = card
        self.device = device
        self.channels = channels
        self.arguments = arguments
        self.otherArguments = otherArguments
        spelling = nil
    }

    /// The PCM device number alsa-lib opens: `device`, else 0.
    public var deviceNumber: Int { device ?? 0 }

    /// The same card and device through `plugin`, written with keywords (`CARD=…,DEV=…`); the
    /// channel count is dmix's and stays only on dmix; other arguments are left behind.
    public func through(_ plugin: Plugin) -> ALSACardPCM {
        ALSACardPCM(plugin: plugin, card: card, device: deviceNumber, channels: plugin == .dmix ? channels : nil)
    }

    public var description: String { spelling ?? rendered }

    private var rendered: String {
        var words: [String]
        switch arguments {
        case .keywords: words = ["CARD=\(card)"] + (device.map { ["DEV=\($0)"] } ?? [])
        case .positional: words = [card.description] + (device.map { [String($0)] } ?? [])
        }
        if let channels { words.append("CHANNELS=\(channels)") }
        words += otherArguments
        return plugin.rawValue + ":" + words.joined(separator: ",")
    }

    /// Takes apart `<plugin>:<arguments>`, where the arguments are a card (`CARD=<card>` or the
    /// first positional one, in double quotes or not), a device (`DEV=<n>` or the second) and
    /// `CHANNELS=<c>` (dmix only), each at most once; any further argument is kept as written
    /// (`otherArguments`). nil for anything else (another plugin, no card, a card or device
    /// said twice, a device that is no number): a name to keep whole.
    init?(_ text: String) {
        guard let colon = text.firstIndex(of: ":"), let plugin = Plugin(rawValue: String(text[..<colon])) else { return nil }
        var card: Substring?
        var device: Int?
        var channels: Int?
        var cardPositional = false
        var others: [String] = []
        for (position, argument) in text[text.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            let key: Substring
            let value: Substring
            if let equals = argument.firstIndex(of: "=") {
                key = argument[..<equals]
                value = argument[argument.index(after: equals)...]
            } else {
                guard position < 2 else {
                    others.append(String(argument))
                    continue
                }
                key = position == 0 ? "CARD" : "DEV"
                value = argument
                if position == 0 { cardPositional = true }
            }
            switch key {
            case "CARD":
                guard card == nil, let name = Self.cardName(value) else { return nil }
                card = name
            case "DEV":
                guard device == nil, let number = Int(value), number >= 0 else { return nil }
                device = number
            case "CHANNELS" where plugin == .dmix:
                // dmix's alone of these plugins (alsa-lib's pcm/dmix.conf @args).
                guard channels == nil, let number = Int(value), number >= 1 else { return nil }
                channels = number
            default:
                others.append(String(argument))
            }
        }
        guard let card else { return nil }
        let value = ALSACardPCM(
            plugin: plugin, card: Self.isDecimal(card) ? .index(Int(card)!) : .id(String(card)), device: device, channels: channels,
            arguments: cardPositional ? .positional : .keywords, otherArguments: others)
        // Kept whole where the value renders otherwise (`hw:"PCH",0`, `DEV=0,CARD=X`, `hw:X,007`).
        self.init(value, spelling: value.rendered == text ? nil : text)
    }

    private init(_ pcm: ALSACardPCM, spelling: String?) {
        plugin = pcm.plugin
        card = pcm.card
        device = pcm.device
        channels = pcm.channels
        arguments = pcm.arguments
        otherArguments = pcm.otherArguments
        self.spelling = spelling
    }

    /// A card argument without its double quotes, or nil when it names no card.
    private static func cardName(_ value: Substring) -> Substring? {
        var name = value
        if name.count >= 2, name.first == "\"", name.last == "\"" { name = name.dropFirst().dropLast() }
        guard !name.isEmpty, !name.contains(where: { $0 == "\"" || $0 == "=" || $0 == " " }) else { return nil }
        return name
    }

    /// `0`, or digits without a leading zero, small enough for an Int: a card index as
    /// written back.
    private static func isDecimal(_ value: Substring) -> Bool {
        guard let number = Int(value), number >= 0 else { return false }
        return String(number) == value
    }

    public static func == (a: ALSACardPCM, b: ALSACardPCM) -> Bool { a.description == b.description }
    public func hash(into hasher: inout Hasher) { hasher.combine(description) }
}

/// A Bluetooth device's PCM through BlueALSA: `bluealsa:DEV=<address>,PROFILE=<profile>`.
public struct BlueALSAPCM: Sendable, Hashable, CustomStringConvertible {
    /// The transport BlueALSA opens.
    public enum Profile: String, Sendable, Hashable, CaseIterable {
        /// Music (A2DP).
        case a2dp
        /// A call's voice (HFP/HSP over SCO).
        case sco
    }

    /// The device's address as written (`00:11:22:33:44:55`).
    public let address: String
    public let profile: Profile

    /// The PCM of the device at `address` (six colon-separated hex pairs) for `profile`.
    public init(address: String, profile: Profile) {
        self.address = address
        self.profile = profile
    }

    public var description: String { "bluealsa:DEV=\(address),PROFILE=\(profile.rawValue)" }

    /// Takes apart `bluealsa:DEV=<address>,PROFILE=<a2dp|sco>` with a colon-separated hex
    /// address of six bytes; nil for anything else.
    init?(_ text: String) {
        let prefix = "bluealsa:DEV="
        guard text.hasPrefix(prefix) else { return nil }
        let rest = text.dropFirst(prefix.count)
        guard let comma = rest.firstIndex(of: ",") else { return nil }
        let address = rest[..<comma]
        let tail = rest[rest.index(after: comma)...]
        guard tail.hasPrefix("PROFILE="), let profile = Profile(rawValue: String(tail.dropFirst("PROFILE=".count))),
            Self.isAddress(address)
        else { return nil }
        self.init(address: String(address), profile: profile)
    }

    private static func isAddress(_ text: Substring) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.utf8.count == 2 && $0.utf8.allSatisfy(\.isASCIIHexDigit) }
    }
}

extension UInt8 {
    fileprivate var isASCIIHexDigit: Bool { (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self) }
}
