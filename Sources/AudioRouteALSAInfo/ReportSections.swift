// The sections of an alsa-info.sh report that say what the hardware is, each parsed from the
// command output the script pastes (alsa-utils alsa-info/alsa-info.sh names each source).

/// A card of "Soundcards recognised by ALSA" (`/proc/asound/cards`, the kernel's
/// `%2i [%-15s]: %s - %s` then the long name).
public struct ALSAInfoCard: Sendable, Hashable {
    public var number: Int
    public var id: String
    public var driver: String
    public var name: String
    public var longName: String
}

/// A PCM of "Aplay/Arecord output" (`aplay -l`, `arecord -l`: `card N: ID [NAME], device M: PCMID [PCMNAME]`).
public struct ALSAInfoPCM: Sendable, Hashable {
    public var card: Int
    public var cardID: String
    /// The card's name as aplay prints it (`HDA Intel PCH`: the control device's card name).
    public var cardName: String = ""
    public var device: Int
    public var playback: Bool
    public var id: String
    public var name: String
}

/// A card's part of "Amixer output" (`amixer -c <id> info`, then its simple controls).
public struct ALSAInfoMixer: Sendable, Hashable {
    public var cardID: String
    public var longName: String?
    public var mixerName: String?
    public var components: String?
    /// `Controls      : N`: how many elements the control device has.
    public var controlCount: Int?
    /// The simple controls' names (`Master`, `Capture`,1 as `Capture,1`).
    public var simpleControls: [String]
}

/// A card's part of "Sysfs card info": its parent's driver (and so its bus) and the `device ->` link.
public struct ALSAInfoSysfsCard: Sendable, Hashable {
    public var number: Int
    /// `pci`, `platform`, `usb`... from `Driver: /sys/bus/<bus>/drivers/<driver>`.
    public var bus: String?
    public var driver: String?
    /// The parent device's name, the last part of the tree's `device -> ../../../0000:00:1f.3`.
    public var parent: String?
    /// The PCM children the tree shows (`pcmC0D0p`).
    public var pcms: [String]
}

/// One codec of "HDA-Intel Codec information" (`/proc/asound/card*/codec#*`).
public struct ALSAInfoCodec: Sendable, Hashable {
    public var name: String
    public var address: Int
    public var vendorID: UInt32?
    public var subsystemID: UInt32?
    public var revisionID: UInt32?
    /// Each `Node 0x.. [Pin Complex]` with its `Pin Default` word.
    public var pins: [(node: Int, defaultConfig: UInt32)] { pinList.map { ($0.node, $0.config) } }
    var pinList: [Pin]
    /// The line of `Codec:`, to name the codec in messages.
    public var line: Int

    struct Pin: Sendable, Hashable {
        var node: Int
        var config: UInt32
        /// `Pincap 0x…`, when the dump gives it before the pin's default: whether the pin
        /// senses a plug (a mic that cannot is built in), as the daemon reads it from /proc.
        var capabilities: UInt32?
    }

    /// The words `amixer info`'s Components gives an HDA codec: `HDA:<vendor>,<subsystem>,<revision>`.
    public var componentWord: String? {
        guard let vendorID, let subsystemID, let revisionID else { return nil }
        return "HDA:\(hex8(vendorID)),\(hex8(subsystemID)),\(hex8(revisionID))"
    }
}

/// A device of "PCI Soundcards installed in the system" (`lspci -vvnn -d ::0401..0403`, or `lspci` in old reports).
public struct ALSAInfoPCIDevice: Sendable, Hashable {
    /// With its domain: `0000:00:1f.3`.
    public var address: String
    /// `0403` when the report shows it.
    public var classCode: String?
    /// What lspci says after the class: vendor and device names, and ids when shown.
    public var description: String
    /// The device's name from the PCI database, the vendor's name taken off when it is a known one.
    public var deviceName: String
}

func hex8(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
}

enum CardsSection {
    static func parse(_ section: ReportSection) throws(ALSAInfoError) -> [ALSAInfoCard] {
        var cards: [ALSAInfoCard] = []
        var index = 0
        let lines = section.lines
        while index < lines.count {
            let line = lines[index]
            let text = line.text.trimmingSpace()
            index += 1
            if text.isEmpty || text == "--- no soundcards ---" { continue }
            guard let card = header(text) else {
                throw ALSAInfoError(section: section.title, line: line.number, "expected \"N [id]: driver - name\", found \"\(text.prefix(60))\"")
            }
            // The long name is the next line, indented; a card without it is a cut section.
            guard index < lines.count, lines[index].text.hasPrefix(" "), !lines[index].text.trimmingSpace().isEmpty, header(lines[index].text.trimmingSpace()) == nil else {
                throw ALSAInfoError(section: section.title, line: line.number, "card \(card.number) [\(card.id)] has no long-name line: the section is cut or malformed")
            }
            var full = card
            full.longName = lines[index].text.trimmingSpace()
            index += 1
            guard !cards.contains(where: { $0.number == full.number }) else {
                throw ALSAInfoError(section: section.title, line: line.number, "card \(full.number) is listed twice")
            }
            cards.append(full)
        }
        return cards
    }

    /// ` 0 [PCH            ]: HDA-Intel - HDA Intel PCH`.
    static func header(_ text: String) -> ALSAInfoCard? {
        guard let open = text.firstIndex(of: "["), let close = text[open...].firstIndex(of: "]"),
            let number = Int(text[..<open].trimmingSpace()), (0..<256).contains(number)
        else { return nil }
        let id = text[text.index(after: open)..<close].trimmingSpace()
        let rest = text[text.index(after: close)...]
        guard rest.hasPrefix(": "), !id.isEmpty else { return nil }
        let body = rest.dropFirst(2)
        guard let dash = body.firstRange(of: " - ") else { return nil }
        return ALSAInfoCard(number: number, id: id, driver: body[..<dash.lowerBound].trimmingSpace(), name: body[dash.upperBound...].trimmingSpace(), longName: "")
    }
}

enum PCMSection {
    static func parse(_ section: ReportSection) throws(ALSAInfoError) -> (pcms: [ALSAInfoPCM], warnings: [ALSAInfoWarning]) {
        var pcms: [ALSAInfoPCM] = []
        // Card, device, direction of each PCM kept: a listing repeats some (a report's two runs of
        // aplay), and a report of many lines must not cost their square.
        struct Key: Hashable {
            var card: Int
            var device: Int
            var playback: Bool
        }
        var seen: Set<Key> = []
        var playback: Bool?
        var sawAplay = false
        var sawArecord = false
        for line in section.lines {
            let text = line.text.trimmingSpace()
            if text == "APLAY" { playback = true; sawAplay = true; continue }
            if text == "ARECORD" { playback = false; sawArecord = true; continue }
            if text.hasPrefix("**** List of PLAYBACK") { playback = true; continue }
            if text.hasPrefix("**** List of CAPTURE") { playback = false; sawArecord = true; continue }
            guard text.hasPrefix("card ") else { continue }
            guard let direction = playback else {
                throw ALSAInfoError(section: section.title, line: line.number, "a PCM before any APLAY or ARECORD heading: its direction is unknown")
            }
            guard var pcm = parseLine(text) else {
                throw ALSAInfoError(section: section.title, line: line.number, "expected \"card N: ID [NAME], device M: PCMID [PCMNAME]\", found \"\(text.prefix(80))\" (cut or malformed)")
            }
            pcm.playback = direction
            if seen.insert(Key(card: pcm.card, device: pcm.device, playback: direction)).inserted { pcms.append(pcm) }
        }
        // Capture PCMs decide microphones: a listing cut before ARECORD cannot be read as "none".
        if sawAplay && !sawArecord {
            throw ALSAInfoError(section: section.title, line: section.lines.last?.number, "the ARECORD part is missing: the section is cut")
        }
        return (pcms, [])
    }

    /// `card 0: PCH [HDA Intel PCH], device 3: HDMI 0 [HDMI 0]`.
    static func parseLine(_ text: String) -> ALSAInfoPCM? {
        let body = text.dropFirst("card ".count)
        guard let colon = body.firstIndex(of: ":"), let card = Int(body[..<colon]), (0..<256).contains(card) else { return nil }
        let afterCard = body[body.index(after: colon)...].drop { $0 == " " }
        guard let marker = afterCard.firstRange(of: "], device ") else { return nil }
        let cardPart = afterCard[..<marker.lowerBound]
        guard let open = cardPart.firstRange(of: " [") else { return nil }
        let cardID = String(cardPart[..<open.lowerBound])
        let cardName = String(cardPart[open.upperBound...])
        let rest = afterCard[marker.upperBound...]
        guard let deviceColon = rest.firstIndex(of: ":"), let device = Int(rest[..<deviceColon]), (0..<1024).contains(device) else { return nil }
        let pcmPart = rest[rest.index(after: deviceColon)...].dropFirst(rest[rest.index(after: deviceColon)...].hasPrefix(" ") ? 1 : 0)
        // The name is the last bracketed group; an id may hold brackets of its own.
        guard pcmPart.hasSuffix("]") else { return nil }
        var depth = 0
        var nameOpen: Substring.Index?
        var position = pcmPart.index(before: pcmPart.endIndex)
        while true {
            let character = pcmPart[position]
            if character == "]" { depth += 1 }
            if character == "[" {
                depth -= 1
                if depth == 0 { nameOpen = position; break }
            }
            if position == pcmPart.startIndex { break }
            position = pcmPart.index(before: position)
        }
        guard let nameOpen else { return nil }
        let id = pcmPart[..<nameOpen].trimmingSpace()
        let name = pcmPart[pcmPart.index(after: nameOpen)..<pcmPart.index(before: pcmPart.endIndex)]
        guard !cardID.isEmpty else { return nil }
        return ALSAInfoPCM(card: card, cardID: cardID, cardName: cardName, device: device, playback: true, id: id, name: String(name))
    }
}

enum AmixerSection {
    static func parse(_ section: ReportSection) throws(ALSAInfoError) -> [ALSAInfoMixer] {
        var mixers: [ALSAInfoMixer] = []
        var current: ALSAInfoMixer?
        func finish() {
            if let current, !current.cardID.isEmpty { mixers.append(current) }
            current = nil
        }
        for line in section.lines {
            let text = line.text
            if text.hasPrefix("!!-------Mixer controls for card ") {
                finish()
                // `card PCH` (0.5) or `card 0 [PCH]` (0.4): the id until the `Card` line says.
                var id = text.dropFirst("!!-------Mixer controls for card ".count).trimmingSpace()
                if let open = id.firstIndex(of: "["), let close = id.lastIndex(of: "]"), open < close { id = String(id[id.index(after: open)..<close]) }
                current = ALSAInfoMixer(cardID: id, simpleControls: [])
                continue
            }
            guard current != nil else { continue }
            if text.hasPrefix("Card "), let firstQuote = text.firstIndex(of: "'") {
                // `Card hw:0 'PCH'/'HDA Intel PCH at 0xf7f10000 irq 32'`.
                let rest = text[text.index(after: firstQuote)...]
                guard let separator = rest.firstRange(of: "'/'"), rest.hasSuffix("'"), separator.upperBound < rest.endIndex else {
                    throw ALSAInfoError(section: section.title, line: line.number, "expected \"Card NAME 'id'/'long name'\", found \"\(text.prefix(80))\"")
                }
                current?.cardID = String(rest[..<separator.lowerBound])
                current?.longName = String(rest[separator.upperBound..<rest.index(before: rest.endIndex)])
            } else if let value = field(text, "Mixer name") {
                current?.mixerName = value
            } else if let value = field(text, "Components") {
                current?.components = value
            } else if text.hasPrefix("  Controls"), let colon = text.firstIndex(of: ":") {
                current?.controlCount = Int(text[text.index(after: colon)...].trimmingSpace())
            } else if text.hasPrefix("Simple mixer control '"), let close = text.lastIndex(of: "'") {
                let start = text.index(text.startIndex, offsetBy: "Simple mixer control '".count)
                if start <= close {
                    let index = text[text.index(after: close)...].dropFirst()
                    current?.simpleControls.append(index == "0" || index.isEmpty ? String(text[start..<close]) : "\(text[start..<close]),\(index)")
                }
            }
        }
        finish()
        return mixers
    }

    /// `  Mixer name\t: 'Realtek ALC289'` → `Realtek ALC289`.
    static func field(_ text: Substring, _ name: String) -> String? {
        guard text.trimmingSpace().hasPrefix(name), let colon = text.firstIndex(of: ":") else { return nil }
        let value = text[text.index(after: colon)...].trimmingSpace()
        guard value.count >= 2, value.hasPrefix("'"), value.hasSuffix("'") else { return value.isEmpty ? nil : value }
        return String(value.dropFirst().dropLast())
    }
}

enum SysfsSection {
    static func parse(_ section: ReportSection) throws(ALSAInfoError) -> [ALSAInfoSysfsCard] {
        var cards: [ALSAInfoSysfsCard] = []
        var current: ALSAInfoSysfsCard?
        for line in section.lines {
            let text = line.text
            if text.hasPrefix("!!Card: ") {
                if let current { cards.append(current) }
                let path = text.dropFirst("!!Card: ".count).trimmingSpace()
                guard let last = path.split(separator: "/").last, last.hasPrefix("card"), let number = Int(last.dropFirst(4)) else {
                    throw ALSAInfoError(section: section.title, line: line.number, "expected \"!!Card: /sys/class/sound/cardN\", found \"\(text.prefix(80))\"")
                }
                current = ALSAInfoSysfsCard(number: number, pcms: [])
                continue
            }
            guard current != nil else { continue }
            if text.hasPrefix("Driver:") {
                // `Driver: /sys/bus/pci/drivers/snd_hda_intel`.
                let parts = text.dropFirst("Driver:".count).trimmingSpace().split(separator: "/")
                if let bus = parts.firstIndex(of: "bus"), bus + 1 < parts.count { current?.bus = String(parts[bus + 1]) }
                if let drivers = parts.lastIndex(of: "drivers"), drivers + 1 < parts.count { current?.driver = String(parts[drivers + 1]) }
                continue
            }
            // The tree's first level: `\t|-- device -> ../../../0000:00:1f.3` (or `├── `, `└── `, `` `-- ``).
            let entry = text.drop { $0 == "\t" }
            guard text.hasPrefix("\t") || text.hasPrefix(" "), let name = firstLevelEntry(entry) else { continue }
            if name.hasPrefix("device -> ") {
                current?.parent = name.dropFirst("device -> ".count).split(separator: "/").last.map(String.init)
            } else if name.hasPrefix("pcmC"), name.last == "p" || name.last == "c" {
                current?.pcms.append(String(name))
            }
        }
        if let current { cards.append(current) }
        return cards
    }

    static func firstLevelEntry(_ text: Substring) -> Substring? {
        for branch in ["|-- ", "`-- ", "\u{251C}\u{2500}\u{2500} ", "\u{2514}\u{2500}\u{2500} "] where text.hasPrefix(branch) {
            return text.dropFirst(branch.count)
        }
        return nil
    }
}

enum DeviceNodesSection {
    /// `/dev/snd/by-path` and `/dev/snd/by-id` links to `../controlC<n>`: udev's ID_PATH (and
    /// `usb-<ID_SERIAL>-<interface>`) per card number.
    static func parse(_ section: ReportSection) -> (byPath: [Int: String], byID: [Int: String]) {
        var byPath: [Int: String] = [:]
        var byID: [Int: String] = [:]
        var directory: String?
        for line in section.lines {
            let text = line.text.trimmingSpace()
            if text.hasPrefix("/dev/snd/"), text.hasSuffix(":") {
                directory = String(text.dropFirst("/dev/snd/".count).dropLast())
                continue
            }
            guard let directory, text.hasPrefix("l") else { continue }
            var arrow: Range<String.Index>?
            for form in [" -> ", " -gt; "] where arrow == nil { arrow = text.firstRange(of: form) }
            guard let arrow else { continue }
            let target = text[arrow.upperBound...].trimmingSpace()
            guard let name = text[..<arrow.lowerBound].split(separator: " ").last, target.hasPrefix("../controlC"),
                let number = Int(target.dropFirst("../controlC".count))
            else { continue }
            if directory == "by-path" { byPath[number] = String(name) }
            if directory == "by-id" { byID[number] = String(name) }
        }
        return (byPath, byID)
    }
}

enum CodecSection {
    static func parse(_ section: ReportSection) throws(ALSAInfoError) -> (codecs: [ALSAInfoCodec], warnings: [ALSAInfoWarning]) {
        var codecs: [ALSAInfoCodec] = []
        var warnings: [ALSAInfoWarning] = []
        var pendingNode: (node: Int, line: Int)?
        var capabilities: UInt32?
        for line in section.lines {
            let text = line.text.trimmingSpace()
            if text.hasPrefix("Codec: ") {
                codecs.append(ALSAInfoCodec(name: String(text.dropFirst("Codec: ".count)), address: codecs.count, pinList: [], line: line.number))
                pendingNode = nil
                continue
            }
            guard !codecs.isEmpty else { continue }
            let last = codecs.count - 1
            if text.hasPrefix("Address: "), let address = Int(text.dropFirst("Address: ".count)) {
                codecs[last].address = address
            } else if text.hasPrefix("Vendor Id: ") {
                codecs[last].vendorID = hexValue(text.dropFirst("Vendor Id: ".count))
            } else if text.hasPrefix("Subsystem Id: ") {
                codecs[last].subsystemID = hexValue(text.dropFirst("Subsystem Id: ".count))
            } else if text.hasPrefix("Revision Id: ") {
                codecs[last].revisionID = hexValue(text.dropFirst("Revision Id: ".count))
            } else if text.hasPrefix("Node 0x") {
                let word = text.dropFirst("Node ".count).prefix { $0 != " " }
                guard let node = hexValue(word) else {
                    throw ALSAInfoError(section: section.title, line: line.number, "expected \"Node 0xNN [...]\", found \"\(text.prefix(60))\"")
                }
                pendingNode = text.contains("[Pin Complex]") ? (Int(node), line.number) : nil
                capabilities = nil
            } else if text.hasPrefix("Pincap 0x"), pendingNode != nil {
                capabilities = hexValue(text.dropFirst("Pincap ".count))
            } else if text.hasPrefix("Pin Default 0x"), let pending = pendingNode {
                let word = text.dropFirst("Pin Default ".count).prefix { $0 != ":" && $0 != " " }
                guard word.count == 10, let config = hexValue(word) else {
                    throw ALSAInfoError(section: section.title, line: line.number, "expected \"Pin Default 0xXXXXXXXX:\", found \"\(text.prefix(60))\"")
                }
                codecs[last].pinList.append(ALSAInfoCodec.Pin(node: pending.node, config: config, capabilities: capabilities))
                pendingNode = nil
            }
        }
        if let pendingNode, section.isLast {
            warnings.append(ALSAInfoWarning(section: section.title, line: pendingNode.line, "the section is cut short in pin node 0x\(String(pendingNode.node, radix: 16)): pins after it are missing"))
        }
        return (codecs, warnings)
    }

    static func hexValue(_ text: Substring) -> UInt32? {
        let word = text.prefix { !($0 == " " || $0 == "\t" || $0 == ":" || $0 == ",") }
        guard word.hasPrefix("0x"), word.count > 2, word.count <= 10 else { return nil }
        return UInt32(word.dropFirst(2), radix: 16)
    }
}

enum PCISection {
    /// Vendor names of pci.ids that lspci puts before the device's name.
    static let vendors = [
        "Advanced Micro Devices, Inc. [AMD/ATI]", "Advanced Micro Devices, Inc. [AMD]", "Intel Corporation", "NVIDIA Corporation",
        "nVidia Corporation", "ATI Technologies Inc", "Creative Labs", "C-Media Electronics Inc", "VIA Technologies Inc.",
        "Realtek Semiconductor Co., Ltd.", "Qualcomm Technologies, Inc", "Cirrus Logic", "ASMedia Technology Inc.",
    ]

    static func parse(_ section: ReportSection) -> [ALSAInfoPCIDevice] {
        var devices: [ALSAInfoPCIDevice] = []
        for line in section.lines {
            let text = line.text
            guard let first = text.first, first.isHexDigit, let space = text.firstIndex(of: " ") else { continue }
            var address = String(text[..<space])
            guard address.contains(":"), address.contains(".") else { continue }
            if address.split(separator: ":").count == 2 { address = "0000:" + address }
            let rest = text[text.index(after: space)...]
            guard let colon = rest.firstRange(of: ": ") else { continue }
            let classPart = rest[..<colon.lowerBound]
            var classCode: String?
            if let open = classPart.lastIndex(of: "["), classPart.hasSuffix("]") {
                classCode = String(classPart[classPart.index(after: open)..<classPart.index(before: classPart.endIndex)])
            }
            let description = rest[colon.upperBound...].trimmingSpace()
            var name = description
            // Drop ` (rev a1)`, ` (prog-if 80)` and the trailing `[vvvv:dddd]`.
            while let open = name.lastIndex(of: "("), name.hasSuffix(")") { name = name[..<open].trimmingSpace() }
            if let open = name.lastIndex(of: "["), name.hasSuffix("]"), name[open...].contains(":") { name = name[..<open].trimmingSpace() }
            for vendor in vendors where name.hasPrefix(vendor + " ") {
                name = String(name.dropFirst(vendor.count + 1))
                break
            }
            devices.append(ALSAInfoPCIDevice(address: address, classCode: classCode, description: description, deviceName: name))
        }
        return devices
    }
}

enum KeyValueSection {
    /// `Manufacturer:      Dell Inc.` lines.
    static func parse(_ section: ReportSection) -> [(key: String, value: String)] {
        section.lines.compactMap { line in
            guard let colon = line.text.firstIndex(of: ":") else { return nil }
            let key = line.text[..<colon].trimmingSpace()
            guard !key.isEmpty else { return nil }
            return (key, line.text[line.text.index(after: colon)...].trimmingSpace())
        }
    }
}
