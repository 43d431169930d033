// "Did you mean": the closest known name to a mistyped one, for the CLI's and the daemon's
// messages about an unknown category, mode, option or command. Pure.

/// The nearest of a list of names to a mistyped one.
public enum Suggestion {
    /// The name of `candidates` closest to `text` by edit distance (a swap of two neighbours
    /// counts one), case ignored, if it is close enough to be what was meant: at most a third of
    /// its length away, and 2 at most. Ties go to the first in `candidates`.
    public static func closest(to text: String, among candidates: [String]) -> String? {
        let typed = Array(text.lowercased())
        guard !typed.isEmpty else { return nil }
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let wanted = Array(candidate.lowercased())
            let limit = min(2, max(1, wanted.count / 3))
            guard abs(wanted.count - typed.count) <= limit else { continue }
            let distance = editDistance(typed, wanted)
            if distance <= limit, distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        return best?.name
    }

    /// "unknown KIND "TEXT" (did you mean "X"?); one of: A, B, C": the message for an unknown name.
    public static func unknown(_ kind: String, _ text: String, among candidates: [String]) -> String {
        let guess = closest(to: text, among: candidates).map { " (did you mean \"\($0)\"?)" } ?? ""
        return "unknown \(kind) \"\(text)\"\(guess); one of: \(candidates.joined(separator: ", "))"
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and swaps of
    /// neighbours, each 1.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { current[j] = min(current[j], before[j - 2] + 1) }
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }
}
