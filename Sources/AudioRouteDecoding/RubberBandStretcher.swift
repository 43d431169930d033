// Rubber Band (its C API, real-time mode) as the engine's `TimeStretcher`: the player's `rate`
// keeping the pitch. Chosen over SoundTouch, which has only a C++ API (docs/decisions.md).
import AudioRouteCore
import CRubberBand

/// A Rubber Band stretcher for stereo at `sampleRate`, in real-time mode (it takes any block and
/// follows rate changes as it goes). Its start is padded and its start delay dropped, as Rubber
/// Band's documentation asks of real-time use, so output frame 0 is source frame 0.
public final class RubberBandStretcher: TimeStretcher {
    private let state: RubberBandState
    private let sampleRate: Int
    /// Output frames still to drop (the start delay).
    private var toDrop = 0

    public init(sampleRate: Int, rate: Double) {
        // Real-time mode, Rubber Band's faster (R2) engine: docs/benchmarks.md has its cost.
        state = rubberband_new(UInt32(sampleRate), 2, RubberBandOptions(RubberBandOptionProcessRealTime.rawValue), 1 / rate, 1)
        self.sampleRate = sampleRate
        start()
    }

    deinit { rubberband_delete(state) }

    /// The padding Rubber Band prefers before the first frame, and the delay to drop after it.
    private func start() {
        let pad = Int(rubberband_get_preferred_start_pad(state))
        if pad > 0 {
            let zeros = [Float](repeating: 0, count: pad)
            process(left: zeros, right: zeros, final: false)
        }
        toDrop = Int(rubberband_get_start_delay(state))
    }

    public func setRate(_ rate: Double) { rubberband_set_time_ratio(state, 1 / rate) }

    public var framesRequired: Int { Int(rubberband_get_samples_required(state)) }

    public func process(left: [Float], right: [Float], final: Bool) {
        precondition(left.count == right.count)
        left.withUnsafeBufferPointer { l in
            right.withUnsafeBufferPointer { r in
                var channels: [UnsafePointer<Float>?] = [l.baseAddress, r.baseAddress]
                channels.withUnsafeMutableBufferPointer { pointers in
                    pointers.withMemoryRebound(to: UnsafePointer<Float>?.self) { rebound in
                        rubberband_process(state, rebound.baseAddress, UInt32(left.count), final ? 1 : 0)
                    }
                }
            }
        }
        dropStartDelay()
    }

    /// Drops the start delay's output frames as they become available.
    private func dropStartDelay() {
        while toDrop > 0 {
            let ready = Int(rubberband_available(state))
            guard ready > 0 else { return }
            let (_, _) = take(min(ready, toDrop))
            toDrop -= min(ready, toDrop)
        }
    }

    public var available: Int {
        let ready = Int(rubberband_available(state))
        return ready < 0 ? -1 : ready
    }

    public func retrieve(maxFrames: Int) -> (left: [Float], right: [Float]) {
        let ready = Int(rubberband_available(state))
        return take(max(0, min(ready, maxFrames)))
    }

    private func take(_ count: Int) -> (left: [Float], right: [Float]) {
        guard count > 0 else { return ([], []) }
        var left = [Float](repeating: 0, count: count), right = [Float](repeating: 0, count: count)
        var got = 0
        left.withUnsafeMutableBufferPointer { l in
            right.withUnsafeMutableBufferPointer { r in
                var channels: [UnsafeMutablePointer<Float>?] = [l.baseAddress, r.baseAddress]
                got = Int(channels.withUnsafeMutableBufferPointer { rubberband_retrieve(state, $0.baseAddress, UInt32(count)) })
            }
        }
        return (Array(left.prefix(got)), Array(right.prefix(got)))
    }

    public func reset() {
        rubberband_reset(state)
        start()
    }
}
