import AudioRouteSystem

/// An `alsa-info.sh` report, read: what each section that describes the hardware says
/// (docs/alsa-info.md). Sections this reader does not use are skipped.
public struct ALSAInfoReport: Sendable {
    /// The largest report read: real ones are 50-500 KB; the size is checked before reading.
    public static let maxBytes = 4 << 20

    /// `0.5.3`, from the banner, when present.
    public var scriptVersion: String?
    /// Every section's title, in order.
    public var sectionTitles: [String] = []
    /// "Soundcards recognised by ALSA".
    public var cards: [ALSAInfoCard] = []
    /// "Aplay/Arecord output".
    public var pcms: [ALSAInfoPCM] = []
    /// "Amixer output", per card.
    public var mixers: [ALSAInfoMixer] = []
    /// "Alsactl output": every control per card id, in saved order.
    public var controls: [String: [ALSAInfoControl]] = [:]
    /// Whether the report has an "Alsactl output" section with a state for the card id.
    public var hasControls: Set<String> = []
    /// "Sysfs card info", by card number.
    public var sysfs: [Int: ALSAInfoSysfsCard] = [:]
    /// "ALSA Device nodes": `/dev/snd/by-path` (udev's ID_PATH) and `/dev/snd/by-id`, by card number.
    public var byPath: [Int: String] = [:]
    public var byID: [Int: String] = [:]
    /// "HDA-Intel Codec information", in the order printed.
    public var codecs: [ALSAInfoCodec] = []
    /// "PCI Soundcards installed in the system".
    public var pciDevices: [ALSAInfoPCIDevice] = []
    /// "DMI Information": `Manufacturer`, `Product Name`, `Board Name`...
    public var dmi: [(key: String, value: String)] = []
    /// What was missing or cut but left the cards readable.
    public var warnings: [ALSAInfoWarning] = []

    public init() {}

    /// Reads the report at `path`: its size checked first, then at most `maxBytes`.
    public static func read(path: String) throws -> ALSAInfoReport {
        let status = try FileStatus(path: path)
        guard status.kind == .regular || status.kind == .characterDevice || status.kind == .fifo else {
            throw ALSAInfoError(section: nil, "\(path) is not a file")
        }
        if status.kind == .regular, status.size > Int64(maxBytes) {
            throw ALSAInfoError(section: nil, "\(path) has \(status.size) bytes: more than the \(maxBytes) an alsa-info.sh report can have")
        }
        let file = try FileDescriptor.open(path)
        var bytes: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 1)
        defer { chunk.deallocate() }
        while bytes.count <= maxBytes {
            let count = try file.read(into: chunk)
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        // A pipe or a file that grew is bounded here.
        if bytes.count > maxBytes { throw ALSAInfoError(section: nil, "\(path) has more than the \(maxBytes) bytes an alsa-info.sh report can have") }
        return try parse(bytes)
    }

    /// Reads a report from its bytes (not UTF-8 is replaced, never fatal).
    public static func parse(_ bytes: [UInt8]) throws(ALSAInfoError) -> ALSAInfoReport {
        guard bytes.count <= maxBytes else { throw ALSAInfoError(section: nil, "the input has \(bytes.count) bytes: more than the \(maxBytes) an alsa-info.sh report can have") }
        return try parse(String(decoding: bytes, as: UTF8.self))
    }

    /// Reads a report from its text.
    public static func parse(_ text: String) throws(ALSAInfoError) -> ALSAInfoReport {
        guard text.utf8.count <= maxBytes else { throw ALSAInfoError(section: nil, "the input has \(text.utf8.count) bytes: more than the \(maxBytes) an alsa-info.sh report can have") }
        let (banner, sections) = ReportText.sections(ReportText.lines(text))
        var report = ALSAInfoReport()
        for line in banner where line.text.hasPrefix("!!ALSA Information Script v ") {
            report.scriptVersion = line.text.dropFirst("!!ALSA Information Script v ".count).trimmingSpace()
        }
        var sawCards = false
        var sawPCMs = false
        for section in sections {
            report.sectionTitles.append(section.title)
            switch section.title {
            case "Soundcards recognised by ALSA":
                try report.once(&sawCards, section)
                report.cards = try CardsSection.parse(section)
            case "Aplay/Arecord output":
                try report.once(&sawPCMs, section)
                let (pcms, warnings) = try PCMSection.parse(section)
                report.pcms = pcms
                report.warnings += warnings
            case "Amixer output":
                report.mixers = try AmixerSection.parse(section)
            case "Alsactl output":
                let (cards, warnings) = try AlsactlSection.parse(section)
                for (id, controls) in cards {
                    report.controls[id, default: []] += controls
                    report.hasControls.insert(id)
                }
                report.warnings += warnings
            case "Sysfs card info":
                for card in try SysfsSection.parse(section) { report.sysfs[card.number] = card }
            case "ALSA Device nodes":
                (report.byPath, report.byID) = DeviceNodesSection.parse(section)
            case "HDA-Intel Codec information":
                let (codecs, warnings) = try CodecSection.parse(section)
                report.codecs = codecs
                report.warnings += warnings
            case "PCI Soundcards installed in the system":
                report.pciDevices = PCISection.parse(section)
            case "DMI Information":
                report.dmi = KeyValueSection.parse(section)
            default:
                continue  // Sections that say nothing about the cards' ports (modules, packages, dmesg...).
            }
        }
        guard sawCards || sawPCMs else {
            let found = sections.isEmpty ? "no section at all" : "sections \(sections.prefix(4).map { "\"\($0.title.prefix(40))\"" }.joined(separator: ", "))"
            throw ALSAInfoError(section: nil, "not an alsa-info.sh report: neither \"Soundcards recognised by ALSA\" nor \"Aplay/Arecord output\" is there (\(found))")
        }
        if !sawCards {
            report.warnings.append(ALSAInfoWarning(section: "Soundcards recognised by ALSA", "the section is missing: the cards are taken from the aplay/arecord listing, without driver or long name"))
        }
        if !sawPCMs {
            report.warnings.append(ALSAInfoWarning(section: "Aplay/Arecord output", "the section is missing: PCMs are taken from the sysfs tree, without their names"))
        }
        try report.checkConsistency()
        return report
    }

    mutating func once(_ seen: inout Bool, _ section: ReportSection) throws(ALSAInfoError) {
        guard !seen else { throw ALSAInfoError(section: section.title, line: section.headerLine, "the section appears twice: two reports pasted together?") }
        seen = true
    }

    /// Cross-section faults: a PCM of a card the cards section does not list.
    func checkConsistency() throws(ALSAInfoError) {
        guard !cards.isEmpty else { return }
        for pcm in pcms where !cards.contains(where: { $0.number == pcm.card }) {
            throw ALSAInfoError(section: "Aplay/Arecord output", "card \(pcm.card) [\(pcm.cardID)] has PCM \(pcm.device), but \"Soundcards recognised by ALSA\" lists no card \(pcm.card)")
        }
    }

    /// The DMI's product line (`Dell Inc. XPS 13 9310`), for the explanation.
    public var machine: String? {
        func value(_ key: String) -> String? { dmi.first { $0.key == key }.flatMap { $0.value.isEmpty ? nil : $0.value } }
        let words = [value("Manufacturer"), value("Product Name"), value("Product Version"), value("Board Name").map { "(board \($0))" }].compactMap { $0 }
        return words.isEmpty ? nil : words.joined(separator: " ")
    }
}
