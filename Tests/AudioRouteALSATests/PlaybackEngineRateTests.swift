// The engine at rates other than 1 (AudioPlayer.rate) through the real
// libasound, `file` PCMs standing for devices: a move (the plugin's mover) or a pause at any
// rate continues from the source position of the first frame the old device
// did not play, so the devices' files together are the uninterrupted
// resampled stream; a rate change applies from the next period.
import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import AudioRouteALSA
import Testing

#if canImport(Glibc)
import Glibc
#endif

private func rateConfiguration(_ dir: String) throws -> PCMConfigurationSource {
    var configuration = try ALSAConfiguration.system()
    try configuration.load(text: """
        pcm.!rate_a { type file slave.pcm "null" file "\(dir)/a.raw" format "raw" }
        pcm.!rate_b { type file slave.pcm "null" file "\(dir)/b.raw" format "raw" }
        pcm.!rate_c_file { type file slave.pcm "null" file "\(dir)/c.raw" format "raw" }
        pcm.!rate_c { type plug slave.pcm "rate_c_file" }

        """)
    return .custom(configuration)
}

private func writeRateRoute(_ dir: String, _ device: String) throws {
    try AtomicFile.write(Array("pcm.!audioroute_route { type plug slave.pcm \"\(device)\" }\n".utf8), to: dir + "/route.conf")
}

/// An engine following `dir`/route.conf (first on rate_a) through the plugin's mover.
private func followingRate(_ file: WAVFile, _ dir: String) throws -> PlaybackEngine {
    try AtomicFile.write(Array("""
        pcm.!rate_a { type file slave.pcm "null" file "\(dir)/a.raw" format "raw" }
        pcm.!rate_b { type file slave.pcm "null" file "\(dir)/b.raw" format "raw" }
        pcm.!rate_c_file { type file slave.pcm "null" file "\(dir)/c.raw" format "raw" }
        pcm.!rate_c { type plug slave.pcm "rate_c_file" }

        """.utf8), to: dir + "/devices.conf")
    try writeRateRoute(dir, "rate_a")
    return try PlaybackEngine(
        file: file, device: "audioroute_route", configuration: .route(file: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"]),
        periodFrames: 1000, latencyMicroseconds: 5000)
}

private func read(_ path: String) -> [UInt8] { (try? AtomicFile.read(path)) ?? [] }

/// Random 16-bit stereo frames (any bytes are valid samples).
private func randomFile(frames: Int, seed: UInt32) throws -> WAVFile {
    let format = WAVFormat(encoding: .signed16, channels: 2, sampleRate: 48000)
    let data = pattern(frames * format.bytesPerFrame, seed: seed)
    let samples = stride(from: 0, to: data.count, by: 2).map {
        Double(Int16(bitPattern: UInt16(data[$0]) | UInt16(data[$0 + 1]) << 8)) / 32768
    }
    return try WAVFile(bytes: WAVFile.encode(samples, format: format))
}

/// The whole stream from `start` at `rate`, as the device must get it.
private func resampled(_ file: WAVFile, rate: Double, from start: SourcePosition = SourcePosition(frame: 0)) -> [UInt8] {
    var position = start
    var out: [UInt8] = []
    file.renderVarispeed(from: &position, step: VarispeedStep(rate: rate), maxFrames: .max, as: .signed16, gains: .unity, into: &out)
    return out
}

@Suite struct PlaybackEngineRateTests {
    @Test func aMoveAtRateOnePointFiveContinuesFromTheSameSourcePosition() throws {
        try withSyncTemporaryDirectory { dir in
            let file = try randomFile(frames: 10_007, seed: 5)
            let engine = try followingRate(file, dir)
            engine.rate = 1.5
            for _ in 0..<3 { #expect(try engine.writeNextPeriod() == 1000) }
            #expect(engine.position == 4500)
            try writeRateRoute(dir, "rate_b")
            engine.routeChanged()
            try engine.writeNextPeriod()
            // The old device played out the 3000 output frames it had: the new one starts at source 4500.
            #expect(engine.takeMove()?.resumeFrame == 4500)
            for _ in 0..<2 { try engine.writeNextPeriod() }
            try writeRateRoute(dir, "rate_c")
            engine.routeChanged()
            while try engine.writeNextPeriod() > 0 {}
            try engine.drain()
            engine.close()
            // The old device is kept open a little after a move (the mover's retired device): its
            // file PCM's last bytes are in the file once it is closed.
            #expect(read(dir + "/a.raw").count == 3000 * 4)
            let all = read(dir + "/a.raw") + read(dir + "/b.raw") + read(dir + "/c.raw")
            #expect(all.count == 6672 * 4)  // ceil(10007 / 1.5) output frames
            let same = all == resampled(file, rate: 1.5)
            #expect(same)
        }
    }

    @Test func pauseAtRateTwoKeepsTheSourcePositionOfTheFirstUnplayedFrame() throws {
        try withSyncTemporaryDirectory { dir in
            let file = try randomFile(frames: 20_000, seed: 6)
            let engine = try followingRate(file, dir)
            engine.rate = 2
            for _ in 0..<4 { try engine.writeNextPeriod() }
            engine.pause()
            #expect(read(dir + "/a.raw").count == 4000 * 4)
            #expect(engine.sourcePosition == SourcePosition(frame: 8000))
            // Resumed on another device (the route moved while paused): the whole file at rate 2.
            try writeRateRoute(dir, "rate_b")
            while try engine.writeNextPeriod() > 0 {}
            try engine.drain()
            let same = read(dir + "/a.raw") + read(dir + "/b.raw") == resampled(file, rate: 2)
            #expect(same)
        }
    }

    @Test func aRateChangeAppliesFromTheNextPeriodAndRateOneIsTheFilesBytes() throws {
        try withSyncTemporaryDirectory { dir in
            let file = try randomFile(frames: 5000, seed: 7)
            let engine = try PlaybackEngine(file: file, device: "rate_a", configuration: rateConfiguration(dir), periodFrames: 1000, latencyMicroseconds: 500_000)
            // 1000 frames as they are, then 1000 output frames at 2 (source 1000…2999),
            // then 3 frames at 1.5 (source 3000, 3001.5, 3003 → next 3004.5), then
            // rate 1 from the nearest frame, 3005 (3004.5 rounds up).
            try engine.writeNextPeriod()
            engine.rate = 2
            try engine.writeNextPeriod()
            #expect(engine.position == 3000)
            let small = try PlaybackEngine(file: file, device: "rate_b", configuration: rateConfiguration(dir), periodFrames: 3, latencyMicroseconds: 500_000)
            try small.seek(to: 3000)
            small.rate = 1.5
            try small.writeNextPeriod()
            #expect(small.sourcePosition == SourcePosition(frame: 3004, fraction: 1 << 31))
            small.rate = 1
            try small.writeNextPeriod()
            #expect(small.position == 3008)
            try engine.drain()
            try small.drain()
            var atTwo: [UInt8] = []
            var position = SourcePosition(frame: 1000)
            file.renderVarispeed(from: &position, step: VarispeedStep(rate: 2), maxFrames: 1000, as: .signed16, gains: .unity, into: &atTwo)
            #expect(read(dir + "/a.raw") == Array(file.nativeBytes(frames: 0..<1000)) + atTwo)
            var atOnePointFive: [UInt8] = []
            position = SourcePosition(frame: 3000)
            file.renderVarispeed(from: &position, step: VarispeedStep(rate: 1.5), maxFrames: 3, as: .signed16, gains: .unity, into: &atOnePointFive)
            #expect(read(dir + "/b.raw") == atOnePointFive + Array(file.nativeBytes(frames: 3005..<3008)))
        }
    }
}
