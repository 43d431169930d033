import AudioRouteCore
import AudioRouteSystem

/// Lines collected and written to standard output in large chunks (a 10,000-step run is one
/// write per 64 KiB).
struct OutputBuffer {
    private var pending: [UInt8] = []

    init() { pending.reserveCapacity(65536) }

    mutating func append(_ line: String) { append(Array(line.utf8)) }

    /// A line for a person that carries text from other processes (app names, port names):
    /// controls and bidirectional overrides escaped (TerminalText). Not for JSON, which escapes
    /// them itself.
    mutating func appendText(_ line: String) { append(TerminalText.safe(line)) }

    mutating func append(_ line: [UInt8]) {
        pending.append(contentsOf: line)
        pending.append(UInt8(ascii: "\n"))
        if pending.count >= 65536 { flush() }
    }

    mutating func flush() {
        StandardStream.output.write(pending)
        pending.removeAll(keepingCapacity: true)
    }
}

/// Messages for a person, on standard error.
enum Terminal {
    static func error(_ message: String) { line("audioroute: error: \(message)") }
    static func warning(_ message: String) { line("audioroute: warning: \(message)") }
    /// A state worth knowing that is not a failure (a source this machine lacks).
    static func note(_ message: String) { line("audioroute: \(message)") }

    static func line(_ text: String) { StandardStream.error.write(text + "\n") }
}
