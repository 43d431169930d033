// The time-stretch the player's engine renders through at a rate other than 1 when the pitch is
// kept (AVAudioPlayer's `rate`): an interface here, a library behind it (AudioRouteDecoding's
// SoundTouch), so that only players load the library.

/// A streaming time-stretch of stereo float frames: fed source frames, it gives output frames at
/// `1/rate` their length, at the same pitch.
public protocol TimeStretcher: AnyObject {
    /// Sets the speed: source frames per output frame (0.5…2), from the next frames processed.
    func setRate(_ rate: Double)
    /// How many source frames it wants before it can give more output.
    var framesRequired: Int { get }
    /// Feeds planar stereo frames (−1…1); `final` when they are the source's last.
    func process(left: [Float], right: [Float], final: Bool)
    /// Output frames ready; −1 once everything after a `final` was retrieved.
    var available: Int { get }
    /// Up to `maxFrames` output frames.
    func retrieve(maxFrames: Int) -> (left: [Float], right: [Float])
    /// Forgets what it holds (a seek).
    func reset()
}
