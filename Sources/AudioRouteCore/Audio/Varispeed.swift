// Varispeed playback (AVAudioPlayer's `rate`): the file is read at `rate`
// source frames per output frame, with linear interpolation between the two
// neighbouring source frames, so speed and pitch change together (a tape
// played faster). Positions and steps are 32.32 fixed point, not Double: a
// position advanced period by period stays exact however long the file, and
// the same position is reached whether a span is rendered in one go or in
// pieces (what a reroute's rewind relies on). Pure, so it is unit-tested.

/// Source frames advanced per output frame, in 1/2^32 of a frame.
public struct VarispeedStep: Sendable, Hashable {
    /// The step in 1/2^32 of a source frame (2^32 is unity).
    public let raw: UInt64

    /// One source frame per output frame.
    public static let unity = VarispeedStep(raw: 1 << 32)

    public init(raw: UInt64) {
        precondition(raw > 0, "a varispeed step must move forward")
        self.raw = raw
    }

    /// The step for `rate` (> 0, finite), rounded to the nearest 1/2^32.
    /// 0.5, 1.5 and 2 (any multiple of 2^−32) are exact.
    public init(rate: Double) {
        precondition(rate.isFinite && rate > 0 && rate < 1_048_576, "rate \(rate)")
        self.init(raw: max(1, UInt64((rate * 0x1p32).rounded())))
    }

    /// The rate this step stands for.
    public var rate: Double { Double(raw) * 0x1p-32 }

    /// Whether the step is exactly one frame.
    public var isUnity: Bool { raw == 1 << 32 }
}

/// A position between a file's frames: `frame` and a fraction of the next in 1/2^32.
public struct SourcePosition: Sendable, Hashable, Comparable {
    /// The frame at or before the position.
    public var frame: Int
    /// How far towards `frame + 1`, in 1/2^32 of a frame.
    public var fraction: UInt32

    public init(frame: Int, fraction: UInt32 = 0) {
        self.frame = frame
        self.fraction = fraction
    }

    /// The position in frames, fractional.
    public var frames: Double { Double(frame) + Double(fraction) * 0x1p-32 }

    /// The position `count` output frames later at `step`.
    public func advanced(by count: Int, step: VarispeedStep) -> SourcePosition {
        precondition(count >= 0)
        let (product, overflow) = UInt64(count).multipliedReportingOverflow(by: step.raw)
        precondition(!overflow && product < 1 << 63, "advanced too far")
        let total = UInt64(fraction) + product
        return SourcePosition(frame: frame + Int(total >> 32), fraction: UInt32(truncatingIfNeeded: total))
    }

    public static func < (a: SourcePosition, b: SourcePosition) -> Bool {
        (a.frame, a.fraction) < (b.frame, b.fraction)
    }
}

extension PCMFrames {
    /// Appends up to `maxFrames` output frames read from `position` at
    /// `step` source frames per output frame (interleaved stereo in
    /// `encoding`, scaled by `gains`, a mono file on both sides), and moves
    /// `position` past them. Each output frame is the linear interpolation
    /// of source frames `p.frame` and `p.frame + 1` at `p.fraction` (the
    /// last frame stands for the one after it); at fraction 0 it is the
    /// source frame itself. Output frames are made while `position.frame`
    /// is inside the file, so a whole file of N frames from 0 gives
    /// ceil(N × 2^32 / step.raw) frames: N/2 at rate 2, 2N at rate 0.5.
    /// Returns the number of output frames.
    @discardableResult
    public func renderVarispeed(
        from position: inout SourcePosition, step: VarispeedStep, maxFrames: Int,
        as encoding: SampleEncoding, gains: OutputGains, into out: inout [UInt8]
    ) -> Int {
        precondition(position.frame >= 0 && maxFrames >= 0)
        let total = frameCount
        guard position.frame < total, maxFrames > 0 else { return 0 }
        let (leftGain, rightGain) = gains.channelFactors
        let source = format.encoding
        let sampleSize = source.bytesPerSample
        let frameSize = format.bytesPerFrame
        let stereo = format.channels == 2
        let base = dataRange.lowerBound
        // What is left of the file at this step (ceil), capped by maxFrames;
        // beyond 2^31 source frames the shift would overflow and the loop's
        // own end test stops it.
        let span = UInt64(total - position.frame)
        let remaining = span < 1 << 31
            ? Int((span << 32 - UInt64(position.fraction) + step.raw - 1) / step.raw) : Int.max
        let count = min(maxFrames, remaining)
        if count < 1 << 24 { out.reserveCapacity(out.count + count * WAVFile.outputChannels * encoding.bytesPerSample) }
        var frame = position.frame
        var fraction = UInt64(position.fraction)
        var produced = 0
        bytes.withUnsafeBytes { buffer in
            while produced < count && frame < total {
                let at = base + frame * frameSize
                let next = frame + 1 < total ? at + frameSize : at
                let weight = Double(fraction) * 0x1p-32
                let a0 = source.read(buffer, at: at), a1 = source.read(buffer, at: next)
                let left = a0 + (a1 - a0) * weight
                let right: Double
                if stereo {
                    let b0 = source.read(buffer, at: at + sampleSize), b1 = source.read(buffer, at: next + sampleSize)
                    right = b0 + (b1 - b0) * weight
                } else {
                    right = left
                }
                encoding.append(left * leftGain, to: &out)
                encoding.append(right * rightGain, to: &out)
                fraction += step.raw
                frame += Int(fraction >> 32)
                fraction &= 0xFFFF_FFFF
                produced += 1
            }
        }
        position = SourcePosition(frame: frame, fraction: UInt32(fraction))
        return produced
    }
}
