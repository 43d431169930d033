/// Why a report cannot be read: the section at fault, where in the input, and what was wrong.
public struct ALSAInfoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The section's title as the report prints it (`Aplay/Arecord output`), or nil for the whole input.
    public var section: String?
    /// The 1-based line of the input where the fault was found, when one line is at fault.
    public var line: Int?
    public var message: String

    public init(section: String?, line: Int? = nil, _ message: String) {
        self.section = section
        self.line = line
        self.message = message
    }

    public var description: String {
        let place = [section.map { "section \"\($0)\"" }, line.map { "line \($0)" }].compactMap { $0 }.joined(separator: ", ")
        return place.isEmpty ? message : "\(place): \(message)"
    }
}

/// Something a report lacks or cut short that still leaves its cards readable (a truncated last
/// section, a codec dump that names no card): printed beside the result, never fatal.
public struct ALSAInfoWarning: Sendable, Hashable, CustomStringConvertible {
    public var section: String?
    public var line: Int?
    public var message: String

    public init(section: String?, line: Int? = nil, _ message: String) {
        self.section = section
        self.line = line
        self.message = message
    }

    public var description: String { ALSAInfoError(section: section, line: line, message).description }
}
