// Substring search without the _StringProcessing module: the daemon's build turns its implicit
// import off (scripts/build-daemon), as `contains(_:)` and `firstRange(of:)` on strings, which
// live there, link it and _RegexParser in (about 0.35 MiB of the daemon's mapped code;
// docs/daemon.md, "Memory"). Characters are compared as _StringProcessing compares them.

extension StringProtocol {
    /// The first range where `text` occurs, Character by Character; nil if it does not, or if
    /// `text` is empty.
    package func firstRange(ofText text: some StringProtocol) -> Range<Index>? {
        guard let first = text.first else { return nil }
        var start = startIndex
        while let candidate = self[start...].firstIndex(of: first) {
            var here = candidate
            var there = text.startIndex
            while there != text.endIndex, here != endIndex, self[here] == text[there] {
                formIndex(after: &here)
                text.formIndex(after: &there)
            }
            if there == text.endIndex { return candidate..<here }
            start = index(after: candidate)
        }
        return nil
    }

    /// Whether `text` occurs in this string, Character by Character (an empty `text` does).
    package func contains(text: some StringProtocol) -> Bool {
        text.isEmpty || firstRange(ofText: text) != nil
    }

    /// This string with every `character` replaced by `replacement`.
    package func replacing(character: Character, with replacement: Character) -> String {
        String(map { $0 == character ? replacement : $0 })
    }
}
