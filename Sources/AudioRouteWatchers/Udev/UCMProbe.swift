import AudioRouteSystem

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
        // A file that cannot be read names nothing: the reader gives nil for it.
        entries.append("\(root)/\(id)/\(id).conf")
        for driver in Self.directoryEntries("\(root)/conf.d") { entries.append("\(root)/conf.d/\(driver)/\(id).conf") }
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
        ((try? Directory.entries(path)) ?? []).sorted()
    }

    /// A small text file's contents (at most 1 MiB), or nil.
    static func readText(_ path: String) -> String? {
        guard let file = try? FileDescriptor.open(path) else { return nil }
        var bytes: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 16384, alignment: 1)
        defer { chunk.deallocate() }
        while bytes.count < 1 << 20 {
            guard let count = try? file.read(into: chunk), count > 0 else { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
