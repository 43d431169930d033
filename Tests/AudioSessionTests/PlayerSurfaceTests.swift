// The player's AVAudioPlayer members beyond play and pause: volume fades, metering, and what it
// says of its file and device; through `file` PCMs standing for devices.
import AudioRouteCore
import AudioRouteALSA
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

/// A sine of `frequency` Hz at peak `amplitude` (−1…1), 48 kHz.
private func sine(_ amplitude: Double, _ frequency: Double = 1000) -> (Int) -> Double {
    { amplitude * sin(2 * .pi * frequency * Double($0) / 48000) }
}

/// The levels after playing `file` to its end with metering on: (average, peak) of the left.
private func meteredLevels(_ player: AudioPlayer) async throws -> (Float, Float) {
    player.isMeteringEnabled = true
    try player.play()
    _ = await waitForEnd(player)
    player.updateMeters()
    #expect(player.averagePower(forChannel: 0) == player.averagePower(forChannel: 1))
    return (player.averagePower(forChannel: 0), player.peakPower(forChannel: 0))
}

@Suite(.serialized) struct PlayerMeteringTests {
    /// A sine at −6 dBFS peak (amplitude 0.5) reads a peak of −6.02 and an RMS level of −9.03
    /// (AVAudioPlayer's averagePower is RMS: a full-scale sine reads −3.01); a sine whose RMS is
    /// −6 dBFS reads −6; a full-scale one −3.01; each within ±0.5 dB (16-bit samples).
    @Test(arguments: [(0.5, -9.03, -6.02), (0.5 * 2.0.squareRoot(), -6.0, -3.01), (1.0, -3.01, 0.0)])
    func aSineReadsItsLevels(amplitude: Double, average: Double, peak: Double) async throws {
        try await withTemporaryDirectory { dir in
            try writeDevices(dir)
            try writeWAV(dir + "/sine.wav", frames: 4800, sine(min(amplitude, 32767.0 / 32768)))
            let (measuredAverage, measuredPeak) = try await meteredLevels(try player(dir, "sine.wav"))
            #expect(abs(Double(measuredAverage) - average) < 0.5, "average \(measuredAverage)")
            #expect(abs(Double(measuredPeak) - peak) < 0.5, "peak \(measuredPeak)")
        }
    }

    /// The levels are of what the device got: volume 0.5 and the duck gain (0.3) take 6.02 and
    /// 10.46 dB off the −6.02 peak.
    @Test func theLevelsAreOfWhatWasWritten() async throws {
        try await withTemporaryDirectory { dir in
            try writeDevices(dir)
            try writeWAV(dir + "/sine.wav", frames: 4800, sine(0.5))
            let player = try player(dir, "sine.wav")
            player.volume = 0.5
            player.handle(.ducked)
            let (_, peak) = try await meteredLevels(player)
            #expect(abs(Double(peak) - (-6.02 - 6.02 - 10.46)) < 0.5, "peak \(peak)")
        }
    }

    /// Silence reads −160; so does a player stopped with nothing written since the last update,
    /// a channel there is not, and a player with metering off.
    @Test func silenceAndTheRestRead160Below() async throws {
        try await withTemporaryDirectory { dir in
            try writeDevices(dir)
            try writeWAV(dir + "/silence.wav", frames: 2000) { _ in 0 }
            try writeWAV(dir + "/sine.wav", frames: 2000, sine(0.5))
            let (average, peak) = try await meteredLevels(try player(dir, "silence.wav"))
            #expect(average == -160 && peak == -160)
            let sine = try player(dir, "sine.wav")
            _ = try await meteredLevels(sine)
            #expect(sine.peakPower(forChannel: 0) > -7 && sine.peakPower(forChannel: 2) == -160)
            sine.updateMeters()
            #expect(sine.peakPower(forChannel: 0) == -160, "nothing written since, not playing")
            let off = try player(dir, "sine.wav")
            try off.play()
            _ = await waitForEnd(off)
            off.updateMeters()
            #expect(off.averagePower(forChannel: 0) == -160 && off.peakPower(forChannel: 0) == -160)
        }
    }
}

private func output(_ uid: String, _ type: PortType) -> PortDescription {
    PortDescription(uid: uid, portType: type, portName: uid, direction: .output, device: uid, priority: 0, sequence: 0)
}

@Suite(.serialized) struct PlayerFileMembersTests {
    /// `settings`, `format`, `numberOfChannels`, `duration` and `url` of a 24-bit WAV (by a path
    /// with a space: the URL escapes it), a float one, and an Ogg Vorbis file (no bit depth,
    /// float stereo to the engine), all from what the encoders were told.
    @Test func whatThePlayerSaysOfItsFile() async throws {
        try await withTemporaryDirectory { dir in
            try writeDevices(dir)
            let samples = (0..<(4410 * 2)).map { Double($0 % 100) / 200 }
            try AtomicFile.write(
                WAVFile.encode(samples, format: WAVFormat(encoding: .signed24, channels: 2, sampleRate: 44100)), to: dir + "/a b.wav")
            let wav = try AudioPlayer(contentsOf: dir + "/a b.wav", routeFile: dir + "/route.conf")
            #expect(wav.settings.sampleRate == 44100 && wav.settings.numberOfChannels == 2)
            #expect(wav.settings.bitDepth == 24 && !wav.settings.isFloat && wav.settings.format.hasPrefix("WAV"))
            #expect(wav.format == WAVFormat(encoding: .signed24, channels: 2, sampleRate: 44100))
            #expect(wav.numberOfChannels == 2 && wav.duration == 0.1)
            #expect(wav.url == "file://" + dir.replacingSpaces() + "/a%20b.wav" && wav.data == nil)
            let byURL = try AudioPlayer(contentsOf: wav.url!, routeFile: dir + "/route.conf")
            #expect(byURL.url == wav.url && byURL.path == dir + "/a b.wav")

            try AtomicFile.write(
                WAVFile.encode(Array(samples.prefix(4410)), format: WAVFormat(encoding: .float32, channels: 1, sampleRate: 48000)),
                to: dir + "/f.wav")
            let float = try AudioPlayer(data: try AtomicFile.read(dir + "/f.wav"), routeFile: dir + "/route.conf")
            #expect(float.settings.bitDepth == 32 && float.settings.isFloat && float.settings.numberOfChannels == 1)
            #expect(float.url == nil && float.data != nil)

            try encode("oggenc", package: "vorbis-tools", ["-Q", dir + "/a b.wav", "-o", dir + "/a.ogg"])
            let ogg = try AudioPlayer(contentsOf: dir + "/a.ogg", routeFile: dir + "/route.conf")
            #expect(ogg.settings.bitDepth == nil && ogg.settings.format.hasPrefix("OGG") && ogg.settings.sampleRate == 44100)
            #expect(ogg.format.encoding == .float32)
        }
    }

    /// `currentDevice` is the route's first output after each route change, on a player that
    /// follows the route; nil on a fixed PCM.
    @Test func currentDeviceFollowsTheRoute() async throws {
        try await withTemporaryDirectory { dir in
            try writeDevices(dir)
            try writeWAV(dir + "/a.wav", frames: 100) { _ in 0 }
            let player = try player(dir, "a.wav")
            let fixed = try AudioPlayer(contentsOf: dir + "/a.wav", device: "dev_speaker", configurationFiles: [dir + "/devices.conf"])
            #expect(player.currentDevice == nil)
            let speaker = RouteDescription(outputs: [output("speaker", .builtInSpeaker)])
            let both = RouteDescription(outputs: [output("usb-headset", .usbAudio), output("hdmi", .HDMI)])
            for target in [player, fixed] {
                target.handle(.routeChange(RouteChangeInfo(reason: .newDeviceAvailable, previousRoute: speaker, currentRoute: both)))
            }
            #expect(player.currentDevice == "usb-headset" && fixed.currentDevice == nil)
            player.handle(.routeChange(RouteChangeInfo(reason: .oldDeviceUnavailable, previousRoute: both, currentRoute: speaker)))
            #expect(player.currentDevice == "speaker")
        }
    }
}

extension String {
    /// The path with its spaces as a URL escapes them.
    fileprivate func replacingSpaces() -> String { String(decoding: utf8.flatMap { $0 == 32 ? Array("%20".utf8) : [$0] }, as: UTF8.self) }
}

/// Leading frames of zeros in a raw S16_LE stereo file.
private func leadingSilence(_ path: String) -> Int {
    leftSamples(path).firstIndex(where: { $0 != 0 }) ?? -1
}

@Suite(.serialized) struct PlayerScheduledStartTests {
    /// Two players on two `file` PCMs (not paced: the device's delay is 0 and writes never wait),
    /// started at the same `deviceCurrentTime + 0.5` with different periods: each writes the
    /// silence of the half second left, a last piece cut to the frame, so that their first real
    /// frames are at the same place within a period. What a paced device does with it is the
    /// real-kernel bench's to show.
    @Test func twoPlayersStartedAtOneTimeWriteTheSameLeadIn() async throws {
        try await withTemporaryDirectory { dir in
            try writeDevices(dir)
            try writeWAV(dir + "/a.wav", frames: 4800) { _ in 0.25 }
            let first = try AudioPlayer(
                contentsOf: dir + "/a.wav", device: "dev_speaker", configurationFiles: [dir + "/devices.conf"],
                periodFrames: 500, latencyMicroseconds: 5000)
            let second = try AudioPlayer(
                contentsOf: dir + "/a.wav", device: "dev_headset", configurationFiles: [dir + "/devices.conf"],
                periodFrames: 733, latencyMicroseconds: 5000)
            try first.prepareToPlay()
            try second.prepareToPlay()
            let time = first.deviceCurrentTime + 0.5
            #expect(try first.play(atTime: time) && second.play(atTime: time))
            _ = await waitForEnd(first)
            _ = await waitForEnd(second)
            let (a, b) = (leadingSilence(dir + "/speaker.raw"), leadingSilence(dir + "/headset.raw"))
            #expect(a > 24000 - 2400 && a <= 24000 && b > 24000 - 2400 && b <= 24000, "\(a) \(b)")
            #expect(abs(a - b) < 500, "\(a) \(b)")
            // Not a multiple of the period: the last piece of silence is cut to the frame.
            #expect(leftSamples(dir + "/speaker.raw").count == a + 4800)
            // A time already past plays at once; so does play() after a scheduled start.
            try FileNames.unlink(dir + "/speaker.raw")
            first.currentTime = 0
            #expect(try first.play(atTime: first.deviceCurrentTime - 1))
            _ = await waitForEnd(first)
            #expect(leadingSilence(dir + "/speaker.raw") == 0)
        }
    }

    @Test func theSilenceBeforeAScheduledStart() {
        let second: UInt64 = 1_000_000_000
        #expect(StartSchedule.silenceFrames(now: 10 * second, target: 10 * second + second / 2, queued: 0, rate: 48000) == 24000)
        #expect(StartSchedule.silenceFrames(now: 10 * second, target: 10 * second + second / 2, queued: 4800, rate: 48000) == 19200)
        #expect(StartSchedule.silenceFrames(now: 10 * second, target: 10 * second + second / 100, queued: 4800, rate: 48000) == 0)
        #expect(StartSchedule.silenceFrames(now: 10 * second, target: 9 * second, queued: 0, rate: 48000) == 0)
        #expect(StartSchedule.silenceFrames(now: 0, target: UInt64.max, queued: 0, rate: 768000) == 86400 * 768000)
    }
}
