// The player's decoder (libsndfile) on files made at test time from a known signal by Debian's
// own encoders (sox, flac, oggenc, opusenc, lame): lossless formats sample-exact, lossy ones
// correlated with the signal; more than two channels by the downmix rule; broken files as
// named errors with nothing left open; and the player playing them into a file PCM.
import AudioRouteCore
import AudioRouteDecoding
import AudioRouteSystem
import AudioRouteTestKit
import AudioSession
import CMpg123
import Glibc
import Testing

/// The encoder `name` on PATH; a missing one fails the test, naming the Debian package
/// (scripts/bootstrap installs it).
func tool(_ name: String, package: String) throws -> String {
    let path = Environment.variables["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") where FileInfo.isReadable("\(directory)/\(name)") {
        return "\(directory)/\(name)"
    }
    throw TestFailure("\(name) is not installed: apt-get install \(package) (scripts/bootstrap installs it)")
}

func encode(_ name: String, package: String, _ arguments: [String]) throws {
    let result = try ChildProcess(try tool(name, package: package), arguments).collect()
    guard result.status == 0 else { throw TestFailure("\(name) \(arguments): status \(result.status): \(result.stderr)") }
}

private let rate = 48000

/// Two sines (440 Hz left, 660 Hz right) at half scale with a little of the other side, so that
/// a swapped or shifted channel does not pass: `frames` stereo frames, interleaved, −1…1.
private func signal(frames: Int) -> [Double] {
    var samples: [Double] = []
    for frame in 0..<frames {
        let t = Double(frame) / Double(rate)
        let left = sin(2 * .pi * 440 * t), right = sin(2 * .pi * 660 * t)
        samples += [0.5 * left + 0.1 * right, 0.5 * right - 0.1 * left]
    }
    return samples
}

/// The known signal as a WAV in `encoding` at `path`, and its bytes as decoded.
@discardableResult
private func writeSignal(_ path: String, encoding: SampleEncoding = .signed16, frames: Int = 12000) throws -> WAVFile {
    let bytes = WAVFile.encode(signal(frames: frames), format: WAVFormat(encoding: encoding, channels: 2, sampleRate: rate))
    try AtomicFile.write(bytes, to: path)
    return try WAVFile(bytes: bytes)
}

/// Every frame of `decoder`, read as the engine reads them (a window's worth at a time, in
/// pieces that cross the windows' edges), after a seek to the end and back.
private func decodeAll(_ decoder: SoundFileDecoder) throws(FrameReadError) -> [UInt8] {
    _ = try decoder.frames((decoder.frameCount - 10)..<decoder.frameCount)
    var out: [UInt8] = []
    var at = 0
    while at < decoder.frameCount {
        let piece = try decoder.frames(at..<min(decoder.frameCount, at + 1001))
        out += piece.bytes
        at += piece.frameCount
    }
    return out
}

/// The samples of `bytes` (float32 stereo) for `channel`.
private func floats(_ bytes: [UInt8], channel: Int) -> [Double] {
    bytes.withUnsafeBytes { raw in
        let values = raw.bindMemory(to: Float.self)
        return stride(from: channel, to: values.count, by: 2).map { Double(values[$0]) }
    }
}

/// The largest normalised correlation of `decoded` with `reference` over shifts 0…`maxLag`
/// (an encoder's delay), on 0.1 s from frame 4800 of the reference.
private func bestCorrelation(_ decoded: [Double], _ reference: [Double], maxLag: Int = 3000) -> Double {
    let span = 4800..<9600
    var best = -1.0
    for lag in 0...maxLag where span.upperBound + lag <= decoded.count {
        var dot = 0.0, a = 0.0, b = 0.0
        for index in span {
            dot += decoded[index + lag] * reference[index]
            a += decoded[index + lag] * decoded[index + lag]
            b += reference[index] * reference[index]
        }
        best = max(best, dot / (a * b).squareRoot())
    }
    return best
}

/// Open descriptors of this process.
private func openDescriptors() -> Int { (try? Directory.entries("/proc/self/fd").count) ?? -1 }

enum Lossless: String, CaseIterable, Sendable {
    case wav16, wav24, aiff, caf, flac16, flac24
}

enum Lossy: String, CaseIterable, Sendable {
    /// `mp3`: VBR with a Xing/LAME header behind an ID3v2 tag; `mp3WithoutHeader`: VBR without
    /// one (`lame -t`), whose length only a count of the frames gives.
    case vorbis, opus, mp3, mp3WithoutHeader
}

@Suite(.serialized) struct DecodingTests {
    @Test(arguments: Lossless.allCases)
    func losslessFormatsDecodeSampleExact(_ kind: Lossless) throws {
        try withSyncTemporaryDirectory { dir in
            let wav = dir + "/signal.wav"
            let source = try writeSignal(wav, encoding: kind == .wav24 || kind == .flac24 ? .signed24 : .signed16)
            let path: String
            switch kind {
            case .wav16, .wav24: path = wav
            case .aiff: path = dir + "/signal.aiff"; try encode("sox", package: "sox", [wav, path])
            case .caf: path = dir + "/signal.caf"; try encode("sox", package: "sox", [wav, path])
            case .flac16, .flac24: path = dir + "/signal.flac"; try encode("flac", package: "flac", ["-s", wav, "-o", path])
            }
            let decoder = try SoundFileDecoder(contentsOf: path)
            #expect(decoder.frameCount == source.frameCount)
            #expect(decoder.format == source.format, "\(decoder.decodedFormat.name)")
            let container = ["wav16": "WAV", "wav24": "WAV", "aiff": "AIFF", "caf": "CAF", "flac16": "FLAC", "flac24": "FLAC"][kind.rawValue]!
            #expect(decoder.decodedFormat.name.hasPrefix(container), "\(decoder.decodedFormat.name)")
            #expect(try decodeAll(decoder) == Array(source.nativeBytes(frames: 0..<source.frameCount)))
        }
    }

    /// Lossy codecs: the right length (libsndfile trims the encoders' delay and padding: Opus's
    /// pre-skip, the LAME tag's gapless info) and a correlation of at least 0.99 with the signal
    /// on each channel, with the other channel's signal much lower (not swapped).
    @Test(arguments: Lossy.allCases)
    func lossyFormatsCorrelateWithTheSignal(_ kind: Lossy) throws {
        try withSyncTemporaryDirectory { dir in
            let wav = dir + "/signal.wav"
            let source = try writeSignal(wav)
            let path: String
            switch kind {
            case .vorbis: path = dir + "/signal.ogg"; try encode("oggenc", package: "vorbis-tools", ["-Q", wav, "-o", path])
            case .opus: path = dir + "/signal.opus"; try encode("opusenc", package: "opus-tools", ["--quiet", wav, path])
            case .mp3, .mp3WithoutHeader:
                // VBR (-V 4, with its Xing/LAME header unless -t) and an ID3v2 tag ahead of the audio.
                path = dir + "/signal.mp3"
                let header = kind == .mp3 ? [] : ["-t"]
                try encode("lame", package: "lame", ["--quiet", "-V", "4"] + header + ["--add-id3v2", "--tt", "Known signal", wav, path])
                let head = Array(try AtomicFile.read(path).prefix(4096))
                #expect(head.starts(with: Array("ID3".utf8)))
                #expect(String(decoding: head, as: UTF8.self).contains("Xing") == (kind == .mp3), "the VBR header")
            }
            let decoder = try SoundFileDecoder(contentsOf: path)
            if kind == .mp3 || kind == .mp3WithoutHeader { #expect(decoder.decodedFormat.name == "MP3") }
            #expect(decoder.format == WAVFormat(encoding: .float32, channels: 2, sampleRate: rate))
            // Without a LAME tag nothing says how much of the first and last MPEG frames is the
            // encoder's delay and padding (LAME's delay is 576 + the decoder's 529 samples, its
            // padding under one 1152-sample frame): the length is whole frames, up to two more.
            let slack = kind == .mp3WithoutHeader ? 2304 : 1152
            #expect(abs(decoder.frameCount - source.frameCount) <= slack, "\(decoder.frameCount) frames")
            let bytes = try decodeAll(decoder)
            // The same bytes from memory decode the same (the shim's memory file).
            let fromData = try SoundFileDecoder(data: try AtomicFile.read(path))
            #expect(fromData.frameCount == decoder.frameCount && fromData.decodedFormat.name == decoder.decodedFormat.name)
            #expect(try decodeAll(fromData) == bytes)
            var reference: [[Double]] = [[], []]
            for frame in 0..<source.frameCount {
                for channel in 0..<2 { reference[channel].append(source.sample(frame: frame, channel: channel)) }
            }
            for channel in 0..<2 {
                let decoded = floats(bytes, channel: channel)
                let same = bestCorrelation(decoded, reference[channel])
                #expect(same >= 0.99, "\(kind) channel \(channel): correlation \(same)")
                #expect(bestCorrelation(decoded, reference[1 - channel]) < 0.5, "\(kind) channel \(channel) looks swapped")
            }
        }
    }

    /// 5.1 in WAV order (FL FR FC LFE BL BR), each channel a constant: the output is
    /// L = FL + (FC + BL)/√2, R = FR + (FC + BR)/√2, without the LFE.
    @Test func sixChannelsAreMixedDownByTheITURule() throws {
        try withSyncTemporaryDirectory { dir in
            let levels = [0.1, 0.2, 0.3, 0.4, 0.05, 0.15]
            let frames = 1000
            let samples = (0..<frames).flatMap { _ in levels }
            try AtomicFile.write(
                WAVFile.encode(samples, format: WAVFormat(encoding: .signed16, channels: 6, sampleRate: rate)), to: dir + "/six.wav")
            let player = try AudioPlayer(contentsOf: dir + "/six.wav", routeFile: nil)
            #expect(player.numberOfChannels == 6)
            #expect(!player.channelAssignments.contains { $0.sourceChannel == 3 }, "the LFE is dropped")
            let decoder = try SoundFileDecoder(contentsOf: dir + "/six.wav")
            #expect(decoder.format == WAVFormat(encoding: .float32, channels: 2, sampleRate: rate))
            let bytes = try decodeAll(decoder)
            let q = { (value: Double) in (value * 32768).rounded() / 32768 }
            let left = q(0.1) + (q(0.3) + q(0.05)) / 2.0.squareRoot()
            let right = q(0.2) + (q(0.3) + q(0.15)) / 2.0.squareRoot()
            let (l, r) = (floats(bytes, channel: 0), floats(bytes, channel: 1))
            #expect(l.count == frames && r.count == frames)
            #expect(l.allSatisfy { abs($0 - left) < 1e-6 }, "\(l.first ?? 0) ≠ \(left)")
            #expect(r.allSatisfy { abs($0 - right) < 1e-6 }, "\(r.first ?? 0) ≠ \(right)")
            // Four channels whose WAVE_FORMAT_EXTENSIBLE mask says FL FR FC LFE (0x0F), not the
            // count's default (quad): mixed by the mask, the third channel a centre.
            var four = WAVFile.encode(
                (0..<frames).flatMap { _ in [0.1, 0.2, 0.3, 0.4] }, format: WAVFormat(encoding: .signed16, channels: 4, sampleRate: rate),
                extensible: true)
            four.replaceSubrange(40..<44, with: [0x0F, 0, 0, 0])
            try AtomicFile.write(four, to: dir + "/four.wav")
            let masked = try decodeAll(try SoundFileDecoder(contentsOf: dir + "/four.wav"))
            let centre = q(0.3) / 2.0.squareRoot()
            #expect(floats(masked, channel: 0).allSatisfy { abs($0 - (q(0.1) + centre)) < 1e-6 })
            #expect(floats(masked, channel: 1).allSatisfy { abs($0 - (q(0.2) + centre)) < 1e-6 }, "\(floats(masked, channel: 1).first ?? 0)")
            // Nine channels: no rule, refused by name.
            try AtomicFile.write(
                WAVFile.encode([Double](repeating: 0, count: 9 * 10), format: WAVFormat(encoding: .signed16, channels: 9, sampleRate: rate)),
                to: dir + "/nine.wav")
            #expect(throws: AudioPlayerError.file(.unsupportedChannelCount(source: dir + "/nine.wav", format: "WAV (Signed 16 bit PCM)", channels: 9))) {
                try AudioPlayer(contentsOf: dir + "/nine.wav", routeFile: nil)
            }
        }
    }

    /// The shim's memory reader, which libmpg123 reads MP3s from data through: every count it
    /// may be asked (up to SIZE_MAX: libmpg123's buffer decides, not the file) gives at most
    /// what is left, and no seek leaves [0, length], whatever the offset.
    @Test func theMP3MemoryReaderClampsEveryCountAndSeek() {
        let source: [UInt8] = Array(0..<10)
        source.withUnsafeBufferPointer { bytes in
            var memory = audioroute_mpg123_memory(bytes: bytes.baseAddress, length: 10, position: 8)
            var out = [UInt8](repeating: 0xEE, count: 16)
            for count in [Int.max, -1, Int.min, 3] {
                memory.position = 8
                // -1 and Int.min are SIZE_MAX and SSIZE_MAX + 1 as the C size_t.
                let got = out.withUnsafeMutableBytes { audioroute_mpg123_memory_read(&memory, $0.baseAddress, count) }
                #expect(got == 2 && memory.position == 10, "count \(count): \(got)")
                #expect(Array(out.prefix(3)) == [8, 9, 0xEE], "count \(count)")
            }
            // At the end, nothing; the position stays.
            #expect(out.withUnsafeMutableBytes { audioroute_mpg123_memory_read(&memory, $0.baseAddress, 4) } == 0 && memory.position == 10)
            // Seeks: inside is taken, outside or overflowing is -1 and leaves the position.
            #expect(audioroute_mpg123_memory_seek(&memory, 4, Int32(SEEK_SET)) == 4 && memory.position == 4)
            for (offset, whence) in [(off_t.max, SEEK_CUR), (7, SEEK_CUR), (-5, SEEK_CUR), (off_t.min, SEEK_END), (1, SEEK_END), (0, 7)] {
                #expect(audioroute_mpg123_memory_seek(&memory, offset, Int32(whence)) == -1 && memory.position == 4, "\(offset), \(whence)")
            }
            #expect(audioroute_mpg123_memory_seek(&memory, -10, Int32(SEEK_END)) == 0 && memory.position == 0)
        }
    }

    @Test func brokenFilesAreNamedErrorsAndLeaveNothingOpen() throws {
        try withSyncTemporaryDirectory { dir in
            try writeSignal(dir + "/signal.wav", frames: 48000)
            try encode("flac", package: "flac", ["-s", dir + "/signal.wav", "-o", dir + "/signal.flac"])
            let wav = try AtomicFile.read(dir + "/signal.wav")
            let flac = try AtomicFile.read(dir + "/signal.flac")
            var garbage: [UInt8] = []
            var seed: UInt32 = 12345
            for _ in 0..<4096 {
                seed = seed &* 1_103_515_245 &+ 12345
                garbage.append(UInt8(truncatingIfNeeded: seed >> 16))
            }
            try AtomicFile.write(garbage, to: dir + "/garbage.mp3")
            try AtomicFile.write(Array(wav.prefix(30)), to: dir + "/header.wav")
            try AtomicFile.write(Array("fLaC".utf8) + garbage, to: dir + "/fake.flac")
            try AtomicFile.write(Array(flac.prefix(flac.count / 2)), to: dir + "/half.flac")

            let before = openDescriptors()
            for _ in 0..<20 {
                for (name, format) in [("garbage.mp3", "unknown"), ("header.wav", "WAV"), ("fake.flac", "FLAC")] {
                    let path = dir + "/" + name
                    do {
                        _ = try AudioPlayer(contentsOf: path, routeFile: nil)
                        Issue.record("\(name) opened")
                    } catch let error as AudioPlayerError {
                        guard case .file(.undecodable(let source, let named, let reason)) = error else {
                            Issue.record("\(name): \(error)"); continue
                        }
                        #expect(source == path && named == format && !reason.isEmpty, "\(error)")
                        #expect("\(error)".contains("(format: \(format))"), "\(error)")
                    }
                }
                #expect(throws: AudioPlayerError.self) { try AudioPlayer(data: garbage, routeFile: nil) }
                // And files that open, let go: closed with their player.
                _ = try AudioPlayer(contentsOf: dir + "/signal.flac", routeFile: nil)
                _ = try AudioPlayer(data: flac, routeFile: nil)
            }
            // 80 failed opens and 40 good ones: a descriptor kept by any would show (other tests may hold a few).
            #expect(before > 0 && openDescriptors() - before < 10, "\(before) → \(openDescriptors()) descriptors")

            // Half a FLAC file opens (its header declares the whole length) and fails where the
            // stream stops: the decoder says where and why.
            let half = try SoundFileDecoder(contentsOf: dir + "/half.flac")
            #expect(half.frameCount == 48000)
            do throws(FrameReadError) {
                var at = 0
                while at < half.frameCount { at += try half.frames(at..<min(half.frameCount, at + 1001)).frameCount }
                Issue.record("half a FLAC file decoded whole")
            } catch {
                #expect(error.frame > 0 && error.frame < 48000 && error.expected == 48000, "\(error)")
                #expect(error.reason.lowercased().contains("sync") || error.reason.contains("ends early"), "\(error)")
            }
            // An MP3 whose audio is garbled after its first 4 KB, from its path and from data:
            // refused or decoded to its end or to an error, never a crash.
            try encode("lame", package: "lame", ["--quiet", "-V", "4", "--add-id3v2", "--tt", "t", dir + "/signal.wav", dir + "/good.mp3"])
            var mp3 = try AtomicFile.read(dir + "/good.mp3")
            let good = try decodeAll(try SoundFileDecoder(contentsOf: dir + "/good.mp3"))
            for index in 4096..<mp3.count { mp3[index] ^= 0x55 }
            try AtomicFile.write(mp3, to: dir + "/garbled.mp3")
            // (libmpg123 once asked the shim's memory reader for SIZE_MAX bytes on this file.)
            for (source, open) in [(dir + "/garbled.mp3", { try SoundFileDecoder(contentsOf: dir + "/garbled.mp3") }), ("data", { try SoundFileDecoder(data: mp3) })] {
                let decoder: SoundFileDecoder
                do {
                    decoder = try open()
                } catch let error as AudioDecodeError {
                    guard case .undecodable(source, "MP3", let reason) = error, !reason.isEmpty else { Issue.record("\(source): \(error)"); continue }
                    continue
                }
                #expect(decoder.decodedFormat.name == "MP3" && decoder.frameCount <= 48000 + 2304, "\(source): \(decoder.frameCount) frames")
                // Its frames up to the garbage, then a fault that names where the stream stopped:
                // every byte after 4 KB is XORed, so no MPEG sync word (11 bits set) survives there
                // and the file cannot decode to its length; frames of silence in their place would
                // be a silent cut.
                var at = 0
                var decoded: [UInt8] = []
                do throws(FrameReadError) {
                    while at < decoder.frameCount {
                        let buffer = try decoder.frames(at..<min(decoder.frameCount, at + 1001))
                        decoded += buffer.bytes
                        at += buffer.frameCount
                    }
                    Issue.record("\(source): the garbled MP3 decoded to its length, \(at) frames")
                } catch {
                    #expect(error.frame >= at && error.frame > 0 && error.frame < decoder.frameCount && !error.reason.isEmpty, "\(source): \(error)")
                }
                // The frames it gave are the intact file's (the same bitstream up to the garbage),
                // not silence or noise in place of the frames it could not decode; the last two
                // MPEG frames before the fault may differ (their bit reservoir reaches into it).
                let frameBytes = decoder.format.bytesPerFrame
                let same = max(0, decoded.count / frameBytes - 2304) * frameBytes
                #expect(same > 0 && decoded.prefix(same) == good.prefix(same), "\(source): \(decoded.count / frameBytes) frames")
            }
            // A seek into the missing half fails, by name.
            let again = try SoundFileDecoder(contentsOf: dir + "/half.flac")
            do throws(FrameReadError) {
                _ = try again.frames(47990..<48000)
                Issue.record("a seek past the end of the stream read frames")
            } catch {
                #expect(error.frame == 47990 && error.reason.hasPrefix("seek failed"), "\(error)")
            }
        }
    }
}

/// Two file PCMs, and `audioroute_route` on one of them, as the daemon's route file would define it.
@Suite(.serialized) struct DecodedPlaybackTests {
    /// A FLAC file by a `file://` URL (a space in its name), and the same bytes by `init(data:)`:
    /// the device gets the signal's own samples.
    @Test func aFLACFilePlaysSampleExactByURLAndFromData() async throws {
        try await withTemporaryDirectory { dir in
            try writeDevices(dir)
            let source = try writeSignal(dir + "/signal.wav", frames: 5000)
            try encode("flac", package: "flac", ["-s", dir + "/signal.wav", "-o", dir + "/a song.flac"])
            let expected = Array(source.nativeBytes(frames: 0..<5000))
            for useData in [false, true] {
                let player = useData
                    ? try AudioPlayer(
                        data: try AtomicFile.read(dir + "/a song.flac"), routeFile: dir + "/route.conf",
                        configurationFiles: [dir + "/devices.conf"], periodFrames: 500, latencyMicroseconds: 5000)
                    : try AudioPlayer(
                        contentsOf: "file://" + dir + "/a%20song.flac", routeFile: dir + "/route.conf",
                        configurationFiles: [dir + "/devices.conf"], periodFrames: 500, latencyMicroseconds: 5000)
                #expect(player.duration == 5000.0 / 48000)
                try player.play()
                let events = await waitForEnd(player)
                #expect(events.last == .finished(successfully: true))
                #expect(((try? AtomicFile.read(dir + "/speaker.raw")) ?? []) == expected, "data: \(useData)")
                try FileNames.unlink(dir + "/speaker.raw")
            }
        }
    }

    /// Half a FLAC file plays what it holds, then the player reports a decode error naming the
    /// file, the format and where the stream stopped, and finishes unsuccessfully.
    @Test func aTruncatedFileEndsInADecodeError() async throws {
        try await withTemporaryDirectory { dir in
            try writeDevices(dir)
            try writeSignal(dir + "/signal.wav", frames: 48000)
            try encode("flac", package: "flac", ["-s", dir + "/signal.wav", "-o", dir + "/signal.flac"])
            let flac = try AtomicFile.read(dir + "/signal.flac")
            try AtomicFile.write(Array(flac.prefix(flac.count / 2)), to: dir + "/half.flac")
            let player = try AudioPlayer(
                contentsOf: dir + "/half.flac", routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"],
                periodFrames: 500, latencyMicroseconds: 5000)
            try player.play()
            let events = await waitForEnd(player)
            #expect(events.last == .finished(successfully: false))
            let decodeError = events.compactMap { event -> AudioPlayerError? in
                if case .decodeError(let error) = event { return error }
                return nil
            }.first
            guard case .file(.read(let source, let format, let error))? = decodeError else {
                Issue.record("\(events)"); return
            }
            #expect(source == dir + "/half.flac" && format.hasPrefix("FLAC"), "\(source) \(format)")
            #expect(error.frame > 0 && error.frame < 48000)
            // What was decoded before the fault was played.
            #expect(((try? AtomicFile.read(dir + "/speaker.raw")) ?? []).count > 0)
        }
    }
}
