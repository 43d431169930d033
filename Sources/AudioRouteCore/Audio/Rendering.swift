// Turning decoded frames (a WAV file's, or a decoder's window) into what the output device is opened with:
// always stereo (a mono file is copied to both sides, so pan works on it),
// in an encoding of the caller's choice (the player uses the file's own, so
// that at unity gain the device gets the file's exact bits), with volume,
// pan and a ducking gain applied per channel. Pure, so it is unit-tested.

/// Volume, pan and a ducking gain, reduced to one factor per output channel.
public struct OutputGains: Sendable, Hashable {
    /// 0…1 (clamped).
    public var volume: Double
    /// −1 (left only) … 0 (centre) … 1 (right only) (clamped).
    public var pan: Double
    /// An extra factor 0…1 (clamped), e.g. the session's duck gain.
    public var gain: Double

    public init(volume: Double = 1, pan: Double = 0, gain: Double = 1) {
        self.volume = volume
        self.pan = pan
        self.gain = gain
    }

    /// Unity on both sides: samples pass through unchanged.
    public static let unity = OutputGains()

    /// The factor for the left and the right channel. Pan is a linear balance:
    /// the side panned away from falls linearly to 0 and the other stays at 1,
    /// so pan 0 is exactly unity (bit-transparent) on a stereo file.
    public var channelFactors: (left: Double, right: Double) {
        let volume = Self.clamp(volume, 0, 1) * Self.clamp(gain, 0, 1)
        let pan = Self.clamp(pan, -1, 1)
        let left = pan > 0 ? 1 - pan : 1
        let right = pan < 0 ? 1 + pan : 1
        return (volume * left, volume * right)
    }

    private static func clamp(_ value: Double, _ low: Double, _ high: Double) -> Double {
        // NaN becomes the low end rather than poisoning every sample.
        guard value >= low else { return low }
        return value > high ? high : value
    }
}

extension SampleEncoding {
    /// The sample at `at` in `bytes`, scaled to −1…1 (integers divided by 2^(bits−1)).
    @inline(__always)
    func read(_ bytes: UnsafeRawBufferPointer, at: Int) -> Double {
        switch self {
        case .unsigned8:
            return (Double(bytes[at]) - 128) / 128
        case .signed16:
            let raw = UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
            return Double(Int16(bitPattern: raw)) / 32768
        case .signed24:
            let raw = UInt32(bytes[at]) << 8 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 24
            return Double(Int32(bitPattern: raw) >> 8) / 8_388_608
        case .signed32:
            let raw = UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
            return Double(Int32(bitPattern: raw)) / 2_147_483_648
        case .float32:
            let raw = UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
            return Double(Float(bitPattern: raw))
        case .float64:
            var raw: UInt64 = 0
            for index in 0..<8 { raw |= UInt64(bytes[at + index]) << (8 * UInt64(index)) }
            return Double(bitPattern: raw)
        }
    }

    /// Appends `value` (−1…1, clamped for integers; rounded to nearest) in this encoding.
    @inline(__always)
    func append(_ value: Double, to out: inout [UInt8]) {
        switch self {
        case .unsigned8:
            out.append(UInt8(Self.quantize(value, scale: 128, low: -128, high: 127) + 128))
        case .signed16:
            let sample = UInt16(bitPattern: Int16(Self.quantize(value, scale: 32768, low: -32768, high: 32767)))
            out.append(UInt8(truncatingIfNeeded: sample))
            out.append(UInt8(truncatingIfNeeded: sample >> 8))
        case .signed24:
            let sample = UInt32(bitPattern: Int32(Self.quantize(value, scale: 8_388_608, low: -8_388_608, high: 8_388_607)))
            out.append(UInt8(truncatingIfNeeded: sample))
            out.append(UInt8(truncatingIfNeeded: sample >> 8))
            out.append(UInt8(truncatingIfNeeded: sample >> 16))
        case .signed32:
            let sample = UInt32(bitPattern: Int32(Self.quantize(value, scale: 2_147_483_648, low: -2_147_483_648, high: 2_147_483_647)))
            Self.appendLittleEndian(UInt64(sample), bytes: 4, to: &out)
        case .float32:
            Self.appendLittleEndian(UInt64(Float(value).bitPattern), bytes: 4, to: &out)
        case .float64:
            Self.appendLittleEndian(value.bitPattern, bytes: 8, to: &out)
        }
    }

    @inline(__always)
    private static func quantize(_ value: Double, scale: Double, low: Int64, high: Int64) -> Int64 {
        let scaled = (value * scale).rounded(.toNearestOrEven)
        // Comparisons first: converting NaN or an out-of-range double to Int64 traps.
        guard scaled >= Double(low) else { return low }
        guard scaled <= Double(high) else { return high }
        return Int64(scaled)
    }

    @inline(__always)
    private static func appendLittleEndian(_ value: UInt64, bytes: Int, to out: inout [UInt8]) {
        for index in 0..<bytes { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }
}

extension WAVFile {
    /// Channels of the rendered output: always 2.
    public static let outputChannels = 2
}

extension PCMFrames {

    /// The file's samples for the sample at (`frame`, `channel`), scaled to −1…1.
    public func sample(frame: Int, channel: Int) -> Double {
        precondition(frame >= 0 && frame < frameCount && channel >= 0 && channel < format.channels)
        let at = dataRange.lowerBound + frame * format.bytesPerFrame + channel * format.encoding.bytesPerSample
        return bytes.withUnsafeBytes { format.encoding.read($0, at: at) }
    }

    /// The file's own interleaved bytes for `frames` (no conversion).
    public func nativeBytes(frames: Range<Int>) -> ArraySlice<UInt8> {
        precondition(frames.lowerBound >= 0 && frames.upperBound <= frameCount)
        let size = format.bytesPerFrame
        return bytes[(dataRange.lowerBound + frames.lowerBound * size)..<(dataRange.lowerBound + frames.upperBound * size)]
    }

    /// Appends `frames` to `out` as interleaved stereo in `encoding`, scaled
    /// by `gains`. A mono file's sample goes to both sides before pan.
    public func render(frames: Range<Int>, as encoding: SampleEncoding, gains: OutputGains, into out: inout [UInt8]) {
        precondition(frames.lowerBound >= 0 && frames.upperBound <= frameCount)
        let (left, right) = gains.channelFactors
        let source = format.encoding
        let step = source.bytesPerSample
        let frameSize = format.bytesPerFrame
        let stereo = format.channels == 2
        out.reserveCapacity(out.count + frames.count * WAVFile.outputChannels * encoding.bytesPerSample)
        // Same encoding at unity: the bytes themselves (also the common case, and exact by construction).
        if encoding == source, stereo, left == 1, right == 1 {
            out.append(contentsOf: nativeBytes(frames: frames))
            return
        }
        bytes.withUnsafeBytes { buffer in
            var at = dataRange.lowerBound + frames.lowerBound * frameSize
            for _ in frames {
                let first = source.read(buffer, at: at)
                let second = stereo ? source.read(buffer, at: at + step) : first
                encoding.append(first * left, to: &out)
                encoding.append(second * right, to: &out)
                at += frameSize
            }
        }
    }
}
