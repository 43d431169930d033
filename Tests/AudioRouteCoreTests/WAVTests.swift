// The WAV decoder: every encoding round-tripped, hand-built headers, typed
// errors for each fault, truncation at every byte, a fuzzed corpus, and
// declared sizes that would need gigabytes.
import AudioRouteCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A deterministic generator (SplitMix64), so that a failing case can be replayed.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random samples that the encoding represents exactly (integers on its grid, floats as stored).
func exactSamples(_ count: Int, _ encoding: SampleEncoding, seed: UInt64) -> [Double] {
    var random = SplitMix(state: seed)
    return (0..<count).map { _ in
        switch encoding {
        case .unsigned8: Double(Int.random(in: -128...127, using: &random)) / 128
        case .signed16: Double(Int.random(in: -32768...32767, using: &random)) / 32768
        case .signed24: Double(Int.random(in: -8_388_608...8_388_607, using: &random)) / 8_388_608
        case .signed32: Double(Int.random(in: Int(Int32.min)...Int(Int32.max), using: &random)) / 2_147_483_648
        case .float32: Double(Float.random(in: -1...1, using: &random))
        case .float64: Double.random(in: -1...1, using: &random)
        }
    }
}

private func le(_ value: UInt32, _ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) }
}

/// A file built byte by byte, independently of `WAVFile.encode`.
private func handBuilt(tag: UInt16 = 1, channels: UInt16 = 2, rate: UInt32 = 44100, blockAlign: UInt16 = 4,
                       bits: UInt16 = 16, data: [UInt8], riffSize: UInt32? = nil, dataSize: UInt32? = nil,
                       extra: [UInt8] = []) -> [UInt8] {
    var fmt = le(UInt32(tag), 2) + le(UInt32(channels), 2) + le(rate, 4)
    fmt += le(rate * UInt32(blockAlign), 4) + le(UInt32(blockAlign), 2) + le(UInt32(bits), 2)
    let body = Array("WAVE".utf8) + extra + Array("fmt ".utf8) + le(16, 4) + fmt
        + Array("data".utf8) + le(dataSize ?? UInt32(data.count), 4) + data
    return Array("RIFF".utf8) + le(riffSize ?? UInt32(body.count), 4) + body
}

private func peakResidentKilobytes() -> Int {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    return usage.ru_maxrss
}

private func decodeError(_ bytes: [UInt8]) -> WAVError? {
    do {
        _ = try WAVFile(bytes: bytes)
        return nil
    } catch {
        return error
    }
}

@Suite struct WAVDecodingTests {
    @Test(arguments: SampleEncoding.allCases, [1, 2])
    func everyEncodingRoundTrips(encoding: SampleEncoding, channels: Int) throws {
        for extensible in [false, true] {
            for rate in [8000, 22050, 44100, 48000, 96000, 192_000] {
                let format = WAVFormat(encoding: encoding, channels: channels, sampleRate: rate)
                let samples = exactSamples(channels * 257, encoding, seed: UInt64(rate + channels))
                let file = try WAVFile(bytes: WAVFile.encode(samples, format: format, extensible: extensible))
                #expect(file.format == format)
                #expect(file.frameCount == 257)
                var decoded: [Double] = []
                for frame in 0..<file.frameCount {
                    for channel in 0..<channels { decoded.append(file.sample(frame: frame, channel: channel)) }
                }
                #expect(decoded == samples, "\(encoding) \(channels) ch \(rate) Hz extensible \(extensible)")
            }
        }
    }

    @Test func aHandBuiltFileDecodesToItsBytes() throws {
        // Two stereo 16-bit frames: (1, −1), (32767, −32768), behind a LIST chunk with an odd size and its pad byte.
        let data: [UInt8] = [0x01, 0x00, 0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x80]
        let list = Array("LIST".utf8) + le(3, 4) + [0x61, 0x62, 0x63, 0x00]
        let file = try WAVFile(bytes: handBuilt(data: data, extra: list))
        #expect(file.format == WAVFormat(encoding: .signed16, channels: 2, sampleRate: 44100))
        #expect(Array(file.nativeBytes(frames: 0..<2)) == data)
        #expect(file.sample(frame: 0, channel: 0) == 1.0 / 32768)
        #expect(file.sample(frame: 0, channel: 1) == -1.0 / 32768)
        #expect(file.sample(frame: 1, channel: 0) == 32767.0 / 32768)
        #expect(file.sample(frame: 1, channel: 1) == -1)
        // 8-bit is unsigned: 0x80 is silence, 0x00 is −1.
        let eight = try WAVFile(bytes: handBuilt(channels: 1, blockAlign: 1, bits: 8, data: [0x80, 0x00, 0xFF, 0x40]))
        #expect((0..<4).map { eight.sample(frame: $0, channel: 0) } == [0, -1, 127.0 / 128, -0.5])
        // 24-bit packed little-endian: 0x800000 is −1, 0x7FFFFF the top.
        let deep = try WAVFile(bytes: handBuilt(channels: 1, blockAlign: 3, bits: 24, data: [0x00, 0x00, 0x80, 0xFF, 0xFF, 0x7F]))
        #expect(deep.sample(frame: 0, channel: 0) == -1)
        #expect(deep.sample(frame: 1, channel: 0) == 8_388_607.0 / 8_388_608)
    }

    @Test func malformedHeadersAreTypedErrors() {
        let data = [UInt8](repeating: 0, count: 16)
        #expect(decodeError(Array("RIFX".utf8) + handBuilt(data: data).dropFirst(4)) == .notWAV(reason: "no RIFF header (starts with RIFX)"))
        #expect(decodeError(Array("ID3\u{3}garbage-mp3".utf8)) == .notWAV(reason: "no RIFF header (starts with ID3\\x03)"))
        var avi = handBuilt(data: data)
        avi.replaceSubrange(8..<12, with: Array("AVI ".utf8))
        #expect(decodeError(avi) == .notWAV(reason: "RIFF form is 'AVI ', not 'WAVE'"))
        #expect(decodeError(handBuilt(tag: 2, blockAlign: 4, bits: 4, data: data)) == .unsupportedEncoding(formatTag: 2, bitsPerSample: 4))
        #expect(decodeError(handBuilt(tag: 7, blockAlign: 2, bits: 8, data: data)) == .unsupportedEncoding(formatTag: 7, bitsPerSample: 8))
        #expect(decodeError(handBuilt(tag: 1, blockAlign: 6, bits: 12, data: data)) == .unsupportedEncoding(formatTag: 1, bitsPerSample: 12))
        #expect(decodeError(handBuilt(tag: 3, blockAlign: 4, bits: 16, data: data)) == .unsupportedEncoding(formatTag: 3, bitsPerSample: 16))
        #expect(decodeError(handBuilt(channels: 0, blockAlign: 0, data: data)) == .zeroChannels)
        #expect(decodeError(handBuilt(rate: 0, data: data)) == .zeroSampleRate)
        #expect(decodeError(handBuilt(channels: 6, blockAlign: 12, data: data)) == .unsupportedChannelCount(6))
        #expect(decodeError(handBuilt(rate: 4_000_000, data: data)) == .unsupportedSampleRate(4_000_000))
        #expect(decodeError(handBuilt(blockAlign: 3, data: data)) == .blockAlignMismatch(declared: 3, expected: 4))
        #expect(decodeError(handBuilt(blockAlign: 0, data: data)) == .blockAlignMismatch(declared: 0, expected: 4))

        // data before fmt, no fmt at all, and a second fmt.
        let dataFirst = Array("RIFF".utf8) + le(16, 4) + Array("WAVEdata".utf8) + le(0, 4)
        #expect(decodeError(dataFirst) == .missingChunk("fmt "))
        let valid = handBuilt(data: data)
        let fmtChunk = Array(valid[12..<36])
        var twice = Array(valid[0..<36]) + fmtChunk + Array(valid[36...])
        twice.replaceSubrange(4..<8, with: le(UInt32(twice.count - 8), 4))
        #expect(decodeError(twice) == .malformedChunk("fmt ", reason: "a second 'fmt ' chunk"))
        // A 14-byte fmt chunk (the old WAVEFORMAT without bits per sample).
        var short = Array(valid[0..<16]) + le(14, 4) + Array(valid[20..<34]) + Array(valid[36...])
        short.replaceSubrange(4..<8, with: le(UInt32(short.count - 8), 4))
        #expect(decodeError(short) == .malformedChunk("fmt ", reason: "14 bytes, at least 16 needed"))
    }

    @Test func extensibleSubformatsAreChecked() throws {
        let format = WAVFormat(encoding: .float32, channels: 2, sampleRate: 48000)
        var bytes = WAVFile.encode([0.5, -0.5], format: format, extensible: true)
        // The sub-format GUID starts at 20 + 24; its tag 3 is float.
        #expect(bytes[44] == 3)
        #expect(try WAVFile(bytes: bytes).format == format)
        var alaw = bytes
        alaw[44] = 6
        #expect(decodeError(alaw) == .unsupportedEncoding(formatTag: 6, bitsPerSample: 32))
        bytes[50] = 0x11 // not the KSDATAFORMAT base GUID
        #expect(decodeError(bytes) == .unsupportedEncoding(formatTag: 0xFFFE, bitsPerSample: 32))
        var valid = WAVFile.encode([0.5, -0.5], format: format, extensible: true)
        valid[38] = 40 // 40 valid bits in a 32-bit container
        #expect(decodeError(valid) == .malformedChunk("fmt ", reason: "40 valid bits in a 32-bit container"))
    }

    @Test func aTrailingPartialFrameIsLeftOut() throws {
        let file = try WAVFile(bytes: handBuilt(data: [1, 0, 2, 0, 3, 0, 4]))
        #expect(file.frameCount == 1)
        #expect(Array(file.nativeBytes(frames: 0..<1)) == [1, 0, 2, 0])
    }

    @Test func truncationAtEveryByteIsATypedErrorNeverACrash() throws {
        let format = WAVFormat(encoding: .signed24, channels: 2, sampleRate: 48000)
        let whole = WAVFile.encode(exactSamples(20, .signed24, seed: 9), format: format, extensible: true)
        #expect(try WAVFile(bytes: whole).frameCount == 10)
        for length in 0..<whole.count {
            guard let error = decodeError(Array(whole.prefix(length))) else {
                Issue.record("a \(length)-byte prefix of a \(whole.count)-byte file decoded")
                continue
            }
            guard case .truncated = error else {
                Issue.record("prefix \(length): \(error), expected truncated")
                continue
            }
        }
        #expect(decodeError(Array(whole.prefix(30))) == .truncated(part: "'fmt ' chunk", offset: 20, needed: 40, available: 10))
    }

    @Test func hugeDeclaredSizesAreRefusedWithoutAllocating() throws {
        let data = [UInt8](repeating: 0, count: 64)
        let before = peakResidentKilobytes()
        // A data chunk claiming 4 GiB in a file whose RIFF header is honest about its 100 bytes.
        let lie = handBuilt(data: data, dataSize: 0xFFFF_FFF0)
        #expect(decodeError(lie) == .declaredSizeExceedsFile(chunk: "data", declared: 0xFFFF_FFF0, available: 64))
        // An unknown chunk claiming 4 GiB.
        let junk = Array("JUNK".utf8) + le(0xFFFF_FFFF, 4)
        #expect(decodeError(handBuilt(data: data, extra: junk)) == .declaredSizeExceedsFile(chunk: "JUNK", declared: 0xFFFF_FFFF, available: 96))
        // Both the RIFF and the data sizes huge: the file looks cut short.
        let both = handBuilt(data: data, riffSize: 0xFFFF_FFFF, dataSize: 0xFFFF_FF00)
        #expect(decodeError(both) == .truncated(part: "'data' chunk", offset: 44, needed: 0xFFFF_FF00, available: 64))
        // Filling a buffer of a declared size (4 GiB) would raise the peak resident size.
        let grown = peakResidentKilobytes() - before
        #expect(grown < 256 << 10, "peak resident size grew by \(grown) KiB")
    }

    @Test func aFuzzedCorpusDecodesOrThrowsTypedErrors() throws {
        var random = SplitMix(state: 0xA0D1_0207)
        var seeds: [[UInt8]] = []
        for encoding in SampleEncoding.allCases {
            for channels in [1, 2] {
                let format = WAVFormat(encoding: encoding, channels: channels, sampleRate: 44100)
                seeds.append(WAVFile.encode(exactSamples(channels * 9, encoding, seed: 3), format: format, extensible: channels == 2))
            }
        }
        var decoded = 0
        var refused: [String: Int] = [:]
        for round in 0..<6000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                switch Int.random(in: 0..<5, using: &random) {
                case 0: // flip a byte, most often in the headers
                    let limit = Bool.random(using: &random) ? min(bytes.count, 72) : bytes.count
                    if limit > 0 { bytes[Int.random(in: 0..<limit, using: &random)] = UInt8.random(in: 0...255, using: &random) }
                case 1: // cut
                    bytes.removeLast(Int.random(in: 0...min(bytes.count, 40), using: &random))
                case 2: // a random 32-bit size at a chunk-size position
                    let at = [4, 16, 40, 64].randomElement(using: &random)!
                    if at + 4 <= bytes.count { bytes.replaceSubrange(at..<(at + 4), with: le(UInt32.random(in: 0...UInt32.max, using: &random), 4)) }
                case 3: // insert junk
                    let at = Int.random(in: 0...bytes.count, using: &random)
                    bytes.insert(contentsOf: (0..<Int.random(in: 1...9, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }, at: at)
                default: // small 16-bit fields: tag, channels, block align, bits
                    let at = [20, 22, 32, 34, 36, 38, 44].randomElement(using: &random)!
                    if at + 2 <= bytes.count { bytes.replaceSubrange(at..<(at + 2), with: le(UInt32.random(in: 0...70, using: &random), 2)) }
                }
            }
            do {
                let file = try WAVFile(bytes: bytes)
                // Whatever decodes must be playable: every frame readable and renderable.
                #expect(file.dataRange.upperBound <= bytes.count)
                var out: [UInt8] = []
                file.render(frames: 0..<file.frameCount, as: .float32, gains: OutputGains(volume: 0.5, pan: 0.3), into: &out)
                #expect(out.count == file.frameCount * 8)
                decoded += 1
            } catch {
                refused[String(describing: error).split(separator: ":").first.map(String.init) ?? "", default: 0] += 1
            }
        }
        // The corpus really exercises both outcomes.
        #expect(decoded > 100)
        #expect(refused.count >= 5, "\(refused)")
    }
}

@Suite struct RenderingTests {
    @Test func unityGainsPassTheFilesOwnBytes() throws {
        for encoding in SampleEncoding.allCases {
            let format = WAVFormat(encoding: encoding, channels: 2, sampleRate: 48000)
            let file = try WAVFile(bytes: WAVFile.encode(exactSamples(200, encoding, seed: 5), format: format))
            var out: [UInt8] = []
            file.render(frames: 10..<90, as: encoding, gains: .unity, into: &out)
            #expect(out[...] == file.nativeBytes(frames: 10..<90))
        }
    }

    @Test func volumePanAndGainScaleEachChannel() throws {
        let format = WAVFormat(encoding: .signed16, channels: 2, sampleRate: 48000)
        let file = try WAVFile(bytes: WAVFile.encode([0.5, -0.5, 0.25, 1], format: format))
        func render(_ gains: OutputGains, as encoding: SampleEncoding = .float32) -> [Double] {
            var out: [UInt8] = []
            file.render(frames: 0..<2, as: encoding, gains: gains, into: &out)
            return out.withUnsafeBytes { buffer in
                (0..<4).map { encoding == .float32 ? Double(buffer.load(fromByteOffset: $0 * 4, as: Float.self)) : Double(buffer.load(fromByteOffset: $0 * 2, as: Int16.self)) / 32768 }
            }
        }
        #expect(render(.unity) == [0.5, -0.5, 0.25, 32767.0 / 32768])
        #expect(render(OutputGains(volume: 0.5)) == [0.25, -0.25, 0.125, 32767.0 / 65536])
        // Linear balance: panning right by 0.75 leaves the right side alone and the left at a quarter.
        #expect(render(OutputGains(pan: 0.75)) == [0.125, -0.5, 0.0625, 32767.0 / 32768])
        #expect(render(OutputGains(pan: -1)) == [0.5, 0, 0.25, 0])
        // Ducking multiplies with volume.
        #expect(render(OutputGains(volume: 0.5, gain: 0.5)) == [0.125, -0.125, 0.0625, Double(Float(32767.0 / 131072))])
        // Out-of-range settings are clamped, NaN silences.
        #expect(render(OutputGains(volume: 3, pan: 9, gain: 1)) == [0, -0.5, 0, 32767.0 / 32768])
        #expect(render(OutputGains(volume: .nan)) == [0, 0, 0, 0])
        // Into 16-bit: rounded to the nearest step.
        #expect(render(OutputGains(volume: 0.5), as: .signed16) == [0.25, -0.25, 0.125, 16384.0 / 32768])
    }

    @Test func monoGoesToBothSidesThenPan() throws {
        let format = WAVFormat(encoding: .unsigned8, channels: 1, sampleRate: 8000)
        let file = try WAVFile(bytes: WAVFile.encode([0.5, -1], format: format))
        var out: [UInt8] = []
        file.render(frames: 0..<2, as: .unsigned8, gains: .unity, into: &out)
        #expect(out == [192, 192, 0, 0])
        out = []
        file.render(frames: 0..<2, as: .signed16, gains: OutputGains(pan: 0.5), into: &out)
        #expect(out == [0x00, 0x20, 0x00, 0x40, 0x00, 0xC0, 0x00, 0x80])
    }
}
