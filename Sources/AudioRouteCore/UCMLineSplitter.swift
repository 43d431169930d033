// One line splitter for both ends of the UCM helper protocol.

/// Splits the UCM helper protocol's stream into lines of at most `maximumLineLength` bytes
/// (docs/ucm.md): the helper's stdin, and the daemon's reading of the helper's stdout. A
/// longer line becomes one `.tooLong`, as soon as it is seen; the rest of it, up to its
/// newline, is dropped.
public struct UCMLineSplitter: Sendable {
    public enum Line: Sendable, Hashable {
        case line([UInt8])
        case tooLong
    }

    private var buffer: [UInt8] = []
    private var discarding = false
    public let limit: Int

    /// The longest line taken, without its newline: 64 KiB.
    public static let maximumLineLength = 65536

    public init(limit: Int = UCMLineSplitter.maximumLineLength) { self.limit = limit }

    /// The lines that `bytes` completes.
    public mutating func feed(_ bytes: some Collection<UInt8>) -> [Line] {
        var lines: [Line] = []
        var rest = bytes[...]
        while !rest.isEmpty {
            let newline = rest.firstIndex(of: UInt8(ascii: "\n"))
            let piece = rest[..<(newline ?? rest.endIndex)]
            if !discarding {
                if buffer.count + piece.count > limit {
                    lines.append(.tooLong)
                    buffer = []
                    discarding = true
                } else {
                    buffer.append(contentsOf: piece)
                }
            }
            guard let newline else { break }
            if !discarding { lines.append(.line(buffer)) }
            buffer = []
            discarding = false
            rest = rest[rest.index(after: newline)...]
        }
        return lines
    }

    /// At the end of the input: the last line if it had no newline, or nothing.
    public mutating func finish() -> Line? {
        defer {
            buffer = []
            discarding = false
        }
        return discarding || buffer.isEmpty ? nil : .line(buffer)
    }
}
