// The player's AVAudioPlayer members beyond play and pause: volume fades, metering, and what it
// says of its file and device; through `file` PCMs standing for devices.
import AudioRouteCore
import AudioRouteSystem
import AudioSession
import Glibc
import Testing

/// A stereo 16-bit file of `frames` frames, both sides `sample(frame)`.
private func writeWAV(_ path: String, frames: Int, rate: Int = 48000, _ sample: (Int) -> Double) throws {
    var samples: [Double] = []
    samples.reserveCapacity(frames * 2)
    for frame in 0..<frames { let value = sample(frame); samples += [value, value] }
    try AtomicFile.write(WAVFile.encode(samples, format: WAVFormat(encoding: .signed16, channels: 2, sampleRate: rate)), to: path)
}

/// The left samples of a raw S16_LE stereo file.
private func leftSamples(_ path: String) -> [Int] {
    let bytes = (try? AtomicFile.read(path)) ?? []
    return stride(from: 0, to: bytes.count - 3, by: 4).map { Int(Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)) }
}

private func player(_ dir: String, _ file: String, period: Int = 500) throws -> AudioPlayer {
    try AudioPlayer(
        contentsOf: dir + "/" + file, routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"],
        periodFrames: period, latencyMicroseconds: 5000)
}

@Suite(.serialized) struct PlayerVolumeFadeTests {
    /// `setVolume(0, fadeDuration: 0.1)` at 48 kHz: `volume` reads 0 at once, and the device gets a
    /// ramp of 4800 frames a step per frame, then zeros.
    @Test func aFadeOutRampsPerFrameAndVolumeReadsTheTarget() async throws {
        try await withTemporaryDirectory { dir in
            try writeDevices(dir)
            try writeWAV(dir + "/a.wav", frames: 9600) { _ in 0.5 }
            let player = try player(dir, "a.wav")
            try player.prepareToPlay()
            player.setVolume(0, fadeDuration: 0.1)
            #expect(player.volume == 0)
            try player.play()
            _ = await waitForEnd(player)
            let left = leftSamples(dir + "/speaker.raw")
            #expect(left.count == 9600)
            #expect(left[0] == 16381 && left[2399] == 8192 && left[4799] == 0)
            #expect(zip(left, left.dropFirst()).allSatisfy { abs($0 - $1) <= 5 })
            #expect(left[4799...].allSatisfy { $0 == 0 })
        }
    }

    /// With no device prepared a fade applies at once; NaN is 0 and values are clamped.
    @Test func withoutADeviceTheVolumeIsSetAtOnce() async throws {
        try await withTemporaryDirectory { dir in
            try writeDevices(dir)
            try writeWAV(dir + "/a.wav", frames: 2000) { _ in 0.5 }
            let player = try player(dir, "a.wav")
            player.setVolume(0.5, fadeDuration: 1)
            try player.play()
            _ = await waitForEnd(player)
            #expect(leftSamples(dir + "/speaker.raw").allSatisfy { $0 == 8192 })
            player.setVolume(.nan, fadeDuration: 1)
            #expect(player.volume == 0)
            player.setVolume(7, fadeDuration: .infinity)
            #expect(player.volume == 1)
        }
    }
}
