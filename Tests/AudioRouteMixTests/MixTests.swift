// The mix code the ALSA plugin and the player share (Sources/AudioRouteMix), called in process:
// every format at unity, silence, a gain checked against AudioRouteCore's renderer bit for bit,
// rounding, clipping, and the session's gains.
import AudioRouteCore
import AudioRouteMix
import Testing

/// `bytes` after `ar_mix_apply` at `gain`.
private func applied(_ format: ar_mix_format, _ bytes: [UInt8], gain: Float) -> [UInt8] {
    var out = bytes
    let size = max(ar_mix_sample_bytes(format), 1)
    out.withUnsafeMutableBytes { ar_mix_apply(format, $0.baseAddress, $0.count / size, gain) }
    return out
}

/// Deterministic bytes (SplitMix64).
private func noise(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return UInt8(truncatingIfNeeded: z ^ (z >> 31))
    }
}

private func le(_ value: Int64, bytes: Int) -> [UInt8] {
    (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * Int64($0))) }
}

private func floatBytes(_ values: [Float]) -> [UInt8] { values.flatMap { le(Int64($0.bitPattern), bytes: 4) } }
private func floats(_ bytes: [UInt8]) -> [Float] {
    stride(from: 0, to: bytes.count, by: 4).map { (at: Int) -> Float in
        var raw: UInt32 = 0
        for index in 0..<4 { raw |= UInt32(bytes[at + index]) << UInt32(8 * index) }
        return Float(bitPattern: raw)
    }
}

/// The WAV encodings with their mix format; S24_LE (24 in 32 bits) has no WAV encoding here.
private let encodings: [(SampleEncoding, ar_mix_format)] = [
    (.unsigned8, AR_MIX_U8), (.signed16, AR_MIX_S16_LE), (.signed24, AR_MIX_S24_3LE), (.signed32, AR_MIX_S32_LE),
    (.float32, AR_MIX_FLOAT_LE), (.float64, AR_MIX_FLOAT64_LE),
]
private let allFormats = [AR_MIX_U8, AR_MIX_S16_LE, AR_MIX_S24_LE, AR_MIX_S24_3LE, AR_MIX_S32_LE, AR_MIX_FLOAT_LE, AR_MIX_FLOAT64_LE]

/// A stereo file of `encoding` holding `frames` frames of noise (exact values in −1…1 for floats).
private func file(_ encoding: SampleEncoding, frames: Int, seed: UInt64) throws -> WAVFile {
    let format = WAVFormat(encoding: encoding, channels: 2, sampleRate: 48000)
    let raw = noise(frames * 2 * encoding.bytesPerSample, seed: seed)
    if encoding == .float32 || encoding == .float64 {
        return try WAVFile(bytes: WAVFile.encode(raw.prefix(frames * 2).map { (Double($0) - 128) / 128 }, format: format))
    }
    // Raw bytes are valid samples of every integer encoding: the header of an empty file, resized.
    var bytes = WAVFile.encode([], format: format)
    bytes.replaceSubrange(4..<8, with: le(Int64(bytes.count - 8 + raw.count), bytes: 4))
    bytes.replaceSubrange((bytes.count - 4)..<bytes.count, with: le(Int64(raw.count), bytes: 4))
    return try WAVFile(bytes: bytes + raw)
}

@Suite struct MixTests {
    @Test func theSessionGains() {
        #expect(ar_mix_gain(0, 0) == 1)
        #expect(ar_mix_gain(1, 0) == Float(0.3))
        #expect(ar_mix_gain(0, 1) == 0)
        #expect(ar_mix_gain(1, 1) == 0)
        #expect(allFormats.map { ar_mix_sample_bytes($0) } == [1, 2, 4, 3, 4, 4, 8])
        #expect(ar_mix_sample_bytes(ar_mix_format(rawValue: 99)) == 0)
    }

    @Test func unityLeavesEveryFormatsBytesAlone() {
        for format in allFormats {
            // Noise includes float NaNs and infinities, and S24_LE top bytes that are not the sign's.
            let bytes = noise(24 * 64, seed: 1)  // whole samples of every format
            #expect(applied(format, bytes, gain: 1) == bytes, "\(format)")
        }
    }

    @Test func silenceIsEachFormatsOwnZero() {
        for format in allFormats {
            let bytes = noise(24 * 64, seed: 2)
            let zero: UInt8 = format == AR_MIX_U8 ? 0x80 : 0
            for gain in [Float(0), -1, .nan, -.infinity] {
                #expect(applied(format, bytes, gain: gain) == [UInt8](repeating: zero, count: bytes.count), "\(format) at \(gain)")
            }
        }
    }

    /// The renderer clamps its gain to 1: gains above it are the clipping test's.
    @Test(arguments: [Float(0.3), 0.5, 0.7071, 0.999, 0.0001])
    func aGainIsTheRenderersBitForBit(gain: Float) throws {
        for (encoding, format) in encodings {
            let source = try file(encoding, frames: 2000, seed: 3)
            var unity: [UInt8] = []
            source.render(frames: 0..<2000, as: encoding, gains: .unity, into: &unity)
            var expected: [UInt8] = []
            source.render(frames: 0..<2000, as: encoding, gains: OutputGains(gain: Double(gain)), into: &expected)
            #expect(applied(format, unity, gain: gain) == expected, "\(encoding) at \(gain)")
        }
    }

    @Test func integersRoundToNearestEven() {
        let values: [Int64] = [3, 5, -3, -5, 1, -1, 7]
        // × 0.5: 1.5 → 2, 2.5 → 2, −1.5 → −2, −2.5 → −2, 0.5 → 0, −0.5 → 0, 3.5 → 4.
        let halved: [Int64] = [2, 2, -2, -2, 0, 0, 4]
        for (format, bytes) in [(AR_MIX_S16_LE, 2), (AR_MIX_S24_3LE, 3), (AR_MIX_S24_LE, 4), (AR_MIX_S32_LE, 4)] {
            let out = applied(format, values.flatMap { le($0, bytes: bytes) }, gain: 0.5)
            #expect(out == halved.flatMap { le($0, bytes: bytes) }, "\(format)")
        }
        // U8 around 0x80: 0x83 is +3, 0x7D is −3.
        #expect(applied(AR_MIX_U8, [0x83, 0x85, 0x7D, 0x7B, 0x80], gain: 0.5) == [0x82, 0x82, 0x7E, 0x7E, 0x80])
    }

    @Test func integersClipAtTheirRangeAndFloatsDoNot() {
        let cases: [(ar_mix_format, Int, Int64, Int64)] = [
            (AR_MIX_S16_LE, 2, -32768, 32767), (AR_MIX_S24_3LE, 3, -8_388_608, 8_388_607),
            (AR_MIX_S24_LE, 4, -8_388_608, 8_388_607), (AR_MIX_S32_LE, 4, -2_147_483_648, 2_147_483_647),
        ]
        for (format, bytes, low, high) in cases {
            let input: [Int64] = [high, low, high / 2 + 1, low / 2 - 1, 100, 0, -100]
            for gain in [Float(2), 1e30, .infinity] {
                let out = applied(format, input.flatMap { le($0, bytes: bytes) }, gain: gain)
                let small: [Int64] = gain == 2 ? [200, 0, -200] : [high, 0, low]
                #expect(out == ([high, low, high, low] + small).flatMap { le($0, bytes: bytes) }, "\(format) at \(gain)")
            }
        }
        // U8: 0xFF is +127, 0x00 is −128; 0x80 (zero) stays.
        #expect(applied(AR_MIX_U8, [0xFF, 0x00, 0xC0, 0x40, 0x80, 0x81], gain: 2) == [0xFF, 0x00, 0xFF, 0x00, 0x80, 0x82])
        #expect(applied(AR_MIX_U8, [0xFF, 0x00, 0x80], gain: .infinity) == [0xFF, 0x00, 0x80])
        // Floats keep their headroom; infinity is the largest float, so zero stays zero.
        #expect(floats(applied(AR_MIX_FLOAT_LE, floatBytes([0.75, -0.75, 0]), gain: 2)) == [1.5, -1.5, 0])
        #expect(floats(applied(AR_MIX_FLOAT_LE, floatBytes([0.5, 0]), gain: .infinity)) == [.greatestFiniteMagnitude / 2, 0])
        let doubles = [0.75, -0.75].flatMap { le(Int64(bitPattern: $0.bitPattern), bytes: 8) }
        #expect(applied(AR_MIX_FLOAT64_LE, doubles, gain: 2) == [1.5, -1.5].flatMap { le(Int64(bitPattern: $0.bitPattern), bytes: 8) })
    }

    @Test func s24InThirtyTwoBitsReadsTheLowThreeBytesAndWritesTheSign() {
        // 0x00400000 is +2^22; with garbage on top (0xAB) it is the same sample. −2^22 is 0xFFC00000.
        let input: [UInt8] = [0x00, 0x00, 0x40, 0xAB, 0x00, 0x00, 0xC0, 0x12]
        #expect(applied(AR_MIX_S24_LE, input, gain: 0.5) == [0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0xE0, 0xFF])
    }

    @Test func anUnalignedBufferAndAnUnknownFormat() {
        var bytes: [UInt8] = [0xEE] + le(16384, bytes: 2) + le(-16384, bytes: 2) + [0xEE]
        bytes.withUnsafeMutableBytes { ar_mix_apply(AR_MIX_S16_LE, $0.baseAddress! + 1, 2, 0.5) }
        #expect(bytes == [0xEE] + le(8192, bytes: 2) + le(-8192, bytes: 2) + [0xEE])
        let noiseBytes = noise(16, seed: 4)
        #expect(applied(ar_mix_format(rawValue: 99), noiseBytes, gain: 0) == noiseBytes)
        ar_mix_apply(AR_MIX_S16_LE, nil, 4, 0)
    }
}
