import AudioRouteSystem
import AudioRouteWatchers

// A report's card as the UCM tests' fake card (Sources/AudioRouteFakeCard/fake-card-ctl.c, read its
// header for the format): the card's identity and its controls with their values when the
// report was made, so that a stock UCM profile can be loaded against the card a user has.

/// The `audioroute_fakecard.<id> { … }` block for one card, and what it had to leave out.
public struct FakeCardConfiguration: Sendable, Hashable {
    /// ALSA configuration text.
    public var text: String
    /// One line per control left out, and why (also written in the text as comments).
    public var skipped: [String]

    /// The element types the fake card can hold; BYTES, IEC958 and INTEGER64 it cannot.
    public static let types: Set<String> = ["BOOLEAN", "INTEGER", "ENUMERATED"]
    /// The interfaces it has: card (jacks) and mixer.
    public static let interfaces: Set<String> = ["CARD", "MIXER"]

    /// Renders `card`: driver, names, components, mixer name, and each control it can hold with
    /// its index (when not 0) and values (booleans on/off, integers as numbers, enumerated as items).
    /// A control whose index is not 0 is keyed `"<name>,<index>"` with a `name` field, as two
    /// controls of one name (`Capture Switch` 0 and 1) cannot share a key in ALSA's configuration.
    /// The most values a control of the fake card has (the plugin's MAX_VALUES): a control of
    /// more (a DSP's coefficient table) is skipped rather than making the card fail to open.
    public static let maxChannels = 16

    public static func render(_ card: ALSAInfoCardHardware) -> FakeCardConfiguration {
        let info = card.record.info ?? ALSACardInfo(id: card.record.attributes["id"] ?? card.record.sysname)
        var skipped: [String] = []
        var lines: [String] = []
        lines.append("# \(comment(info.id)): from an alsa-info.sh report (audioroute ALSAInfo FakeCardConfiguration).")
        lines.append("audioroute_fakecard.\(quotedKey(info.id)) {")
        lines.append("\tdriver \(quoted(info.driver)) name \(quoted(info.name)) longname \(quoted(info.longName))")
        lines.append("\tcomponents \(quoted(info.components)) mixername \(quoted(info.mixerName))")
        // Its number as the report gives it: the UCM helper opens cards as hw:<number>.
        if let number = card.record.attributes["number"].flatMap({ Int($0) }) { lines.append("\tnumber \(number)") }
        lines.append("\tcontrols {")
        let jackNumids = Set(card.jacks.compactMap { $0.syspath.split(separator: "#").last.flatMap { Int($0) } })
        for control in card.controls {
            let label = control.index == 0 ? "\"\(control.name)\"" : "\"\(control.name)\",\(control.index)"
            guard types.contains(control.type) else {
                skipped.append("\(label): type \(control.type.lowercased()), which the fake card cannot hold")
                lines.append("\t\t# skipped \(comment(label)): type \(control.type.lowercased())")
                continue
            }
            guard interfaces.contains(control.iface) else {
                skipped.append("\(label): iface \(control.iface.lowercased()), which the fake card does not have")
                lines.append("\t\t# skipped \(comment(label)): iface \(control.iface.lowercased())")
                continue
            }
            guard (1...maxChannels).contains(control.count) else {
                skipped.append("\(label): \(control.count) channels, over the \(maxChannels) the fake card holds")
                lines.append("\t\t# skipped \(comment(label)): \(control.count) channels")
                continue
            }
            var fields: [String] = []
            if control.index != 0 { fields.append("name \(quoted(control.name)) index \(control.index)") }
            if control.iface == "CARD" { fields.append("iface card") }
            fields.append("type \(control.type.lowercased())")
            if control.count != 1 { fields.append("count \(control.count)") }
            if control.type == "INTEGER" {
                if let min = control.min { fields.append("min \(min)") }
                if let max = control.max { fields.append("max \(max)") }
            }
            if control.type == "ENUMERATED" { fields.append("items [ \(control.items.map(quoted).joined(separator: " ")) ]") }
            if jackNumids.contains(control.numid) { fields.append("jack true") }
            if let values = values(control) { fields.append("value [ \(values.joined(separator: " ")) ]") }
            let key = control.index == 0 ? quoted(control.name) : quoted("\(control.name),\(control.index)")
            lines.append("\t\t\(key) { \(fields.joined(separator: " ")) }")
        }
        lines.append("\t}")
        lines.append("}")
        return FakeCardConfiguration(text: lines.joined(separator: "\n") + "\n", skipped: skipped)
    }

    /// The values as the fake card writes them: on/off, numbers, item names; nil when one cannot be.
    static func values(_ control: ALSAInfoControl) -> [String]? {
        guard !control.values.isEmpty else { return nil }
        var out: [String] = []
        for value in control.values {
            switch control.type {
            case "BOOLEAN":
                guard value == "true" || value == "false" else { return nil }
                out.append(value == "true" ? "on" : "off")
            case "INTEGER":
                guard Int(value) != nil else { return nil }
                out.append(value)
            case "ENUMERATED":
                // alsactl saves the item's name, or its number when the item has no name.
                if control.items.contains(value) {
                    out.append(quoted(value))
                } else if let number = Int(value), control.items.indices.contains(number) {
                    out.append(quoted(control.items[number]))
                } else {
                    return nil
                }
            default:
                return nil
            }
        }
        return out
    }

    /// A double-quoted ALSA configuration string.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default: out.unicodeScalars.append(scalar.value < 0x20 || scalar.value == 0x7F ? "?" : scalar)
            }
        }
        return out + "\""
    }

    /// A card id as a configuration key: ALSA ids are words already; anything else is quoted.
    static func quotedKey(_ id: String) -> String {
        id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") } && !id.isEmpty ? id : quoted(id)
    }

    /// Text safe inside a `#` comment (one line).
    static func comment(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 ? "?" : Character($0) })
    }
}
