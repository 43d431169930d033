// The report as lines and sections. alsa-info.sh writes `!!Title` over `!!-----` for each section;
// reports in the wild also carry the upload form's first line, markdown fences, HTML tags and
// entities from the page they were pasted into, and `--startcollapse--` markers.

/// One line of the report, with its 1-based number in the input.
struct ReportLine: Sendable, Hashable {
    var number: Int
    var text: Substring
}

/// One `!!Title` / `!!-----` section: its title and the lines up to the next one.
struct ReportSection: Sendable {
    var title: String
    var headerLine: Int
    var lines: [ReportLine]
    /// True for the last section of the input: if the input was cut, it was cut here.
    var isLast: Bool
}

enum ReportText {
    /// The input's lines, cleaned of what pasting adds: carriage returns, markdown fences and
    /// quote marks, HTML tags around the text and HTML entities, the collapse markers.
    static func lines(_ text: String) -> [ReportLine] {
        var result: [ReportLine] = []
        var number = 0
        // "\r\n" is one Character in Swift: split on both.
        let raws = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        // A report quoted in a reply (`> !!Soundcards…`): its quote marks go.
        let quoted = raws.contains { $0.hasPrefix("> !!") || $0.hasPrefix(">!!") }
        for raw in raws {
            number += 1
            var line = raw
            if quoted, line.hasPrefix(">") { line = line.dropFirst(line.hasPrefix("> ") ? 2 : 1) }
            if line.last == "\r" { line = line.dropLast() }
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") { continue }
            if trimmed == "--startcollapse--" || trimmed == "--endcollapse--" { continue }
            if isTagLine(trimmed) { continue }
            line = stripTags(line)
            if line.contains("&") { line = Substring(decodeEntities(line)) }
            result.append(ReportLine(number: number, text: line))
        }
        return result
    }

    /// A line that is only HTML structure a forum or issue adds (`<details>`, `<summary>…</summary>`).
    static func isTagLine(_ line: Substring) -> Bool {
        for tag in ["<details", "</details", "<summary", "</summary", "<blockquote", "</blockquote"] where line.hasPrefix(tag) {
            return true
        }
        return false
    }

    /// Drops `<pre>`/`<code>` opening a line and their closing tags ending it.
    static func stripTags(_ line: Substring) -> Substring {
        var line = line
        for tag in ["<pre>", "<code>", "<pre><code>"] where line.hasPrefix(tag) { line = line.dropFirst(tag.count) }
        for tag in ["</code></pre>", "</pre>", "</code>"] where line.hasSuffix(tag) { line = line.dropLast(tag.count) }
        return line
    }

    static func decodeEntities(_ line: Substring) -> String {
        var out = String(line)
        for (entity, character) in [("&gt;", ">"), ("&lt;", "<"), ("&quot;", "\""), ("&#39;", "'"), ("&#039;", "'"), ("&apos;", "'"), ("&amp;", "&")] {
            if out.contains(entity) { out = out.replacing(entity, with: character) }
        }
        return out
    }

    /// Whether a line is a section's underline: `!!` and dashes only.
    static func isUnderline(_ line: Substring) -> Bool {
        line.count >= 4 && line.hasPrefix("!!---") && line.dropFirst(2).allSatisfy { $0 == "-" }
    }

    /// The sections, in order, and the lines before the first one (the script's banner).
    static func sections(_ lines: [ReportLine]) -> (banner: [ReportLine], sections: [ReportSection]) {
        var banner: [ReportLine] = []
        var sections: [ReportSection] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            let trimmed = line.text.trimmingTrailingSpace()
            if trimmed.hasPrefix("!!"), !isUnderline(trimmed), index + 1 < lines.count, isUnderline(lines[index + 1].text.trimmingTrailingSpace()) {
                sections.append(ReportSection(title: String(trimmed.dropFirst(2)).trimmingSpace(), headerLine: line.number, lines: [], isLast: false))
                index += 2
                continue
            }
            if sections.isEmpty { banner.append(line) } else { sections[sections.count - 1].lines.append(line) }
            index += 1
        }
        if !sections.isEmpty { sections[sections.count - 1].isLast = true }
        return (banner, sections)
    }
}

extension StringProtocol {
    func trimmingSpace() -> String {
        let scalars = Array(unicodeScalars)
        guard let start = scalars.firstIndex(where: { !isSpace($0) }), let end = scalars.lastIndex(where: { !isSpace($0) }) else { return "" }
        var out = String.UnicodeScalarView()
        out.append(contentsOf: scalars[start...end])
        return String(out)
    }

    func trimmingTrailingSpace() -> Substring {
        var text = Substring(self)
        while let last = text.unicodeScalars.last, isSpace(last) { text = text.dropLast() }
        return text
    }
}

private func isSpace(_ scalar: Unicode.Scalar) -> Bool {
    scalar == " " || scalar == "\t" || scalar == "\r" || scalar == "\n" || scalar == "\u{A0}"
}
