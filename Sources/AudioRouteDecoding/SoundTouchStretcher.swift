// SoundTouch (LGPL-2.1+) as the engine's `TimeStretcher`: the player's `rate` keeping the pitch.
// Chosen over Rubber Band, which is GPL: linked into the client library it would make every app
// a GPL work (docs/decisions.md). SoundTouch is C++; CSoundTouch is its C ABI.
import AudioRouteCore
import CSoundTouch

/// A SoundTouch stretcher (WSOLA) for stereo at `sampleRate`. It takes any block and follows
/// rate changes as it goes; its output starts at source frame 0 and, once the last frames are
/// fed, is trimmed by SoundTouch to the source's length over the rate.
public final class SoundTouchStretcher: TimeStretcher {
    private let state: OpaquePointer
    /// The final frames were fed and flushed: once the output is drained, `available` is −1.
    private var ended = false

    /// Nil when SoundTouch refuses: a sample rate outside 8 kHz…192 kHz (its windows are sized
    /// in milliseconds of the rate; it throws above 192 kHz), a rate outside 0.1…10, or no memory.
    public init?(sampleRate: Int, rate: Double) {
        guard sampleRate >= Int(AR_SOUNDTOUCH_MIN_RATE), sampleRate <= Int(AR_SOUNDTOUCH_MAX_RATE) else { return nil }
        var created: OpaquePointer?
        guard ar_soundtouch_create(UInt32(sampleRate), 2, rate, &created) == 0, let created else { return nil }
        state = created
    }

    deinit { ar_soundtouch_destroy(state) }

    /// Rates outside SoundTouch's range are kept at its bounds (the player's are 0.5…2).
    public func setRate(_ rate: Double) {
        let tempo = rate.isFinite ? min(max(rate, AR_SOUNDTOUCH_MIN_TEMPO), AR_SOUNDTOUCH_MAX_TEMPO) : 1
        _ = ar_soundtouch_set_tempo(state, tempo)
    }

    public var framesRequired: Int { max(0, Int(ar_soundtouch_required(state))) }

    public func process(left: [Float], right: [Float], final: Bool) {
        precondition(left.count == right.count)
        // At most a second at a time: the shim bounds what one call buffers.
        let chunk = Int(AR_SOUNDTOUCH_MIN_RATE)
        var start = 0
        var interleaved = [Float](repeating: 0, count: min(left.count, chunk) * 2)
        while start < left.count {
            let count = min(chunk, left.count - start)
            for index in 0..<count {
                interleaved[2 * index] = left[start + index]
                interleaved[2 * index + 1] = right[start + index]
            }
            // Cannot fail: the count is in range and the pointer valid; no memory is a trap,
            // as it is for Swift's own allocations.
            let result = interleaved.withUnsafeBufferPointer { ar_soundtouch_put(state, $0.baseAddress, UInt32(count)) }
            precondition(result == 0, "SoundTouch: out of memory")
            start += count
        }
        if final {
            precondition(ar_soundtouch_flush(state) == 0, "SoundTouch: out of memory")
            ended = true
        }
    }

    public var available: Int {
        let ready = Int(ar_soundtouch_available(state))
        return ended && ready == 0 ? -1 : ready
    }

    public func retrieve(maxFrames: Int) -> (left: [Float], right: [Float]) {
        let count = max(0, min(Int(ar_soundtouch_available(state)), maxFrames))
        guard count > 0 else { return ([], []) }
        var interleaved = [Float](repeating: 0, count: count * 2)
        let got = interleaved.withUnsafeMutableBufferPointer { Int(ar_soundtouch_receive(state, $0.baseAddress, UInt32(count))) }
        var left = [Float](), right = [Float]()
        left.reserveCapacity(got)
        right.reserveCapacity(got)
        for index in 0..<got {
            left.append(interleaved[2 * index])
            right.append(interleaved[2 * index + 1])
        }
        return (left, right)
    }

    public func reset() {
        ar_soundtouch_clear(state)
        ended = false
    }
}
