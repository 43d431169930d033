// The README's table of parts against the tree: a folder nobody names, or a page the README
// names that is not there, is a reader sent nowhere.
import AudioRouteTestKit
import Glibc
import Testing

@Suite struct ReadmeTests {
    static let root = Subprocess.packageRoot

    /// The README's "What is here" table, the rows only.
    static func partsTable() throws -> String {
        let readme = try readText(root + "/README.md")
        guard let start = readme.range(of: "## What is here") else { throw TestFailure("README.md has no \"What is here\" section") }
        let rest = readme[start.upperBound...]
        let end = rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// Every folder under Sources/ and Benchmarks/, every folder under the watchers, and the
    /// top-level folders that hold parts, are named in the table (`Sources/X`, or `X` in a row
    /// that lists several).
    @Test func theTableNamesEveryPart() throws {
        let table = try Self.partsTable()
        var missing: [String] = []
        for top in ["Sources", "Benchmarks"] {
            for name in directoryEntries(Self.root + "/" + top) where Self.isDirectory(Self.root + "/\(top)/\(name)") {
                if !table.contains("`\(top)/\(name)") && !table.contains("`\(name)`") && !table.contains("\(top)/\(name)`") {
                    missing.append("\(top)/\(name)")
                }
            }
        }
        for name in directoryEntries(Self.root + "/Sources/AudioRouteWatchers") where Self.isDirectory(Self.root + "/Sources/AudioRouteWatchers/\(name)") {
            if !table.contains("`\(name)/`") { missing.append("Sources/AudioRouteWatchers/\(name)") }
        }
        for folder in ["scripts", "bench", "docs", "examples", "udev-rules", "systemd", "dbus", "Tests", "Benchmarks"] where Self.isDirectory(Self.root + "/" + folder) {
            if !table.contains("`\(folder)/`") { missing.append(folder + "/") }
        }
        // share/ is named by its parts: what the plugin installs, what the demo loads.
        for name in directoryEntries(Self.root + "/share") where Self.isDirectory(Self.root + "/share/" + name) {
            if !table.contains("`share/\(name)/`") { missing.append("share/\(name)/") }
        }
        #expect(missing.isEmpty, "README.md's table of parts does not name: \(missing)")
    }

    /// Every docs page the README names exists, and every page in docs/ is named there.
    @Test func theDocsPagesAndTheReadmeAgree() throws {
        let readme = try readText(Self.root + "/README.md")
        let pages = directoryEntries(Self.root + "/docs").filter { $0.hasSuffix(".md") }
        #expect(!pages.isEmpty)
        let unnamed = pages.filter { !readme.contains("`\($0)`") && !readme.contains("docs/\($0)") }
        #expect(unnamed.isEmpty, "docs pages the README does not name: \(unnamed)")
        // Names in backticks that look like docs pages: `name.md` or `docs/name.md`.
        var named: Set<String> = []
        for piece in readme.split(separator: "`") where piece.hasSuffix(".md") && !piece.contains(" ") {
            let name = piece.hasPrefix("docs/") ? String(piece.dropFirst(5)) : String(piece)
            if !name.contains("/") && name != "README.md" { named.insert(name) }
        }
        let absent = named.filter { access(Self.root + "/docs/" + $0, F_OK) != 0 }.sorted()
        #expect(absent.isEmpty, "the README names docs pages that are not there: \(absent)")
    }

    /// Reference pages say how things are now: our issue numbers belong to lab-notes.md and git
    /// (an upstream project's issue, `owner/repo issue N`, is a citation and stays).
    @Test func theReferencePagesCiteNoIssueOfOurs() throws {
        var found: [String] = []
        for page in directoryEntries(Self.root + "/docs") where page.hasSuffix(".md") && page != "lab-notes.md" {
            for (number, line) in try readText(Self.root + "/docs/" + page).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let words = line.split(separator: " ")
                for (index, word) in words.enumerated() where index + 1 < words.count {
                    guard word.hasSuffix("issue") || word.hasSuffix("issues"), let next = words[index + 1].first, next.isNumber else { continue }
                    let cited = index > 0 && words[index - 1].contains("/")
                    if !cited { found.append("docs/\(page):\(number + 1): \(line)") }
                }
            }
        }
        #expect(found.isEmpty, "issue numbers in reference pages: \(found)")
    }

    /// A dated figure is history: it belongs to lab-notes.md, or to benchmarks.md's tables of
    /// current figures, which say when they were measured. A day written YYYY-MM-DD anywhere else
    /// (the README included) is one.
    @Test func onlyTheBenchmarksAndTheLabNotesCarryDates() throws {
        var found: [String] = []
        let pages = directoryEntries(Self.root + "/docs").filter { $0.hasSuffix(".md") && $0 != "lab-notes.md" && $0 != "benchmarks.md" }
            .map { "docs/" + $0 } + ["README.md"]
        for page in pages {
            for (number, line) in try readText(Self.root + "/" + page).split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where Self.containsDay(line.utf8) {
                found.append("\(page):\(number + 1): \(line)")
            }
        }
        #expect(found.isEmpty, "dates in reference pages: \(found)")
    }

    /// Whether the text has four digits, '-', two digits, '-', two digits.
    static func containsDay(_ text: Substring.UTF8View) -> Bool {
        let bytes = Array(text)
        let shape: [Bool] = [true, true, true, true, false, true, true, false, true, true]  // true: a digit
        guard bytes.count >= shape.count else { return false }
        for start in 0...(bytes.count - shape.count) {
            let matches = shape.indices.allSatisfy { i in
                let byte = bytes[start + i]
                return shape[i] ? (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) : byte == UInt8(ascii: "-")
            }
            if matches { return true }
        }
        return false
    }
}
