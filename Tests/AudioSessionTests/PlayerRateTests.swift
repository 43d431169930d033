// AudioPlayer's rate and enableRate through the real libasound, `file` PCMs
// standing for devices (test-bench.md): frame counts and bytes at 2, 0.5 and
// 1.5, enableRate read at preparation, clamping, currentTime in source time,
// and a reroute at 1.5 that loses and repeats no source position.
import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import AudioRouteALSA
import AudioSession
import AudioRouteDecoding
import Glibc
import Testing

private func devices(_ dir: String, route: String) throws {
    try AtomicFile.write(Array("""
        pcm.!dev_speaker { type file slave.pcm "null" file "\(dir)/speaker.raw" format "raw" }
        pcm.!dev_headset { type file slave.pcm "null" file "\(dir)/headset.raw" format "raw" }

        """.utf8), to: dir + "/devices.conf")
    try AtomicFile.write(Array("pcm.!audioroute_route { type plug slave.pcm \"\(route)\" }\n".utf8), to: dir + "/route.conf")
}

private func bytes(_ path: String) -> [UInt8] { (try? AtomicFile.read(path)) ?? [] }

private func source(_ path: String, frames: Int) throws -> WAVFile {
    let format = WAVFormat(encoding: .signed16, channels: 2, sampleRate: 48000)
    let samples = (0..<(frames * 2)).map { Double(($0 * 7919) % 20000 - 10000) / 32768 }
    try AtomicFile.write(WAVFile.encode(samples, format: format), to: path)
    return try WAVFile(contentsOf: path)
}

/// A player on DIR/a.wav; varispeed (`keepsPitch` false) unless asked, which is what these tests check.
private func player(_ dir: String, periodFrames: Int = 500, keepsPitch: Bool = false) throws -> AudioPlayer {
    let player = try AudioPlayer(
        contentsOf: dir + "/a.wav", routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"],
        periodFrames: periodFrames, latencyMicroseconds: 5000)
    player.keepsPitch = keepsPitch
    return player
}

/// The whole file at `rate`, as the device must get it.
private func resampled(_ file: WAVFile, rate: Double) -> [UInt8] {
    var position = SourcePosition(frame: 0)
    var out: [UInt8] = []
    file.renderVarispeed(from: &position, step: VarispeedStep(rate: rate), maxFrames: .max, as: .signed16, gains: .unity, into: &out)
    return out
}

private func untilFinished(_ player: AudioPlayer) async -> [AudioPlayerEvent] {
    var seen: [AudioPlayerEvent] = []
    for await event in player.events {
        seen.append(event)
        if case .finished = event { break }
    }
    return seen
}

@Suite(.serialized) struct AudioPlayerRateTests {
    /// 48000 source frames: half as many output frames at 2, twice as many at 0.5.
    @Test(arguments: [(2.0, 24_000), (0.5, 96_000), (1.5, 32_000), (10, 24_000)])
    func aRateWritesTheResampledFile(rate: Double, outputFrames: Int) async throws {
        try await withTemporaryDirectory { dir in
            try devices(dir, route: "dev_speaker")
            let file = try source(dir + "/a.wav", frames: 48_000)
            let player = try player(dir)
            player.enableRate = true
            player.rate = rate
            try player.play()
            #expect(await untilFinished(player).last == .finished(successfully: true))
            let out = bytes(dir + "/speaker.raw")
            #expect(out.count == outputFrames * 4)
            // 10 is clamped to 2.
            let same = out == resampled(file, rate: min(rate, 2))
            #expect(same)
        }
    }

    @Test func withoutEnableRateTheRateIsKeptButPlaybackIsAtOne() async throws {
        try await withTemporaryDirectory { dir in
            try devices(dir, route: "dev_speaker")
            let file = try source(dir + "/a.wav", frames: 5000)
            let player = try player(dir)
            player.rate = 2
            #expect(player.rate == 2 && !player.enableRate)
            try player.play()
            #expect(await untilFinished(player).last == .finished(successfully: true))
            #expect(bytes(dir + "/speaker.raw") == Array(file.nativeBytes(frames: 0..<5000)))
        }
    }

    @Test func enableRateIsReadWhenThePlayerIsPrepared() async throws {
        try await withTemporaryDirectory { dir in
            try devices(dir, route: "dev_speaker")
            let file = try source(dir + "/a.wav", frames: 5000)
            let player = try player(dir)
            try player.prepareToPlay()
            // Too late for this preparation: played at 1.
            player.enableRate = true
            player.rate = 2
            try player.play()
            #expect(await untilFinished(player).last == .finished(successfully: true))
            #expect(bytes(dir + "/speaker.raw") == Array(file.nativeBytes(frames: 0..<5000)))
            // stop() undoes the preparation; the next play prepares again, with the rate.
            // (On the headset: reopening a file PCM truncates its file.)
            player.stop()
            try devices(dir, route: "dev_headset")
            try player.play()
            #expect(await untilFinished(player).last == .finished(successfully: true))
            let same = bytes(dir + "/headset.raw") == resampled(file, rate: 2)
            #expect(same)
        }
    }

    @Test func theRateIsClamped() async throws {
        try await withTemporaryDirectory { dir in
            try devices(dir, route: "dev_speaker")
            _ = try source(dir + "/a.wav", frames: 10)
            let player = try player(dir)
            #expect(player.rate == 1 && !player.enableRate)
            for (asked, kept) in [(3.0, 2.0), (0.1, 0.5), (-1, 0.5), (.infinity, 2), (.nan, 1), (0.75, 0.75), (2, 2), (0.5, 0.5)] {
                player.rate = asked
                #expect(player.rate == kept, "rate \(asked)")
            }
        }
    }

    @Test func currentTimeIsInSourceTime() async throws {
        try await withTemporaryDirectory { dir in
            try devices(dir, route: "dev_headset")
            let frames = 480_000
            let file = try source(dir + "/a.wav", frames: frames)
            let player = try player(dir, periodFrames: 256)
            player.enableRate = true
            player.rate = 2
            try player.play()
            untilStarted(player)
            player.pause()
            // Paused after K output frames reached the device: the position is source frame 2K.
            let played = bytes(dir + "/headset.raw").count / 4
            #expect(played > 0 && played < frames / 2)
            #expect((player.currentTime * 48000).rounded() == Double(2 * played))
            // Resumed on the speaker (reopening a file PCM would truncate the headset's file).
            try devices(dir, route: "dev_speaker")
            try player.play()
            #expect(await untilFinished(player).last == .finished(successfully: true))
            // 10 s of file in 5 s of output; the position is back at the start, as at rate 1.
            let out = bytes(dir + "/headset.raw") + bytes(dir + "/speaker.raw")
            #expect(out.count == frames / 2 * 4)
            let same = out == resampled(file, rate: 2)
            #expect(same)
            #expect(player.currentTime == 0)
        }
    }

    @Test func aRerouteAtOnePointFiveContinuesFromTheSameSourceFrame() async throws {
        try await withTemporaryDirectory { dir in
            try devices(dir, route: "dev_speaker")
            let file = try source(dir + "/a.wav", frames: 480_000)
            let player = try player(dir, periodFrames: 256)
            player.enableRate = true
            player.rate = 1.5
            try player.prepareToPlay()
            // The route file changes before play (see PlayerTests: null does not pace).
            try devices(dir, route: "dev_headset")
            try player.play()
            untilStarted(player)
            player.handle(.routeChange(RouteChangeInfo(
                reason: .newDeviceAvailable,
                previousRoute: RouteDescription(outputs: [PortDescription(uid: "s", portType: .builtInSpeaker, portName: "s", direction: .output, device: "s", priority: 0, sequence: 0)]),
                currentRoute: RouteDescription(outputs: [PortDescription(uid: "h", portType: .headphones, portName: "h", direction: .output, device: "h", priority: 0, sequence: 0)]))))
            let events = await untilFinished(player)
            #expect(events.last == .finished(successfully: true))
            var report: RerouteReport?
            for case .rerouted(let r) in events { report = r }
            let speaker = bytes(dir + "/speaker.raw"), headset = bytes(dir + "/headset.raw")
            #expect(!speaker.isEmpty && !headset.isEmpty)
            // The headset starts at the source frame the speaker stopped at: 1.5 × its output frames.
            let resume = SourcePosition(frame: 0).advanced(by: speaker.count / 4, step: VarispeedStep(rate: 1.5))
            #expect(report?.resumeFrame == resume.frame)
            let same = speaker + headset == resampled(file, rate: 1.5)
            #expect(same)
        }
    }
}

/// A mono 16-bit sine of `frequency` Hz at half scale, `frames` frames at 48 kHz.
private func writeSine(_ path: String, frequency: Double, frames: Int) throws {
    let samples = (0..<frames).map { 0.5 * sin(2 * .pi * frequency * Double($0) / 48000) }
    try AtomicFile.write(WAVFile.encode(samples, format: WAVFormat(encoding: .signed16, channels: 1, sampleRate: 48000)), to: path)
}

/// The frequency of the left channel of raw S16 stereo `bytes` over `range` of its frames, by
/// rising zero crossings (first to last, over the whole cycles between them).
private func frequency(_ bytes: [UInt8], frames range: Range<Int>) -> Double {
    let left = stride(from: range.lowerBound * 4, to: range.upperBound * 4, by: 4).map {
        Int(Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8))
    }
    var crossings: [Int] = []
    for index in 1..<left.count where left[index - 1] < 0 && left[index] >= 0 { crossings.append(index) }
    guard crossings.count > 2 else { return 0 }
    return Double(crossings.count - 1) * 48000 / Double(crossings.last! - crossings.first!)
}

@Suite(.serialized) struct PlayerTimeStretchTests {
    /// At rate 1.5 with the pitch kept (the default, as AVAudioPlayer): a 440 Hz sine comes out at
    /// 440 Hz (not 660, varispeed's) and 1/1.5 as long, within the stretcher's edges.
    @Test func aSineAtRateOneAndAHalfKeepsItsPitch() async throws {
        try await withTemporaryDirectory { dir in
            try devices(dir, route: "dev_speaker")
            try writeSine(dir + "/a.wav", frequency: 440, frames: 96000)
            #expect(try AudioPlayer(contentsOf: dir + "/a.wav", routeFile: dir + "/route.conf").keepsPitch, "the default")
            let player = try player(dir, periodFrames: 1024, keepsPitch: true)
            player.enableRate = true
            player.rate = 1.5
            try player.play()
            let events = await waitForEnd(player)
            #expect(events.last == .finished(successfully: true))
            let out = bytes(dir + "/speaker.raw")
            let frames = out.count / 4
            #expect(abs(frames - 64000) < 64000 / 50, "\(frames) frames for 96000 at 1.5")
            let measured = frequency(out, frames: 8000..<56000)
            #expect(abs(measured - 440) < 2, "\(measured) Hz")
        }
    }
}

@Suite(.serialized) struct EngineTimeStretchTests {
    /// Back to rate 1 after periods through the stretcher: it stays the path, so what it held is
    /// played, not skipped: 10 periods at 1.5 (15,360 source frames) then the rest at 1 make
    /// 10,240 + 80,640 output frames, within the stretcher's edges. SoundTouch stretches a
    /// sequence at a time (libSoundTouch 2.3.2's SETTING_NOMINAL_OUTPUT_SEQUENCE at 48 kHz and
    /// tempo 1.5: 2,352 output frames): what it stretched at 1.5 beyond the 10 periods stays so,
    /// at most a sequence, making up to half a sequence (1,176) fewer frames. Skipping what it
    /// holds loses some 5,800.
    @Test func backAtRateOneTheStretcherHeldFramesArePlayed() async throws {
        try await withTemporaryDirectory { dir in
            try devices(dir, route: "dev_speaker")
            try writeSine(dir + "/a.wav", frequency: 440, frames: 96000)
            var configuration = try ALSAConfiguration.system()
            try configuration.load(file: dir + "/devices.conf")
            let engine = try PlaybackEngine(
                source: try SoundFileDecoder(contentsOf: dir + "/a.wav"), device: "dev_speaker",
                configuration: .custom(configuration), periodFrames: 1024, latencyMicroseconds: 5000)
            engine.rate = 1.5
            guard let stretcher = SoundTouchStretcher(sampleRate: 48000, rate: 1.5) else {
                Issue.record("SoundTouch refused 48 kHz")
                return
            }
            engine.stretcher = stretcher
            for _ in 0..<10 { try engine.writeNextPeriod() }
            engine.rate = 1
            while try engine.writeNextPeriod() > 0 {}
            engine.close()
            let frames = bytes(dir + "/speaker.raw").count / 4
            #expect(frames <= 10240 + 80640 && frames >= 10240 + 80640 - 1176, "\(frames)")
        }
    }
}

@Suite struct SoundTouchStretcherTests {
    /// Feeds `frames` of a 440 Hz sine at 48 kHz in blocks of 4,096 (the last as final) and
    /// takes every output frame until `available` says the end (−1).
    private func stretch(frames: Int, rate: Double) throws -> Int {
        let stretcher = try #require(SoundTouchStretcher(sampleRate: 48000, rate: rate) as SoundTouchStretcher?)
        var fed = 0, out = 0
        while fed < frames {
            let count = min(4096, frames - fed)
            let block = (fed..<(fed + count)).map { Float(sin(2 * Double.pi * 440 * Double($0) / 48000) * 0.5) }
            fed += count
            stretcher.process(left: block, right: block, final: fed == frames)
            while stretcher.available > 0 { out += stretcher.retrieve(maxFrames: 1024).left.count }
        }
        #expect(stretcher.available == -1, "the end is reported once everything was taken")
        return out
    }

    /// At a constant rate the output is the source's length over the rate, to the frame: the
    /// silence that pushes the last frames out is cut.
    @Test(arguments: [(1.5, 64000), (0.75, 128_000), (2.0, 48000), (0.5, 192_000)])
    func theOutputIsTheSourceOverTheRate(rate: Double, frames: Int) throws {
        #expect(try stretch(frames: 96000, rate: rate) == frames)
    }

    /// SoundTouch sizes its windows in milliseconds of the rate, and libSoundTouch 2.3.2 throws
    /// "Excessive samplerate" above 192 kHz: outside 8…192 kHz the shim refuses (the player
    /// then plays varispeed), with no exception out.
    @Test func sampleRatesOutsideEightToOneNinetyTwoKilohertzAreRefused() {
        #expect(SoundTouchStretcher(sampleRate: 7999, rate: 1.5) == nil)
        #expect(SoundTouchStretcher(sampleRate: 0, rate: 1.5) == nil)
        #expect(SoundTouchStretcher(sampleRate: 8000, rate: 1.5) != nil)
        #expect(SoundTouchStretcher(sampleRate: 192_000, rate: 1.5) != nil)
        #expect(SoundTouchStretcher(sampleRate: 192_001, rate: 1.5) == nil)
        #expect(SoundTouchStretcher(sampleRate: 768_000, rate: 1.5) == nil)
    }

    /// A reset (a seek) forgets what it held and the end: the next pass is a whole one again.
    @Test func aResetStartsAWholePass() throws {
        let stretcher = try #require(SoundTouchStretcher(sampleRate: 48000, rate: 1.5) as SoundTouchStretcher?)
        let block = (0..<48000).map { Float(sin(2 * Double.pi * 440 * Double($0) / 48000) * 0.5) }
        stretcher.process(left: block, right: block, final: true)
        #expect(stretcher.available > 0)
        stretcher.reset()
        #expect(stretcher.available == 0)
        stretcher.process(left: block, right: block, final: true)
        var out = 0
        while stretcher.available > 0 { out += stretcher.retrieve(maxFrames: 1024).left.count }
        #expect(out == 32000)
    }
}
