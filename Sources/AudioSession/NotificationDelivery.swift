// How notifications reach an app's tasks. A route change is the notification that
// apps wait on, so it takes the short way: the D-Bus connection's thread turns the
// daemon's broadcast into a notification and yields it to the subscribers itself,
// instead of handing it to a Swift task that hops onto the AudioSession actor and
// yields from there (on a Dispatch executor, a second pool thread to wake). Everything
// that needs the actor's state (session signals, the daemon leaving and coming back)
// still goes through the actor, and the order of the signals is kept (SignalGate).
import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteIPC
import Logging
import Synchronization

/// The subscribers of one `AudioSession`, and the daemon's unique name as the actor last
/// saw it, shared by the actor and the D-Bus connection's thread.
final class NotificationDelivery: Sendable {
    private struct State {
        var owner: String?
        var subscribers: [Int: AsyncStream<AudioSessionNotification>.Continuation] = [:]
        var next = 0
    }

    private let state = Mutex(State())

    /// The daemon's unique name (set by the actor as it changes).
    var owner: String? {
        get { state.withLock { $0.owner } }
        set { state.withLock { $0.owner = newValue } }
    }

    func subscribe(_ continuation: AsyncStream<AudioSessionNotification>.Continuation) -> Int {
        state.withLock { state in
            state.next += 1
            state.subscribers[state.next] = continuation
            return state.next
        }
    }

    func unsubscribe(_ id: Int) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: id) }
    }

    func post(_ notification: AudioSessionNotification) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for continuation in subscribers { continuation.yield(notification) }
    }

    func finishAll() {
        let subscribers = state.withLock { state in
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for continuation in subscribers { continuation.finish() }
    }

    /// Called on the connection's thread with each signal: posts the manager's broadcasts
    /// (RouteChanged, PortsChanged, AllPortsChanged, SilentModeChanged, ScreenLockChanged, and Monitor1's SessionChanged) from the daemon itself and takes them;
    /// leaves every other signal, and every signal while earlier ones are still on their way
    /// through the actor, to the actor.
    func intercept(_ signal: DBusSignal, gate: SignalGate, logger: Logger) -> Bool {
        let fast = signal.interface == DBusAPI.managerInterface || signal.interface == DBusAPI.monitorInterface
        guard gate.pass(fast: fast) else { return false }
        // Taken: from the daemon, posted; from anyone else, dropped (as the actor would).
        if signal.sender != nil, signal.sender == owner, let notification = Self.broadcast(signal, logger: logger) {
            post(notification)
        }
        return true
    }

    /// The notification a manager broadcast stands for; nil for an unknown member or a
    /// malformed one (logged).
    static func broadcast(_ signal: DBusSignal, logger: Logger) -> AudioSessionNotification? {
        do {
            if signal.interface == DBusAPI.monitorInterface {
                guard signal.member == DBusAPI.Monitor.sessionChanged.name else { return nil }
                return .sessionActivity(try DBusAPI.sessionChanged(signal.arguments))
            }
            switch signal.member {
            case DBusAPI.Manager.routeChanged.name: return .routeChange(try Wire.routeChange(signal.arguments))
            case DBusAPI.Manager.portsChanged.name:
                let (kind, port) = try Wire.portsChanged(signal.arguments)
                return .portsChanged(kind, port)
            case DBusAPI.Manager.allPortsChanged.name:
                let (kind, port) = try Wire.allPortsChanged(signal.arguments)
                return .allPortsChanged(kind, port)
            case DBusAPI.Manager.silentModeChanged.name:
                guard let first = signal.arguments.first else { return nil }
                return .silentModeChanged(try Wire.bool(first, DBusAPI.Manager.silentModeChanged.name))
            case DBusAPI.Manager.screenLockChanged.name:
                guard let first = signal.arguments.first else { return nil }
                return .screenLockChanged(try Wire.bool(first, DBusAPI.Manager.screenLockChanged.name))
            default: return nil
            }
        } catch {
            logger.warning("audioroute: ignoring \(signal.member) from the daemon: \(error)")
            return nil
        }
    }
}

/// Keeps the order of one connection's signals across its two ways to the subscribers:
/// a signal may take the short way only when the connection is set up (the daemon's name
/// is known) and no earlier signal is still waiting for, or in, the actor.
final class SignalGate: Sendable {
    private let state = Mutex((open: false, queued: 0))

    /// True when a signal that can take the short way may; otherwise counts it as queued.
    func pass(fast: Bool) -> Bool {
        state.withLock { state in
            if fast && state.open && state.queued == 0 { return true }
            state.queued += 1
            return false
        }
    }

    /// The actor has handled one queued signal.
    func handled() {
        state.withLock { $0.queued = max(0, $0.queued - 1) }
    }

    /// The connection is set up: the actor knows the daemon's name.
    func open() {
        state.withLock { $0.open = true }
    }
}
