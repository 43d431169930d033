// Volume fades in the player's engine through the real libasound (a `file` PCM): a ramp a step
// per frame, not per period, ending on its target.
import AudioRouteCore
import AudioRouteSystem
import AudioRouteALSA
import Testing

private func configuration(_ dir: String) throws -> PCMConfigurationSource {
    var configuration = try ALSAConfiguration.system()
    try configuration.load(text: "pcm.!fade_out { type file slave.pcm \"null\" file \"\(dir)/out.raw\" format \"raw\" }\n")
    return .custom(configuration)
}

/// A stereo 16-bit file of `frames` frames all at `value` (−1…1).
private func constant(_ value: Double, frames: Int) throws -> WAVFile {
    let format = WAVFormat(encoding: .signed16, channels: 2, sampleRate: 48000)
    return try WAVFile(bytes: WAVFile.encode(Array(repeating: value, count: frames * 2), format: format))
}

/// The left samples of a raw S16_LE stereo file.
private func leftSamples(_ path: String) -> [Int] {
    let bytes = (try? AtomicFile.read(path)) ?? []
    return stride(from: 0, to: bytes.count - 3, by: 4).map { Int(Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)) }
}

@Suite(.serialized) struct PlaybackEngineFadeTests {
    /// A fade from 1 to 0 over 4800 frames, written in periods of 500: frame n (from 1) is at
    /// (1 − n/4800) of the file's 16384, within a rounding step, with no step between two frames
    /// larger than the ramp's own (a per-period step would be 500 times it), and 0 after it.
    @Test func aFadeIsARampPerFrameNotPerPeriod() async throws {
        try await withTemporaryDirectory { dir in
            let engine = try PlaybackEngine(
                source: try constant(0.5, frames: 8000), device: "fade_out", configuration: try configuration(dir),
                periodFrames: 500, latencyMicroseconds: 5000)
            engine.setVolume(0, fadeFrames: 4800)
            #expect(engine.gains.volume == 0 && engine.currentVolume == 1)
            while try engine.writeNextPeriod() > 0 {}
            engine.close()
            let left = leftSamples(dir + "/out.raw")
            #expect(left.count == 8000)
            for (index, sample) in left.prefix(4800).enumerated() {
                let expected = 16384 * (1 - Double(index + 1) / 4800)
                if abs(Double(sample) - expected) > 1 { Issue.record("frame \(index): \(sample), expected \(expected)"); break }
            }
            let steps = zip(left, left.dropFirst()).map { abs($0 - $1) }
            #expect(steps.max()! <= 5, "16384/4800 per frame")
            #expect(left[4799...].allSatisfy { $0 == 0 })
            #expect(engine.fade == nil && engine.currentVolume == 0)
        }
    }

    /// A new fade mid-fade starts where the first one is; volume set at once ends a fade.
    @Test func aFadeReplacedMidWayStartsWhereItIs() async throws {
        try await withTemporaryDirectory { dir in
            let engine = try PlaybackEngine(
                source: try constant(0.5, frames: 4000), device: "fade_out", configuration: try configuration(dir),
                periodFrames: 1000, latencyMicroseconds: 5000)
            engine.setVolume(0, fadeFrames: 4000)
            try engine.writeNextPeriod()
            #expect(engine.currentVolume == 0.75)
            engine.setVolume(1, fadeFrames: 1000)
            try engine.writeNextPeriod()
            #expect(engine.fade == nil && engine.currentVolume == 1)
            engine.setVolume(0.25, fadeFrames: 0)
            try engine.writeNextPeriod()
            engine.close()
            let left = leftSamples(dir + "/out.raw")
            #expect(left[999] == 12288 && left[1000] == Int((16384 * (0.75 + 0.25 / 1000)).rounded()))
            #expect(left[1999] == 16384 && left[2000] == 4096 && left[2999] == 4096)
        }
    }

    @Test func theRampsValues() {
        var fade = VolumeFade(from: 0.2, to: 1, frames: 4)
        #expect((0..<5).map { fade.volume(at: $0) } == [0.4, 0.6000000000000001, 0.8, 1, 1])
        #expect(fade.current == 0.2)
        fade.done = 2
        #expect(fade.current == 0.6000000000000001 && !fade.isDone)
        fade.done = 4
        #expect(fade.current == 1 && fade.isDone)
    }
}
