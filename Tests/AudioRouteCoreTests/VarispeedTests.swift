// The varispeed resampler (AudioPlayer.rate): output counts, exact sample
// values on a ramp, a sine against its formula, and that rendering in pieces
// equals rendering in one go (what the engine's periods and rewinds rely on).
import AudioRouteCore
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// A 16-bit stereo ramp: left frame i is 8·i, right −8·i (in LSBs), so midpoints are integers.
private func ramp(_ frames: Int) throws -> WAVFile {
    var samples: [Double] = []
    for i in 0..<frames {
        samples.append(Double(i * 8) / 32768)
        samples.append(Double(-i * 8) / 32768)
    }
    return try WAVFile(bytes: WAVFile.encode(samples, format: WAVFormat(encoding: .signed16, channels: 2, sampleRate: 48000)))
}

/// `frames` stereo frames: left `left(k)`, right `right(k)`.
private func pairs(_ frames: Int, _ left: (Int) -> Int, _ right: (Int) -> Int) -> [Int] {
    var out: [Int] = []
    for k in 0..<frames {
        out.append(left(k))
        out.append(right(k))
    }
    return out
}

/// Interleaved Int16 samples of `bytes`.
private func int16s(_ bytes: [UInt8]) -> [Int] {
    stride(from: 0, to: bytes.count, by: 2).map { Int(Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)) }
}

private func renderAll(_ file: WAVFile, rate: Double, maxFrames: Int = .max, gains: OutputGains = .unity) -> (frames: Int, bytes: [UInt8]) {
    var position = SourcePosition(frame: 0)
    var out: [UInt8] = []
    var total = 0
    while true {
        let frames = file.renderVarispeed(
            from: &position, step: VarispeedStep(rate: rate), maxFrames: maxFrames, as: file.format.encoding, gains: gains, into: &out)
        if frames == 0 { return (total, out) }
        total += frames
    }
}

@Suite struct VarispeedTests {
    @Test func stepsOfCommonRatesAreExact() {
        #expect(VarispeedStep(rate: 1) == .unity && VarispeedStep.unity.isUnity)
        #expect(VarispeedStep(rate: 2).raw == 1 << 33)
        #expect(VarispeedStep(rate: 0.5).raw == 1 << 31)
        #expect(VarispeedStep(rate: 1.5).raw == 3 << 31)
        #expect(VarispeedStep(rate: 1.5).rate == 1.5)
        #expect(SourcePosition(frame: 3).advanced(by: 3, step: VarispeedStep(rate: 1.5)) == SourcePosition(frame: 7, fraction: 1 << 31))
    }

    @Test func outputFrameCountsForAWholeFile() throws {
        let file = try ramp(1000)
        #expect(renderAll(file, rate: 2).frames == 500)
        #expect(renderAll(file, rate: 0.5).frames == 2000)
        #expect(renderAll(file, rate: 1.5).frames == 667)  // ceil(1000 / 1.5)
        #expect(renderAll(file, rate: 1).frames == 1000)
        let odd = try ramp(999)
        #expect(renderAll(odd, rate: 2).frames == 500)  // source frames 0, 2, …, 998
    }

    @Test func aRampIsResampledToTheExactValues() throws {
        let file = try ramp(100)
        // Rate 2: every other frame, as it is.
        let double = int16s(renderAll(file, rate: 2).bytes)
        #expect(double == pairs(50, { 16 * $0 }, { -16 * $0 }))
        // Rate 0.5: each frame, then the midpoint to the next; the last frame is held.
        let half = int16s(renderAll(file, rate: 0.5).bytes)
        var expected: [Int] = []
        for k in 0..<100 {
            expected += [8 * k, -8 * k]
            let next = min(k + 1, 99)
            expected += [4 * (k + next), -4 * (k + next)]
        }
        #expect(half == expected)
        // Rate 1.5: frame k is source 1.5·k, i.e. 12·k LSBs on the ramp.
        let faster = int16s(renderAll(file, rate: 1.5).bytes)
        #expect(faster == pairs(67, { 12 * $0 }, { -12 * $0 }))
    }

    @Test func aSineMatchesItsFormulaWithinTheInterpolationBound() throws {
        // 441 Hz at 48 kHz played at 1.3: a 573.3 Hz sine. Linear interpolation
        // is off by at most A·ω²/8 (ω in radians per source frame), plus an
        // LSB for the two roundings: about 7.8 LSB here, where a wrong phase
        // or frequency would be off by thousands.
        let frames = 4800
        let amplitude = 0.5
        func value(_ t: Double) -> Double { amplitude * sin(2 * Double.pi * 441 * t / 48000) }
        var samples: [Double] = []
        for i in 0..<frames { samples += [value(Double(i)), value(Double(i))] }
        let file = try WAVFile(bytes: WAVFile.encode(samples, format: WAVFormat(encoding: .signed16, channels: 2, sampleRate: 48000)))
        let out = int16s(renderAll(file, rate: 1.3, maxFrames: 333).bytes)
        let step = VarispeedStep(rate: 1.3)
        #expect(out.count == 2 * Int((Double(frames) / step.rate).rounded(.up)))
        var worst = 0.0
        // Up to the last source frame (beyond it the last frame is held, not extrapolated).
        for k in 0..<(out.count / 2) where Double(k) * step.rate <= Double(frames - 1) {
            let ideal = value(Double(k) * step.rate) * 32768
            worst = max(worst, abs(Double(out[2 * k]) - ideal), abs(Double(out[2 * k + 1]) - ideal))
        }
        let omega = 2 * Double.pi * 441 / 48000
        #expect(worst <= amplitude * 32768 * omega * omega / 8 + 1, "worst error \(worst) LSB")
    }

    @Test func piecesEqualOneGoAndGainsAndMonoApply() throws {
        let file = try ramp(1000)
        for rate in [0.5, 0.77, 1.5, 1.999] {
            #expect(renderAll(file, rate: rate, maxFrames: 7).bytes == renderAll(file, rate: rate).bytes, "rate \(rate)")
        }
        // Gains: the left side at half volume, the right panned away.
        let gains = OutputGains(volume: 0.5, pan: -1)
        #expect(int16s(renderAll(file, rate: 2, gains: gains).bytes) == pairs(500, { 8 * $0 }, { _ in 0 }))
        // Mono: both sides get the interpolated sample.
        let monoSamples: [Double] = (0..<10).map { Double($0 * 8) / 32768 }
        let mono = try WAVFile(bytes: WAVFile.encode(monoSamples, format: WAVFormat(encoding: .signed16, channels: 1, sampleRate: 8000)))
        #expect(int16s(renderAll(mono, rate: 1.5).bytes) == pairs(7, { 12 * $0 }, { 12 * $0 }))
    }
}
