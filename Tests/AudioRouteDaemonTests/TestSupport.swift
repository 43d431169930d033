// File helpers and a log handler that records, without Foundation. The harness
// shared with the other test targets (temporary directories, child processes,
// the notify socket, a private bus) is in AudioRouteTestKit.
@_exported import AudioRouteTestKit
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif


/// A log handler that keeps every message, for asserting on warnings.
struct RecordingLogHandler: LogHandler {
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    final class Store: Sendable {
        let entries = Mutex<[Entry]>([])
        var all: [Entry] { entries.withLock { $0 } }
    }

    let store: Store
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    init(store: Store) { self.store = store }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var flat: [String: String] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { flat[key] = "\(value)" }
        store.entries.withLock { $0.append(Entry(level: event.level, message: "\(event.message)", metadata: flat)) }
    }
}

/// A logger whose messages land in the returned store.
func recordingLogger() -> (Logger, RecordingLogHandler.Store) {
    let store = RecordingLogHandler.Store()
    return (Logger(label: "test") { _ in RecordingLogHandler(store: store) }, store)
}
