import AudioRouteSystem
import AudioRouteDBus
import AudioRouteCore

// Classification of one sound card (with its jack switch devices) into ports.
// A pure function of udev data: the reasoning is written up in docs/ports.md.

/// Something classification noticed; the watcher logs each key once.
public struct ClassificationNote: Sendable, Hashable {
    public enum Level: Sendable, Hashable { case debug, info, notice, warning }
    public var level: Level
    /// Identifies the fault for log-once purposes (includes the device).
    public var key: String
    public var message: String

    public init(_ level: Level, key: String, _ message: String) {
        self.level = level
        self.key = key
        self.message = message
    }
}

/// The ports a card implies now, and what was noticed on the way.
public struct CardClassification: Sendable, Hashable {
    public var ports: [Port] = []
    public var notes: [ClassificationNote] = []
}

/// Udev properties the watcher honours (set by udev-rules/70-audioroute.rules or by the admin).
public enum AudioRouteProperty {
    /// `1`: the card is never a route (virtual cards: snd-dummy, snd-aloop...).
    public static let ignore = "AUDIOROUTE_IGNORE"
    /// A port type, or a comma-separated list of them: the card's ports, one per type.
    public static let portType = "AUDIOROUTE_PORT_TYPE"
    /// An integer priority for the card's (or jack's) ports.
    public static let priority = "AUDIOROUTE_PRIORITY"
    /// A human name for the card's (or jack's) ports.
    public static let name = "AUDIOROUTE_NAME"
    /// An ALSA PCM name every port of the card opens instead of `plughw:CARD=<id>,DEV=<m>`.
    public static let alsaPCM = "AUDIOROUTE_ALSA_PCM"
    /// `1`: the card has an earpiece (a phone): it also gets a builtInReceiver.
    public static let receiver = "AUDIOROUTE_RECEIVER"
}

public enum CardClassifier {
    /// The ports `card` implies together with its jack switch devices.
    /// - Parameter hasEarpiece: the card's ALSA UCM profile names an Earpiece or
    ///   Handset device (see `UCMProbe`); adds a builtInReceiver.
    public static func classify(_ card: CardRecord, jacks: [JackRecord] = [], hasEarpiece: Bool = false) -> CardClassification {
        var result = CardClassification()
        let label = card.sysname.isEmpty ? card.syspath : card.sysname
        func note(_ level: ClassificationNote.Level, _ what: String, _ message: String) {
            result.notes.append(ClassificationNote(level, key: "\(card.syspath)#\(what)", "\(label): \(message)"))
        }
        for fault in card.faults { note(.warning, "fault:\(fault)", fault) }
        let props = card.properties

        if let ignore = props[AudioRouteProperty.ignore], isTrue(ignore) {
            note(.info, "ignored", "ignored (\(AudioRouteProperty.ignore)=\(ignore))")
            return result
        }
        // Virtual cards are never routes on their own (spec section 1), even without
        // the udev rules installed; AUDIOROUTE_IGNORE=0 makes one a port anyway.
        if props[AudioRouteProperty.ignore].map({ $0.trimmingASCIIWhitespace() == "0" }) != true, let reason = virtualCard(card) {
            note(.info, "virtual", "ignored: virtual card (\(reason)); set \(AudioRouteProperty.ignore)=0 to use it")
            return result
        }
        guard card.hasControl else {
            note(.debug, "not-ready", "no control device yet: waiting for the card to finish registering")
            return result
        }
        guard !card.pcms.isEmpty else {
            note(.notice, "no-pcm", "card has no PCM devices: it gives no ports")
            return result
        }

        // Identity. ALSA card ids are short ASCII words; anything else is not trusted.
        var cardID: String?
        if let raw = card.attributes["id"] {
            if isALSAIdentifier(raw) { cardID = raw } else { note(.warning, "bad-id", "ignoring malformed card id attribute \(quoted(raw))") }
        } else {
            note(.warning, "no-id", "card has no id attribute")
        }
        var cardNumber: Int?
        if let raw = card.attributes["number"] {
            if let value = Int(raw), (0..<256).contains(value) { cardNumber = value } else { note(.warning, "bad-number", "ignoring malformed card number attribute \(quoted(raw))") }
        }

        let bus = busName(card)
        guard let base = uidBase(card, bus: bus, cardID: cardID, note: note) else {
            note(.warning, "no-uid", "no ID_PATH, ID_SERIAL or card id to derive a stable uid from: no ports")
            return result
        }
        let cardName = displayName(card, cardID: cardID)

        // Overrides.
        var priority: Int?
        if let raw = props[AudioRouteProperty.priority] {
            if let value = Int(raw.trimmingASCIIWhitespace()), (-100_000...100_000).contains(value) {
                priority = value
            } else {
                note(.warning, "bad-priority", "ignoring \(AudioRouteProperty.priority)=\(quoted(raw)): not an integer")
            }
        }
        let nameOverride = props[AudioRouteProperty.name].flatMap { isUsableText($0) ? $0 : nil }
        var alsaOverride: String?
        if let raw = props[AudioRouteProperty.alsaPCM] {
            if isUsableText(raw) { alsaOverride = raw } else { note(.warning, "bad-alsa", "ignoring \(AudioRouteProperty.alsaPCM)=\(quoted(raw))") }
        }
        func alsaName(_ pcm: PCMDevice?) -> String? {
            if let alsaOverride { return alsaOverride }
            guard let pcm else { return nil }
            if let cardID { return "plughw:CARD=\(cardID),DEV=\(pcm.device)" }
            if let cardNumber { return "plughw:\(cardNumber),\(pcm.device)" }
            return nil
        }

        // PCMs claimed by HDMI/DP jacks are not the speaker's.
        let hdmiJacks = jacks.filter { $0.hdmiPCM != nil }
        let hdmiJackPCMs = Set(hdmiJacks.compactMap(\.hdmiPCM))
        let playback = card.pcms.filter { $0.playback }
        let capture = card.pcms.filter { !$0.playback }
        let mainPlayback = playback.first { !hdmiJackPCMs.contains($0.device) }
        let mainCapture = capture.first
        let isGraphics = card.parent.isGraphicsAudioFunction || (bus == "pci" && ["HDMI", "NVidia", "AMDHDMI"].contains(cardID ?? ""))

        var cardPorts: [Port] = []
        func add(_ role: String, _ type: PortType, _ direction: PortDirection, pcm: PCMDevice?, name: String) {
            cardPorts.append(Port(uid: "\(base)/\(role)", type: type, device: base, name: name, direction: direction, priority: type.defaultPriority, alsa: alsaName(pcm)))
        }

        let declared = declaredTypes(props[AudioRouteProperty.portType], note: note)
        if !declared.isEmpty {
            for type in declared {
                let name = nameOverride ?? (type.isBuiltIn ? type.defaultName : cardName)
                let allowsOut = type.allowedDirections.contains(.output)
                let allowsIn = type.allowedDirections.contains(.input)
                let suffix = allowsOut && allowsIn
                if allowsOut, let pcm = mainPlayback { add(suffix ? "\(type.rawValue)-output" : type.rawValue, type, .output, pcm: pcm, name: name) }
                if allowsIn, let pcm = mainCapture { add(suffix ? "\(type.rawValue)-input" : type.rawValue, type, .input, pcm: pcm, name: name) }
            }
        } else if isGraphics {
            // A GPU's audio function: every playback PCM is an HDMI/DP output. When the
            // driver reports jacks, only connected ones become ports (below).
            if hdmiJacks.isEmpty {
                for pcm in playback { add("hdmi-\(pcm.device)", .HDMI, .output, pcm: pcm, name: "\(cardName) HDMI \(pcm.device)") }
            }
        } else if bus == "usb" {
            if let pcm = mainPlayback { add("output", .usbAudio, .output, pcm: pcm, name: cardName) }
            if let pcm = mainCapture { add("input", .usbAudio, .input, pcm: pcm, name: cardName) }
        } else {
            // An internal codec (PCI HDA, platform/SoC): speaker and microphone.
            if let pcm = mainPlayback {
                add("speaker", .builtInSpeaker, .output, pcm: pcm, name: PortType.builtInSpeaker.defaultName)
                if hasEarpiece || props[AudioRouteProperty.receiver].map(isTrue) == true {
                    add("receiver", .builtInReceiver, .output, pcm: pcm, name: PortType.builtInReceiver.defaultName)
                }
            }
            if let pcm = mainCapture { add("mic", .builtInMic, .input, pcm: pcm, name: PortType.builtInMic.defaultName) }
        }
        for index in cardPorts.indices {
            if let priority { cardPorts[index].priority = priority }
            if let nameOverride { cardPorts[index].name = nameOverride }
        }

        // Jacks: the union of every switch device of the card, so that a headset's
        // headphone and microphone switches (often two evdev devices) give two
        // ports of one device, which move together.
        var jackPorts: [Port] = []
        func jackPort(_ role: String, _ type: PortType, device: String, pcm: PCMDevice?, from jack: JackRecord?) {
            var port = Port(uid: "\(base)/\(role)", type: type, device: device, direction: type.defaultDirection, alsa: alsaName(pcm))
            if let jack {
                if let raw = jack.properties[AudioRouteProperty.priority], let value = Int(raw.trimmingASCIIWhitespace()) { port.priority = value }
                if let raw = jack.properties[AudioRouteProperty.name], isUsableText(raw) { port.name = raw }
                // A jack's own PCM (a headphone mixer path; the demo's file PCM per device).
                if let raw = jack.properties[AudioRouteProperty.alsaPCM] {
                    if isUsableText(raw) { port.alsa = raw } else { note(.warning, "bad-alsa-jack", "ignoring \(AudioRouteProperty.alsaPCM)=\(quoted(raw)) on jack \(quoted(jack.name))") }
                }
            }
            jackPorts.append(port)
        }
        let analogJacks = jacks.filter { $0.hdmiPCM == nil }
        func firstJack(with bit: SwitchSet) -> JackRecord? { analogJacks.first { $0.state.contains(bit) && $0.supported.contains(bit) } }
        if let jack = firstJack(with: .headphoneInsert) { jackPort("headphones", .headphones, device: "\(base)/jack", pcm: mainPlayback, from: jack) }
        if let jack = firstJack(with: .microphoneInsert) { jackPort("headset-mic", .headsetMic, device: "\(base)/jack", pcm: mainCapture, from: jack) }
        if let jack = firstJack(with: .lineoutInsert) { jackPort("line-out", .lineOut, device: "\(base)/line", pcm: mainPlayback, from: jack) }
        if let jack = firstJack(with: .lineinInsert) { jackPort("line-in", .lineIn, device: "\(base)/line", pcm: mainCapture, from: jack) }
        for jack in hdmiJacks.sorted(by: { ($0.hdmiPCM ?? 0) < ($1.hdmiPCM ?? 0) }) {
            guard let number = jack.hdmiPCM, !jack.state.intersection([.lineoutInsert, .videooutInsert]).isEmpty else { continue }
            guard let pcm = playback.first(where: { $0.device == number }) else {
                note(.notice, "hdmi-jack-\(number)", "HDMI/DP jack \(quoted(jack.name)) names PCM \(number), which the card does not have")
                continue
            }
            let uid = "\(base)/hdmi-\(number)"
            guard !jackPorts.contains(where: { $0.uid == uid }) else { continue }
            var port = Port(uid: uid, type: .HDMI, device: uid, name: "\(cardName) HDMI \(number)", direction: .output, alsa: alsaName(pcm))
            if let priority { port.priority = priority }
            jackPorts.append(port)
        }
        result.ports = cardPorts + jackPorts
        return result
    }

    // MARK: Helpers

    /// Drivers and card ids of ALSA's virtual cards (snd-aloop, snd-dummy, snd-virmidi).
    static let virtualDrivers: Set<String> = ["snd_aloop", "snd-aloop", "snd_dummy", "snd-dummy", "snd_virmidi", "snd-virmidi"]
    static let virtualIDs: Set<String> = ["Loopback", "Dummy", "VirMIDI"]

    /// Why the card is a virtual one, or nil.
    static func virtualCard(_ card: CardRecord) -> String? {
        if let driver = card.parent.driver, virtualDrivers.contains(driver) { return "driver \(driver)" }
        if let id = card.attributes["id"], virtualIDs.contains(id), card.properties["ID_BUS"] == nil { return "card id \(id)" }
        return nil
    }

    /// Whether `classify` can use `hasEarpiece` for this card: only an internal codec
    /// gets a receiver, never a USB card. Lets a caller skip the UCM probe (a walk of the
    /// UCM tree) on every USB plug.
    public static func mayHaveEarpiece(_ card: CardRecord) -> Bool {
        busName(card) != "usb"
    }

    /// The card's bus: ID_BUS when udev set it, else the parent's subsystem.
    static func busName(_ card: CardRecord) -> String? {
        if let bus = card.properties["ID_BUS"], isToken(bus) { return bus.lowercased() }
        if let subsystem = card.parent.subsystem { return subsystem == "usb" ? "usb" : subsystem }
        if card.syspath.contains("/usb") { return "usb" }
        return nil
    }

    /// A uid prefix that survives restarts and re-plugs, never from the card index.
    static func uidBase(
        _ card: CardRecord, bus: String?, cardID: String?, note: (ClassificationNote.Level, String, String) -> Void
    ) -> String? {
        let props = card.properties
        let serial = props["ID_SERIAL"].flatMap { isToken($0) ? $0 : nil }
        let path = props["ID_PATH"].flatMap { isToken($0) ? $0 : nil }
        if let raw = props["ID_PATH"], path == nil { note(.warning, "bad-path", "ignoring malformed ID_PATH \(quoted(raw))") }
        // A USB device with a real serial number is the same device on any port.
        if bus == "usb", let serial, let short = props["ID_SERIAL_SHORT"], !short.isEmpty {
            let interface = props["ID_USB_INTERFACE_NUM"].flatMap { isToken($0) ? "-\($0)" : nil } ?? ""
            return "usb-\(serial)\(interface)"
        }
        if let path { return path }
        if let serial { return "\(bus ?? "dev")-\(serial)" }
        if let cardID {
            note(.notice, "uid-from-id", "no ID_PATH or ID_SERIAL: uid derived from the card id \(cardID)")
            return "card-\(cardID)"
        }
        return nil
    }

    /// A human name: AUDIOROUTE_NAME, the USB model, the PCI database model, the card id.
    static func displayName(_ card: CardRecord, cardID: String?) -> String {
        let props = card.properties
        // A device without a product string gets its hex product id as ID_MODEL: not a name.
        func isBareID(_ model: String) -> Bool { model == props["ID_MODEL_ID"] || model.hasPrefix("0x") }
        if let encoded = props["ID_MODEL_ENC"], let decoded = decodeUdevEscapes(encoded), isUsableText(decoded), !isBareID(decoded) {
            return decoded.trimmingASCIIWhitespace()
        }
        if let model = props["ID_MODEL"], isUsableText(model), !isBareID(model) { return model.replacingUnderscores() }
        if let model = props["ID_MODEL_FROM_DATABASE"], isUsableText(model) { return model }
        return cardID ?? card.sysname
    }

    /// Parses AUDIOROUTE_PORT_TYPE: a port type or a comma-separated list of them.
    static func declaredTypes(_ raw: String?, note: (ClassificationNote.Level, String, String) -> Void) -> [PortType] {
        guard let raw else { return [] }
        var types: [PortType] = []
        for item in raw.split(separator: ",") {
            let name = String(item).trimmingASCIIWhitespace()
            if let type = PortType(rawValue: name) {
                if !types.contains(type) { types.append(type) }
            } else {
                note(.warning, "bad-type-\(name)", "ignoring unknown port type \(quoted(name)) in \(AudioRouteProperty.portType)")
            }
        }
        return types
    }

    /// Decodes udev's `\xNN` escapes (ID_MODEL_ENC); nil if the bytes are not UTF-8.
    static func decodeUdevEscapes(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.first {
            if byte == UInt8(ascii: "\\"), utf8.count >= 4, utf8[utf8.startIndex + 1] == UInt8(ascii: "x"),
                let value = UInt8(String(decoding: utf8[(utf8.startIndex + 2)..<(utf8.startIndex + 4)], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(4)
            } else {
                bytes.append(byte)
                utf8 = utf8.dropFirst()
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func isTrue(_ value: String) -> Bool {
        ["1", "true", "yes", "on"].contains(value.trimmingASCIIWhitespace().lowercased())
    }

    /// ALSA card ids: 1–16 ASCII letters, digits, `_` or `-`.
    static func isALSAIdentifier(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 16
            && value.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F || $0 == 0x2D }
    }

    /// A printable ASCII word (no spaces or controls), as udev's ID_* values are.
    static func isToken(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 512 && value.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// Text fit for a name: valid, non-empty, no control characters, not absurdly long.
    static func isUsableText(_ value: String) -> Bool {
        !value.trimmingASCIIWhitespace().isEmpty && value.utf8.count <= 256 && !value.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{7F}" || $0 == "\u{FFFD}" }
    }

    static func quoted(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars.prefix(80) {
            if scalar.value < 0x20 || scalar.value == 0x7F { out += "\\x" + String(scalar.value, radix: 16) } else { out.unicodeScalars.append(scalar) }
        }
        return out + "\""
    }
}

extension String {
    func trimmingASCIIWhitespace() -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { $0 != " " && $0 != "\t" && $0 != "\n" && $0 != "\r" }) else { return "" }
        let end = scalars.lastIndex(where: { $0 != " " && $0 != "\t" && $0 != "\n" && $0 != "\r" })!
        return String(scalars[start...end])
    }

    func replacingUnderscores() -> String {
        String(map { $0 == "_" ? " " : $0 })
    }
}
