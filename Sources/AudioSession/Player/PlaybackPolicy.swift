// How a player follows its session: a pure state machine, unit-tested without
// audio. AudioPlayer feeds it the session's notifications and the user's
// play/pause, and carries out the actions it returns.
import AudioRouteCore

/// The duck gain applied while another session ducks this one (docs/decisions.md).
public let duckGain: Double = 0.3

/// What the player must do after an event.
public enum PlaybackAction: Sendable, Hashable {
    /// Stop writing; keep the position (the next `resume` continues there).
    case pause
    /// Start writing again from the position.
    case resume
    /// Reopen the route's PCM, continuing from the same frame.
    case reroute
    /// Set the session gain (1 = not ducked).
    case setGain(Double)
}

/// The player's reaction to its session, as AVAudioPlayer apps are told to
/// behave: pause when the route's device goes away, pause on an interruption
/// and resume after it only if it was playing before (never start paused
/// music when a call ends), duck while ducked.
public struct PlaybackPolicy: Sendable, Hashable {
    /// Whether audio is being written.
    public private(set) var isPlaying = false
    /// Whether the player was playing when the current interruption began.
    public private(set) var wasPlayingBeforeInterruption = false
    /// Whether an interruption is under way.
    public private(set) var isInterrupted = false
    /// The session gain: `duckGain` while ducked, else 1.
    public private(set) var gain: Double = 1

    public init() {}

    /// The user pressed play. Plays even during an interruption (as
    /// AVAudioPlayer does when the app asks); the interruption then no
    /// longer decides whether to resume.
    public mutating func play() -> [PlaybackAction] {
        wasPlayingBeforeInterruption = false
        guard !isPlaying else { return [] }
        isPlaying = true
        return [.resume]
    }

    /// The user paused or stopped, or the file ended.
    public mutating func pause() -> [PlaybackAction] {
        wasPlayingBeforeInterruption = false
        guard isPlaying else { return [] }
        isPlaying = false
        return [.pause]
    }

    /// Whether `handle` can do anything with `notification`. The others (ports added or
    /// removed, silent mode, hints, silenced) leave the policy as it is: a player need not
    /// wait for its period in flight to hand them over (a plug's `portsChanged` would
    /// otherwise delay the `routeChange` behind it by up to a period each).
    public static func reacts(to notification: AudioSessionNotification) -> Bool {
        switch notification {
        case .routeChange, .interruption, .ducked, .unducked, .mediaServicesWereReset: true
        default: false
        }
    }

    /// A session notification.
    public mutating func handle(_ notification: AudioSessionNotification) -> [PlaybackAction] {
        switch notification {
        case .routeChange(let info):
            let moved = info.previousRoute.outputs.map(\.uid) != info.currentRoute.outputs.map(\.uid)
            if info.reason == .oldDeviceUnavailable {
                // Unplugged headphones: never go on out loud. Reroute so a later play lands on the new route.
                var actions: [PlaybackAction] = []
                if isPlaying { isPlaying = false; actions.append(.pause) }
                actions.append(.reroute)
                return actions
            }
            return moved ? [.reroute] : []
        case .interruption(let info):
            switch info.type {
            case .began:
                if info.reason == .routeDisconnected {
                    // The route's device went away: no `ended` follows, and the music
                    // stays paused until the user plays. Not a resumable interruption:
                    // a later call's end must not start it (seed 003).
                    wasPlayingBeforeInterruption = false
                    if isPlaying { isPlaying = false; return [.pause] }
                    return []
                }
                guard !isInterrupted else { return [] }
                isInterrupted = true
                wasPlayingBeforeInterruption = isPlaying
                if isPlaying { isPlaying = false; return [.pause] }
                return []
            case .ended:
                guard isInterrupted else { return [] }
                isInterrupted = false
                let resume = wasPlayingBeforeInterruption && info.options.contains(.shouldResume)
                wasPlayingBeforeInterruption = false
                if resume && !isPlaying { isPlaying = true; return [.resume] }
                return []
            }
        case .ducked:
            guard gain != duckGain else { return [] }
            gain = duckGain
            return [.setGain(duckGain)]
        case .unducked:
            guard gain != 1 else { return [] }
            gain = 1
            return [.setGain(1)]
        case .mediaServicesWereReset:
            // The daemon restarted and rewrote the route file: reopen it.
            return [.reroute]
        default:
            return []
        }
    }
}
