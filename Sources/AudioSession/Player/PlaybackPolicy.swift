// How a player follows its session: a pure state machine, unit-tested without
// audio. AudioPlayer feeds it the session's notifications and the user's
// play/pause, and carries out the actions it returns.
import AudioRouteCore
import AudioRouteMix

/// The duck gain applied while another session ducks this one (docs/decisions.md): AudioRouteMix's
/// (`ar_mix_gain`), the one place the ALSA plugin and the player take it from.
public let duckGain: Double = PlaybackPolicy.gain(ducked: true, silenced: false)

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
/// music when a call ends), duck while ducked, play silence while silenced.
public struct PlaybackPolicy: Sendable, Hashable {
    /// Whether audio is being written.
    public private(set) var isPlaying = false
    /// Whether the player was playing when the current interruption began.
    public private(set) var wasPlayingBeforeInterruption = false
    /// Whether an interruption is under way.
    public private(set) var isInterrupted = false
    /// Whether another session ducks this one (`ducked` came, `unducked` not yet).
    public private(set) var isDucked = false
    /// Whether silent mode (or screen lock) silences this ambient or soloAmbient session.
    public private(set) var isSilenced = false

    /// The session gain: 0 while silenced, else `duckGain` while ducked, else 1.
    public var gain: Double { Self.gain(ducked: isDucked, silenced: isSilenced) }

    /// `ar_mix_gain` (AudioRouteMix) as the float's shortest decimal: 0.3, not 0.30000001192092896,
    /// for a UI and for comparisons with `duckGain`; the engine is given the float itself.
    static func gain(ducked: Bool, silenced: Bool) -> Double {
        let gain = ar_mix_gain(ducked ? 1 : 0, silenced ? 1 : 0)
        return Double(gain.description) ?? Double(gain)
    }

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

    /// The session is inactive (found so when the player activates it): the daemon does not tell
    /// an inactive session that ducking or silencing ended, and tells it afresh once it is
    /// active again, so what the policy had heard is stale.
    public mutating func sessionInactive() -> [PlaybackAction] {
        let before = gain
        isDucked = false
        isSilenced = false
        return gain == before ? [] : [.setGain(gain)]
    }

    /// Whether `handle` can do anything with `notification`. The others (ports added or
    /// removed, silent mode changes, hints) leave the policy as it is: a player need not
    /// wait for its period in flight to hand them over (a plug's `portsChanged` would
    /// otherwise delay the `routeChange` behind it by up to a period each).
    public static func reacts(to notification: AudioSessionNotification) -> Bool {
        switch notification {
        case .routeChange, .interruption, .ducked, .unducked, .silenced, .unsilenced, .mediaServicesWereReset: true
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
        case .ducked, .unducked, .silenced, .unsilenced:
            // `silentModeChanged` is every session's news; `silenced` is this session's (an
            // ambient or soloAmbient one), which is what silences it.
            let before = gain
            switch notification {
            case .ducked: isDucked = true
            case .unducked: isDucked = false
            case .silenced: isSilenced = true
            default: isSilenced = false
            }
            return gain == before ? [] : [.setGain(gain)]
        case .mediaServicesWereReset:
            // The daemon restarted and rewrote the route file: reopen it.
            return [.reroute]
        default:
            return []
        }
    }
}
