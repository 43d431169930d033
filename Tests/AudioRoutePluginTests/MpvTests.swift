// mpv through the plugin, as a user plays a 5.1 file (issue 27's finding: mpv read no channel
// map, "snd_pcm_query_chmaps() returned NULL", and played a 5.1 file as stereo even with
// --audio-channels=5.1). mpv's ALSA output reads the device's maps and maps, or mixes down,
// by its own rule.
import AudioRouteCore
import AudioRouteSystem
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A 5.1 WAV file (WAVE_FORMAT_EXTENSIBLE's default order: FL FR FC LFE BL BR), each channel
/// holding one value throughout: 1000 × its number (1 to 6).
private func surroundFile(_ path: String, frames: Int) throws {
    let frame = (1...6).map { Double($0 * 1000) / 32768 }
    let samples = Array((0..<frames).map { _ in frame }.joined())
    try AtomicFile.write(WAVFile.encode(samples, format: WAVFormat(encoding: .signed16, channels: 6, sampleRate: 48_000)), to: path)
}

/// The frames of `bytes` (S16_LE, `channels` a frame), most frequent first, with their counts.
private func commonFrames(_ bytes: [UInt8], channels: Int) -> [([Int16], Int)] {
    var counts: [[Int16]: Int] = [:]
    let size = channels * 2
    var at = 0
    while at + size <= bytes.count {
        let frame = (0..<channels).map { Int16(bitPattern: UInt16(bytes[at + 2 * $0]) | UInt16(bytes[at + 2 * $0 + 1]) << 8) }
        counts[frame, default: 0] += 1
        at += size
    }
    return counts.sorted { $0.value > $1.value }.map { ($0.key, $0.value) }
}

@Suite(.enabled(if: access("/usr/bin/mpv", X_OK) == 0, "mpv is not installed (scripts/bootstrap installs it)"))
struct MpvTests {
    /// The 5.1 file played by mpv through `audioroute` with the route on `device`: the frames of
    /// the device's `file` (`channels` a frame), most frequent first.
    private static func played(on device: String, into file: String, channels: Int) throws -> [([Int16], Int)] {
        try withSyncTemporaryDirectory { dir in
            let bench = try Bench(dir)
            try bench.route(to: device)
            try surroundFile(dir + "/51.wav", frames: 48_000)
            let result = try ChildProcess("/usr/bin/mpv", [
                "--no-config", "--really-quiet", "--no-video", "--ao=alsa", "--audio-device=alsa/audioroute",
                "--audio-channels=auto", "--audio-format=s16", dir + "/51.wav",
            ], environment: bench.environment, input: .pipe).collect()
            #expect(result.status == 0, "stderr: \(result.stderr)")
            return commonFrames(bench.bytes(file), channels: channels)
        }
    }

    /// A 5.1 device (the route's file PCM, whose map is FL FR RL RR FC LFE): mpv plays the file's
    /// six channels, each on its own speaker, in the device's order.
    @Test func mpvPlaysA51FileOnSixSpeakersOfA51Device() throws {
        let frames = try Self.played(on: "plugtest_51", into: "c.raw", channels: 6)
        // FL FR RL RR FC LFE from the file's FL FR FC LFE BL BR.
        #expect(frames.first?.0 == [1000, 2000, 5000, 6000, 3000, 4000], "\(frames.prefix(3))")
        #expect((frames.first?.1 ?? 0) >= 48_000 * 9 / 10, "\(frames.prefix(3))")
    }

    /// A stereo device: mpv mixes the six channels down by its own rule (the centre and the
    /// surrounds into both sides), rather than the route file's plug dropping four of them.
    @Test func mpvMixesA51FileDownForAStereoDevice() throws {
        let frames = try Self.played(on: "plugtest_stereo", into: "d.raw", channels: 2)
        let (left, right) = (Int(frames.first?.0[0] ?? 0), Int(frames.first?.0[1] ?? 0))
        // Front left and right alone (a plug's copy) would be 1000 and 2000.
        #expect(left > 1000 && right > 2000, "\(frames.prefix(3))")
        #expect((frames.first?.1 ?? 0) >= 48_000 * 9 / 10, "\(frames.prefix(3))")
    }
}
