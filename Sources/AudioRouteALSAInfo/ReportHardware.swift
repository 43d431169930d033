import AudioRouteCore
import AudioRouteSystem
import AudioRouteWatchers

/// One card of a report as the watcher would see it: the record the classifier takes, its jacks
/// (from its `… Jack` controls), its full control list, and where each field came from.
public struct ALSAInfoCardHardware: Sendable {
    public var record: CardRecord
    public var jacks: [JackRecord]
    /// Every control `alsactl store` saved for the card (empty when the report has none).
    public var controls: [ALSAInfoControl]
    /// Whether the report has the card's controls ("Alsactl output"): without them no jack is known.
    public var hasControls: Bool
    /// Which section gave which field (`ID_PATH pci-0000:00:1f.3` from `/dev/snd/by-path`), for `--explain`.
    public var provenance: [ALSAInfoProvenance]

    /// The ports the classifier gives this card, as the daemon would without a UCM profile
    /// (ReportMachine asks for the profile too).
    public func classify() -> CardClassification {
        CardClassifier.classify(record, jacks: jacks)
    }
}

/// A field of a card record and the report's section that gave it.
public struct ALSAInfoProvenance: Sendable, Hashable {
    public var field: String
    public var source: String
}

extension ALSAInfoReport {
    /// Every card of the report as a record for the classifier, in card-number order.
    public func hardware() -> [ALSAInfoCardHardware] {
        let codecCards = assignCodecs()
        return cardList().map { card in hardware(card, pins: codecCards[card.number] ?? []) }
    }

    /// The cards section's cards; without it, the cards aplay/arecord name, each with the name
    /// aplay prints beside its id (the card's own name, as the cards section would give it).
    func cardList() -> [ALSAInfoCard] {
        if !cards.isEmpty { return cards.sorted { $0.number < $1.number } }
        var seen: [Int: ALSAInfoCard] = [:]
        for pcm in pcms where seen[pcm.card] == nil {
            seen[pcm.card] = ALSAInfoCard(number: pcm.card, id: pcm.cardID, driver: "", name: pcm.cardName, longName: "")
        }
        return seen.values.sorted { $0.number < $1.number }
    }

    func hardware(_ card: ALSAInfoCard, pins: [HDAPin]) -> ALSAInfoCardHardware {
        var provenance: [ALSAInfoProvenance] = []
        func from(_ field: String, _ source: String) { provenance.append(ALSAInfoProvenance(field: field, source: source)) }
        let syspath = "/sys/class/sound/card\(card.number)"
        if cards.isEmpty, !card.name.isEmpty { from("card name \"\(card.name)\"", "Aplay/Arecord output card line (no cards section in the report)") }
        let mixer = mixers.first { $0.cardID == card.id }
        let info = ALSACardInfo(
            id: card.id, driver: card.driver, name: card.name, longName: card.longName.isEmpty ? (mixer?.longName ?? "") : card.longName,
            mixerName: mixer?.mixerName ?? "", components: mixer?.components ?? "")

        // PCMs: aplay/arecord's, with their ids and names; else the sysfs tree's children.
        var pcmDevices = pcms.filter { $0.card == card.number }.map { PCMDevice(device: $0.device, playback: $0.playback, id: $0.id, name: $0.name) }
        if pcmDevices.isEmpty, !sectionTitles.contains("Aplay/Arecord output"), let tree = sysfs[card.number] {
            pcmDevices = tree.pcms.compactMap { PCMDevice(sysname: $0) }
            if !pcmDevices.isEmpty { from("PCMs \(tree.pcms.joined(separator: " "))", "Sysfs card info tree") }
        }

        // The parent: its bus and driver from sysfs, its address from the `device ->` link; without
        // the sysfs section, from a card driver that has one bus and one parent driver.
        let tree = sysfs[card.number]
        var parent = CardParent(subsystem: tree?.bus, driver: tree?.driver)
        if let bus = tree?.bus {
            from("parent bus \(bus), driver \(tree?.driver ?? "?")", "Sysfs card info Driver:")
        } else if tree == nil, let known = Self.cardDrivers[card.driver] {
            parent.subsystem = known.bus
            parent.driver = known.driver
            from("parent bus \(known.bus), driver \(known.driver)", "card driver \(card.driver) (no sysfs section in the report)")
        }
        var properties: [String: String] = [:]
        let parentName = tree?.parent
        let pciAddress = parentName.flatMap { Self.isPCIAddress($0) ? $0 : nil }
        if let path = byPath[card.number] {
            properties["ID_PATH"] = path
            from("ID_PATH \(path)", "ALSA Device nodes /dev/snd/by-path")
        } else if let pciAddress {
            // udev's path_id for a card whose parent is a PCI function is `pci-<address>`.
            properties["ID_PATH"] = "pci-\(pciAddress)"
            from("ID_PATH pci-\(pciAddress)", "Sysfs card info device -> \(pciAddress)")
        }
        // ID_BUS as 78-sound-card.rules sets it: usb (usb_id) or pci for any such ancestor.
        let path = properties["ID_PATH"] ?? ""
        let byDriver = tree == nil && path.isEmpty ? Self.cardDrivers[card.driver]?.bus : nil
        if tree?.bus == "usb" || path.contains("-usb-") || byDriver == "usb" {
            properties["ID_BUS"] = "usb"
            if byDriver != nil { from("ID_BUS usb", "card driver \(card.driver) (no sysfs or by-path in the report)") }
        } else if tree?.bus == "pci" || path.hasPrefix("pci-") || byDriver == "pci" {
            properties["ID_BUS"] = "pci"
            if byDriver != nil { from("ID_BUS pci", "card driver \(card.driver) (no sysfs or by-path in the report)") }
        }
        if let pciAddress, let device = pciDevices.first(where: { $0.address == pciAddress }) {
            // hwdb's model comes from the same PCI database lspci names the device from.
            properties["ID_MODEL_FROM_DATABASE"] = device.deviceName
            if let classCode = device.classCode { parent.pciClass = "0x\(classCode.lowercased())00" }
            from("ID_MODEL_FROM_DATABASE \"\(device.deviceName)\"", "PCI Soundcards \(pciAddress)")
        }

        if !pins.isEmpty { from("\(pins.count) HDA pins of codec \(Set(pins.map(\.codec)).sorted().map(String.init).joined(separator: ", "))", "HDA-Intel Codec information") }
        var record = CardRecord(
            syspath: syspath, sysname: "card\(card.number)", properties: properties, attributes: ["id": card.id, "number": String(card.number)],
            pcms: pcmDevices, hasControl: true, parent: parent, info: info, hdaPins: pins)
        let saved = controls[card.id] ?? []
        record.phantomJacks = saved.filter { $0.iface == "CARD" && ControlJacks.isPhantom($0.name) }.map(\.name)
        return ALSAInfoCardHardware(
            record: record, jacks: Self.jacks(saved, card: card.number, cardSyspath: syspath), controls: saved,
            hasControls: hasControls.contains(card.id), provenance: provenance)
    }

    /// ALSA card drivers (`/proc/asound/cards`' driver field) that only one kernel driver on one
    /// bus registers: snd_hda_intel's `HDA-Intel` (sound/pci/hda/hda_intel.c, a PCI driver) and
    /// snd-usb-audio's `USB-Audio` (sound/usb/card.c, bound to a USB interface).
    static let cardDrivers: [String: (bus: String, driver: String)] = [
        "HDA-Intel": ("pci", "snd_hda_intel"), "USB-Audio": ("usb", "snd-usb-audio"),
    ]

    /// The card's jacks from its saved `… Jack` controls, by the watcher's own rule (`ControlJacks`).
    static func jacks(_ controls: [ALSAInfoControl], card: Int, cardSyspath: String) -> [JackRecord] {
        var jacks: [JackRecord] = []
        for control in controls {
            let info = elementInfo(control)
            guard ControlJacks.isJack(info), let supported = ControlJacks.switches(forName: control.name) else { continue }
            let values = control.values.map { $0 == "true" || $0 == "on" || $0 == "1" }
            jacks.append(
                JackRecord(
                    syspath: "\(cardSyspath)/controlC\(card)#\(control.numid)", cardSyspath: cardSyspath, name: ControlJacks.displayName(info.id),
                    supported: supported, state: ControlJacks.state(values, supported: supported), stateKnown: !values.isEmpty, source: .control))
        }
        return jacks
    }

    /// The saved control as the control device's ELEM_INFO would describe it.
    static func elementInfo(_ control: ALSAInfoControl) -> ALSAControlElementInfo {
        // SNDRV_CTL_ELEM_IFACE_* and SNDRV_CTL_ELEM_TYPE_* (the kernel's ABI numbers).
        let interfaces: [String: Int32] = ["CARD": 0, "HWDEP": 1, "MIXER": 2, "PCM": 3, "RAWMIDI": 4, "TIMER": 5, "SEQUENCER": 6]
        let types: [String: Int32] = ["BOOLEAN": 1, "INTEGER": 2, "ENUMERATED": 3, "BYTES": 4, "IEC958": 5, "INTEGER64": 6]
        let interface: ALSAControlElementID.Interface =
            control.iface == "CARD" ? .card : control.iface == "MIXER" ? .mixer : .init(rawValue: interfaces[control.iface] ?? -1)
        let type: ALSAControlElementInfo.ElementType = control.type == "BOOLEAN" ? .boolean : .init(rawValue: types[control.type] ?? 0)
        var access: ALSAControlElementInfo.Access = []
        if control.access.contains("read") { access.insert(.read) }
        if control.access.contains("write") { access.insert(.write) }
        if control.access.contains("inactive") { access.insert(.inactive) }
        if control.access.contains("user") { access.insert(.user) }
        let id = ALSAControlElementID(
            numid: UInt32(clamping: control.numid), interface: interface, device: UInt32(clamping: control.device), subdevice: UInt32(clamping: control.subdevice),
            name: control.name, index: UInt32(clamping: control.index))
        return ALSAControlElementInfo(id: id, type: type, access: access, count: UInt32(clamping: control.count))
    }

    /// Which card each codec belongs to. The codec dump does not say; the card's Components do
    /// (`HDA:<vendor>,<subsystem>,<revision>` per codec), else its mixer name (the first codec's).
    func assignCodecs() -> [Int: [HDAPin]] {
        var result: [Int: [HDAPin]] = [:]
        var used: [String: Int] = [:]
        let list = cardList()
        for codec in codecs {
            var candidates = list.filter { cardNames(codec, $0) }
            if candidates.isEmpty {
                candidates = list.filter { card in mixers.first { $0.cardID == card.id }?.mixerName == codec.name }
            }
            // A report of one card: the codecs are its own.
            if candidates.isEmpty, list.count == 1 { candidates = list }
            // Identical cards (two of one GPU) take their codecs in card order.
            let key = candidates.map { String($0.number) }.joined(separator: ",")
            guard !candidates.isEmpty else { continue }
            let slot = used[key, default: 0]
            let card = candidates[min(slot, candidates.count - 1)]
            if candidates.count > 1 { used[key] = slot + 1 }
            result[card.number, default: []] += codec.pinList.map { HDAPin(codec: codec.address, node: $0.node, defaultConfig: $0.config, capabilities: $0.capabilities) }
        }
        return result
    }

    /// The codecs no card claims (none names them): their pins cannot be placed.
    public var unplacedCodecs: [ALSAInfoCodec] {
        let placed = assignCodecs()
        let total = placed.values.reduce(0) { $0 + $1.count }
        guard total < codecs.reduce(0, { $0 + $1.pinList.count }) else { return [] }
        let list = cardList()
        guard list.count != 1 else { return [] }
        return codecs.filter { codec in
            let byName = list.contains { card in mixers.first { $0.cardID == card.id }?.mixerName == codec.name }
            return !list.contains { cardNames(codec, $0) } && !byName
        }
    }

    /// Whether the card's Components name the codec (`HDA:10ec0289,10280990,00100004`, any case).
    func cardNames(_ codec: ALSAInfoCodec, _ card: ALSAInfoCard) -> Bool {
        guard let word = codec.componentWord?.lowercased(), let components = mixers.first(where: { $0.cardID == card.id })?.components else { return false }
        return components.split(separator: " ").contains { $0.lowercased() == word }
    }

    static func isPCIAddress(_ name: String) -> Bool {
        // `0000:00:1f.3`.
        let parts = name.split(separator: ":")
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2 else { return false }
        let last = parts[2].split(separator: ".")
        return last.count == 2 && last[0].count == 2 && last[1].count == 1 && name.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
    }
}
