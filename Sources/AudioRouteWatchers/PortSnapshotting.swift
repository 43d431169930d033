import AudioRouteSystem
import AudioRouteDBus
import AudioRouteCore

/// A watcher that can also say which ports exist right now, without watching
/// (`audioroute ports --direct`): it enumerates its source once and returns.
public protocol PortSnapshotting: PortWatcher {
    /// The ports present now. Throws when the source cannot be reached at all.
    func currentPorts() async throws -> [Port]
}
