import AudioRouteSystem
import AudioRouteDBus
import Glibc

/// Finds out from the card's ALSA UCM2 profile whether it has an earpiece (a
/// phone): a `SectionDevice."Earpiece"` or `SectionDevice."Handset"` in the
/// files its `<card id>/<card id>.conf` or `conf.d/<driver>/<card id>.conf` pulls in. Read as text with plain
/// file calls: libasound must not be used to enumerate cards (see docs/ports.md).
public struct UCMProbe: Sendable {
    public static let defaultRoot = "/usr/share/alsa/ucm2"
    public let root: String

    public init(root: String) { self.root = root }

    public func hasEarpiece(_ card: CardRecord) -> Bool {
        guard let id = card.attributes["id"], CardClassifier.isALSAIdentifier(id) else { return false }
        var entries: [String] = []
        // alsa-lib's two layouts: ucm2/<card>/<card>.conf and ucm2/conf.d/<driver>/<card>.conf.
        let legacy = "\(root)/\(id)/\(id).conf"
        if access(legacy, R_OK) == 0 { entries.append(legacy) }
        for driver in Self.directoryEntries("\(root)/conf.d") {
            let path = "\(root)/conf.d/\(driver)/\(id).conf"
            if access(path, R_OK) == 0 { entries.append(path) }
        }
        return entries.contains { Self.namesEarpiece(path: $0, root: root, reader: Self.readText) }
    }

    /// Whether the UCM file at `path`, or a file it references (depth 3, 32 files), names an earpiece.
    static func namesEarpiece(path: String, root: String, reader: (String) -> String?) -> Bool {
        var queue = [(path, 0)]
        var seen: Set<String> = []
        while !queue.isEmpty, seen.count < 32 {
            let (current, depth) = queue.removeFirst()
            guard seen.insert(current).inserted, let text = reader(current) else { continue }
            for marker in ["SectionDevice.\"Earpiece\"", "SectionDevice.\"Handset\"", "SectionDevice.Earpiece", "SectionDevice.Handset"] where text.contains(marker) {
                return true
            }
            guard depth < 3 else { continue }
            let directory = current.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            for line in text.split(separator: "\n") where line.contains("File") {
                for reference in quotedStrings(line) where reference.hasSuffix(".conf") {
                    queue.append((reference.hasPrefix("/") ? root + reference : directory + "/" + reference, depth + 1))
                }
            }
        }
        return false
    }

    static func quotedStrings(_ line: Substring) -> [String] {
        let parts = line.split(separator: "\"", omittingEmptySubsequences: false)
        return stride(from: 1, to: parts.count, by: 2).map { String(parts[$0]) }
    }

    static func directoryEntries(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// A small text file's contents (at most 1 MiB), or nil.
    static func readText(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while bytes.count < 1 << 20 {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
