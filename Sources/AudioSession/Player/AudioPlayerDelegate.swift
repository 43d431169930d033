// AVAudioPlayerDelegate's shape beside the player's event stream. The player hands each event to
// its delegate from one task of its own, in order, never while it holds its lock: a delegate may
// call the player back (play the next file on `didFinishPlaying`).
import Synchronization

/// Told what a player did, as AVAudioPlayerDelegate is. Every method has an empty default, as
/// AVAudioPlayerDelegate's are optional. The player holds its delegate weakly.
///
/// Calls come from a task of the player's, in the order of the player's `events`, shortly after
/// the event (not on the main actor: hop there yourself for a UI). A delegate set after an event
/// is not told of it.
public protocol AudioPlayerDelegate: AnyObject, Sendable {
    /// The file played to its end, after its loops (`successfully` true), or playback stopped on
    /// an error (false, after `audioPlayerDecodeErrorDidOccur`). Not called on `stop()`/`pause()`.
    func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool)
    /// The file failed to decode while playing (a truncated file, at the frame where it stops), or
    /// the output device failed: `error` says which and where.
    func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: AudioPlayerError)
    /// An interruption of the followed session began; the player paused if it was playing.
    func audioPlayerBeginInterruption(_ player: AudioPlayer)
    /// The interruption ended, with the session's options. The player has already resumed when
    /// it was playing at the start and `options` has `shouldResume` (`PlaybackPolicy`).
    func audioPlayerEndInterruption(_ player: AudioPlayer, options: InterruptionOptions)
}

extension AudioPlayerDelegate {
    public func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) {}
    public func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: AudioPlayerError) {}
    public func audioPlayerBeginInterruption(_ player: AudioPlayer) {}
    public func audioPlayerEndInterruption(_ player: AudioPlayer, options: InterruptionOptions) {}
}

/// The delegate, held weakly.
struct WeakDelegate {
    weak var value: (any AudioPlayerDelegate)?
}

extension AudioPlayer {
    /// Calls `delegate`'s method for `event` (events without one are not delegated).
    static func deliver(_ event: AudioPlayerEvent, from player: AudioPlayer, to delegate: any AudioPlayerDelegate) {
        switch event {
        case .finished(let successfully): delegate.audioPlayerDidFinishPlaying(player, successfully: successfully)
        case .decodeError(let error): delegate.audioPlayerDecodeErrorDidOccur(player, error: error)
        case .interruptionBegan: delegate.audioPlayerBeginInterruption(player)
        case .interruptionEnded(let options): delegate.audioPlayerEndInterruption(player, options: options)
        case .rerouted, .playingChanged: break
        }
    }
}
