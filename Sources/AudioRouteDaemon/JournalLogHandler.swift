// Logging for journald: when the daemon's standard error is the journal's stream
// (systemd sets JOURNAL_STREAM), each line carries its syslog priority as a `<N>`
// prefix (sd-daemon(3)) and no time stamp, which journald adds itself. Elsewhere
// (a terminal, a test, a file) swift-log's StreamLogHandler writes as before.
import AudioRouteCore
import AudioRouteSystem
import Logging

/// A swift-log handler writing one line per message to a file descriptor in the form
/// journald reads from a service's standard error: `<4>audiorouted.udev: message key=value`.
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let fd: Int32

    public init(label: String, fd: Int32 = 2, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.fd = fd
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        let line = Self.line(level: event.level, label: label, message: event.message.description, metadata: merged)
        // One write per line: lines from the daemon's threads do not interleave. A failure
        // leaves nowhere to log to: nothing else to do.
        BorrowedDescriptor(fd).write(line)
    }

    /// The syslog priority journald reads from the `<N>` prefix.
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }

    /// One line: priority, label, message (newlines flattened: journald would start a new
    /// entry, at the default priority, at each), metadata sorted by key.
    public static func line(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        var text = "<\(priority(level))>\(label): " + message.replacing(character: "\n", with: " ")
        for key in metadata.keys.sorted() {
            text += " \(key)=\(String(describing: metadata[key]!).replacing(character: "\n", with: " "))"
        }
        return text + "\n"
    }

    /// Whether `fd` is the journal's stream: `JOURNAL_STREAM` names its device and inode
    /// ("dev:ino", decimal; systemd.exec(5)). A mere presence of the variable is not enough:
    /// a child that inherited it may have had its standard error redirected.
    public static func isJournalStream(environment: [String: String], fd: Int32 = 2) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        guard let status = try? BorrowedDescriptor(fd).status else { return false }
        return status.device == device && status.inode == inode
    }
}

/// The daemon's log handlers: journald's form when `journal` (standard error is the journal's
/// stream: ``JournalLogHandler/isJournalStream(environment:fd:)``), swift-log's
/// StreamLogHandler otherwise; both at `level`.
public func daemonLogHandler(label: String, level: Logger.Level, journal: Bool) -> any LogHandler {
    var handler: any LogHandler = journal ? JournalLogHandler(label: label) : StreamLogHandler.standardError(label: label)
    handler.logLevel = level
    return handler
}
