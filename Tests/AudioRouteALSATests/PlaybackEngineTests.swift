// The player's output engine through the real libasound: `file` PCMs stand
// for devices (test-bench.md). A reroute mid-file must leave, across the
// devices' files, exactly the source: no frame lost, none repeated.
import AudioRouteCore
import AudioSession
import AudioRouteIPC
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import AudioRouteALSA
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Three file PCMs, and a plug in front of the third (as `audioroute` is).
private func devices(_ dir: String) -> String {
    """
    pcm.!player_a { type file slave.pcm "null" file "\(dir)/a.raw" format "raw" }
    pcm.!player_b { type file slave.pcm "null" file "\(dir)/b.raw" format "raw" }
    pcm.!player_c_file { type file slave.pcm "null" file "\(dir)/c.raw" format "raw" }
    pcm.!player_c { type plug slave.pcm "player_c_file" }

    """
}

private func configuration(_ dir: String) throws -> PCMConfigurationSource {
    var configuration = try ALSAConfiguration.system()
    try configuration.load(text: devices(dir))
    return .custom(configuration)
}

private func contents(_ path: String) -> [UInt8] { (try? AtomicFile.read(path)) ?? [] }

/// A WAV file of `frames` frames of random samples.
private func source(_ encoding: SampleEncoding, channels: Int, frames: Int, rate: Int = 48000, seed: UInt32) throws -> WAVFile {
    let format = WAVFormat(encoding: encoding, channels: channels, sampleRate: rate)
    let bytes = pattern(frames * format.bytesPerFrame, seed: seed)
    // Raw random bytes are valid samples for every integer encoding; floats get exact values instead.
    let samples: [Double] = encoding.isFloat
        ? (0..<(frames * channels)).map { Double(Int(bytes[$0 % bytes.count]) - 128) / 128 }
        : []
    if encoding.isFloat { return try WAVFile(bytes: WAVFile.encode(samples, format: format)) }
    let header = WAVFile.encode([], format: format)
    var file = header
    file.replaceSubrange(4..<8, with: le32(UInt32(header.count - 8 + bytes.count)))
    file.replaceSubrange((header.count - 4)..<header.count, with: le32(UInt32(bytes.count)))
    return try WAVFile(bytes: file + bytes)
}

private func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) } }

/// `frames` of `file` rendered as `encoding` at unity gain.
private func rendered(_ file: WAVFile, _ frames: Range<Int>, as encoding: SampleEncoding) -> [UInt8] {
    var out: [UInt8] = []
    file.render(frames: frames, as: encoding, gains: .unity, into: &out)
    return out
}

/// What the device must receive for `frames` with `gains`: the pure renderer's output.
private func expected(_ file: WAVFile, _ frames: Range<Int>, _ gains: OutputGains = .unity) -> [UInt8] {
    var out: [UInt8] = []
    file.render(frames: frames, as: file.format.encoding, gains: gains, into: &out)
    return out
}

/// A route file naming `device` as `audioroute_route` (what the daemon writes), replaced atomically.
func writeRoute(_ dir: String, _ device: String) throws {
    try AtomicFile.write(Array("pcm.!audioroute_route { type plug slave.pcm \"\(device)\" }\n".utf8), to: dir + "/route.conf")
}

/// An engine following `dir`/route.conf through the plugin's mover, over `devices`.
private func following(_ file: WAVFile, _ dir: String, first device: String, periodFrames: Int, latencyMicroseconds: Int = 5000) throws -> PlaybackEngine {
    try writeFile(dir + "/devices.conf", devices(dir))
    try writeRoute(dir, device)
    return try PlaybackEngine(
        file: file, device: AlsaRouteConfig.outputPCM,
        configuration: .route(file: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"]),
        periodFrames: periodFrames, latencyMicroseconds: latencyMicroseconds)
}

@Suite struct PlaybackEngineTests {
    @Test(arguments: SampleEncoding.allCases)
    func aMoveMidFileLosesAndRepeatsNoFrame(encoding: SampleEncoding) throws {
        try withSyncTemporaryDirectory { dir in
            let file = try source(encoding, channels: 2, frames: 10_007, seed: 11)
            let engine = try following(file, dir, first: "player_a", periodFrames: 1000)
            // The plugin's mover takes no FLOAT64: such a file goes as FLOAT.
            #expect(engine.pcmFormat == PCMFormat(encoding == .float64 ? .float32 : encoding))
            for _ in 0..<3 { #expect(try engine.writeNextPeriod() == 1000) }
            #expect(engine.routeDevice == "player_a")
            try writeRoute(dir, "player_b")
            engine.routeChanged()
            try engine.writeNextPeriod()
            let first = try #require(engine.takeMove())
            #expect(first == RerouteReport(from: "player_a", to: "player_b", replayedFrames: 0, resumeFrame: 3000))
            for _ in 0..<3 { try engine.writeNextPeriod() }
            // The plug in front of C passes the format through to its file.
            try writeRoute(dir, "player_c")
            engine.routeChanged()
            while try engine.writeNextPeriod() > 0 {}
            #expect(engine.takeMove()?.resumeFrame == 7000)
            #expect(engine.isAtEnd)
            try engine.drain()
            engine.close()

            let a = contents(dir + "/a.raw"), b = contents(dir + "/b.raw"), c = contents(dir + "/c.raw")
            let frameBytes = 2 * engine.outputEncoding.bytesPerSample
            #expect(a.count == 3000 * frameBytes && b.count == 4000 * frameBytes)
            #expect(a + b + c == rendered(file, 0..<file.frameCount, as: engine.outputEncoding),
                    "\(encoding): a \(a.count) b \(b.count) c \(c.count) bytes")
        }
    }

    @Test func itMovesOnlyWhenToldAndOnlyWhenTheRouteNamesAnotherDevice() throws {
        try withSyncTemporaryDirectory { dir in
            let file = try source(.signed16, channels: 2, frames: 4000, seed: 12)
            let engine = try following(file, dir, first: "player_a", periodFrames: 500)
            try engine.writeNextPeriod()
            // Told, the route unchanged: no move.
            engine.routeChanged()
            try engine.writeNextPeriod()
            #expect(engine.takeMove() == nil)
            // The file changed, not told (the client's session pauses first on an unplug): no move.
            try writeRoute(dir, "player_b")
            try engine.writeNextPeriod()
            #expect(engine.takeMove() == nil && engine.routeDevice == "player_a")
            engine.routeChanged()
            while try engine.writeNextPeriod() > 0 {}
            #expect(engine.takeMove()?.resumeFrame == 1500)
            try engine.drain()
            engine.close()
            #expect(contents(dir + "/a.raw") == Array(file.nativeBytes(frames: 0..<1500)))
            #expect(contents(dir + "/b.raw") == Array(file.nativeBytes(frames: 1500..<4000)))
        }
    }

    @Test func movesAtEveryPointOfAShortFileAddUpToTheSource() throws {
        // A period of 7 frames and moves after 0...7 periods, told twice in a row: the second
        // route is the one moved to, nothing reaches the first.
        let file = try source(.signed16, channels: 2, frames: 49, seed: 4)
        for split in 0...7 {
            try withSyncTemporaryDirectory { dir in
                let engine = try following(file, dir, first: "player_a", periodFrames: 7)
                for _ in 0..<split { try engine.writeNextPeriod() }
                try writeRoute(dir, "player_c")
                engine.routeChanged()
                try writeRoute(dir, "player_b")
                engine.routeChanged()
                while try engine.writeNextPeriod() > 0 {}
                try engine.drain()
                engine.close()
                let a = contents(dir + "/a.raw"), b = contents(dir + "/b.raw"), c = contents(dir + "/c.raw")
                #expect(c.isEmpty, "nothing was written between the two route changes")
                #expect(a + b == Array(file.nativeBytes(frames: 0..<49)), "split after \(split) periods")
            }
        }
    }

    @Test func pauseKeepsThePositionAtTheFirstUnplayedFrame() throws {
        try withSyncTemporaryDirectory { dir in
            let file = try source(.signed24, channels: 2, frames: 4000, seed: 31)
            let engine = try following(file, dir, first: "player_a", periodFrames: 1000)
            for _ in 0..<2 { try engine.writeNextPeriod() }
            engine.pause()
            #expect(!engine.isOpen)
            // Played out: the device got every frame written, the position is the next one.
            #expect(engine.position == 2000)
            #expect(contents(dir + "/a.raw") == Array(file.nativeBytes(frames: 0..<2000)))
            // Resumed after the route moved while paused: the engine opens the route as it is.
            try writeRoute(dir, "player_b")
            while try engine.writeNextPeriod() > 0 {}
            #expect(engine.routeDevice == "player_b" && engine.takeMove() == nil)
            try engine.drain()
            engine.close()
            #expect(contents(dir + "/a.raw") + contents(dir + "/b.raw") == Array(file.nativeBytes(frames: 0..<4000)))
        }
    }

    @Test func aMonoFileIsPlayedAsStereo() throws {
        try withSyncTemporaryDirectory { dir in
            let file = try source(.unsigned8, channels: 1, frames: 3001, rate: 22050, seed: 8)
            let engine = try following(file, dir, first: "player_a", periodFrames: 512)
            for _ in 0..<2 { try engine.writeNextPeriod() }
            try writeRoute(dir, "player_b")
            engine.routeChanged()
            while try engine.writeNextPeriod() > 0 {}
            let report = try #require(engine.takeMove())
            #expect(report.resumeFrame == 1024, "\(report)")
            try engine.drain()
            engine.close()
            let a = contents(dir + "/a.raw"), b = contents(dir + "/b.raw")
            #expect(a == expected(file, 0..<report.resumeFrame))
            #expect(b == expected(file, report.resumeFrame..<3001))
            // Each mono sample went to both sides.
            #expect(Array(a.prefix(4)) == [file.bytes[file.dataRange.lowerBound], file.bytes[file.dataRange.lowerBound],
                                           file.bytes[file.dataRange.lowerBound + 1], file.bytes[file.dataRange.lowerBound + 1]])
        }
    }

    @Test func volumePanAndDuckGainReachTheDevice() throws {
        try withSyncTemporaryDirectory { dir in
            // Constant samples (0.5, −0.5) so that the arithmetic can be written out.
            let format = WAVFormat(encoding: .signed16, channels: 2, sampleRate: 48000)
            let file = try WAVFile(bytes: WAVFile.encode([Double](repeating: 0, count: 800).enumerated().map { $0.offset % 2 == 0 ? 0.5 : -0.5 }, format: format))
            let engine = try PlaybackEngine(file: file, device: "player_a", configuration: configuration(dir), periodFrames: 100, latencyMicroseconds: 5000)
            try engine.writeNextPeriod()
            engine.gains.volume = 0.5
            try engine.writeNextPeriod()
            engine.gains.gain = 0.5 // ducked
            engine.gains.pan = 0.5
            try engine.writeNextPeriod()
            engine.gains = OutputGains(volume: 0.5) // unducked, centred
            while try engine.writeNextPeriod() > 0 {}
            try engine.drain()
            engine.close()
            let a = contents(dir + "/a.raw")
            #expect(a.count == 400 * 4)
            func frame(_ index: Int) -> (Int16, Int16) {
                let at = index * 4
                return (Int16(bitPattern: UInt16(a[at]) | UInt16(a[at + 1]) << 8), Int16(bitPattern: UInt16(a[at + 2]) | UInt16(a[at + 3]) << 8))
            }
            #expect(frame(0) == (16384, -16384))
            #expect(frame(99) == (16384, -16384))
            #expect(frame(100) == (8192, -8192))
            // volume 0.5 × duck 0.5 = 0.25; pan 0.5 halves the left again.
            #expect(frame(200) == (2048, -4096))
            #expect(frame(299) == (2048, -4096))
            #expect(frame(150) == (8192, -8192))
            #expect(frame(300) == (8192, -8192))
            #expect(frame(399) == (8192, -8192))
        }
    }

    @Test func seekAndCloseMoveThePositionAndReopen() throws {
        try withSyncTemporaryDirectory { dir in
            let file = try source(.signed16, channels: 2, frames: 400, seed: 2)
            let engine = try PlaybackEngine(file: file, device: "player_a", configuration: configuration(dir), periodFrames: 100, latencyMicroseconds: 5000)
            try engine.seek(to: 250)
            while try engine.writeNextPeriod() > 0 {}
            try engine.drain()
            #expect(contents(dir + "/a.raw") == Array(file.nativeBytes(frames: 250..<400)))
            engine.close()
            #expect(!engine.isOpen)
            try engine.seek(to: -5)
            #expect(engine.position == 0)
            try engine.seek(to: 9999)
            #expect(engine.isAtEnd)
            #expect(try engine.writeNextPeriod() == 0)
        }
    }

    /// A writer that loses the CPU during a scheduled start's lead-in must not start late by as
    /// long: the silence is measured again before each piece, and shortened. The `file` PCM does
    /// not pace (its delay is 0), so the lead-in is the time to the target when each piece is
    /// measured: half a second at first, less than 0.3 s after a 0.2 s stall.
    @Test func aStallDuringTheLeadInShortensIt() throws {
        try withSyncTemporaryDirectory { dir in
            let file = try source(.signed16, channels: 2, frames: 400, seed: 4)
            let engine = try PlaybackEngine(file: file, device: "player_a", configuration: configuration(dir), periodFrames: 100, latencyMicroseconds: 5000)
            engine.startTime = MonotonicClock.nanoseconds() + 500_000_000
            #expect(try engine.writeNextPeriod() == 100)
            usleep(200_000)
            while try engine.writeNextPeriod() > 0 {}
            try engine.drain()
            let bytes = contents(dir + "/a.raw")
            let lead = bytes.count / 4 - 400
            #expect(lead > 100 && lead < Int(0.3 * 48000) + 100, "a lead-in of \(lead) frames")
            #expect(Array(bytes[(lead * 4)...]) == Array(file.nativeBytes(frames: 0..<400)))
            #expect(bytes[..<(lead * 4)].allSatisfy { $0 == 0 })
        }
    }

    @Test func aRouteToAnUnknownDeviceFailsTheWriteAndThePositionIsKept() throws {
        try withSyncTemporaryDirectory { dir in
            let file = try source(.signed16, channels: 2, frames: 300, seed: 3)
            let engine = try following(file, dir, first: "player_a", periodFrames: 100)
            try engine.writeNextPeriod()
            try writeRoute(dir, "player_nowhere")
            engine.routeChanged()
            do {
                try engine.writeNextPeriod()
                Issue.record("moving to an undefined PCM succeeded")
            } catch {
                // The mover could not open the route's device: the device is gone for the stream,
                // and the player holds until its session says what follows.
                guard case PlaybackEngineError.output(let error)? = error as? PlaybackEngineError else { Issue.record("\(error)"); return }
                #expect(error.code == -Errno.Code.noSuchDevice.rawValue, "\(error)")
            }
            let resume = engine.position
            #expect(resume == 100 && contents(dir + "/a.raw").count == resume * 4)
            engine.close()
            try writeRoute(dir, "player_b")
            while try engine.writeNextPeriod() > 0 {}
            try engine.drain()
            engine.close()
            #expect(contents(dir + "/a.raw") + contents(dir + "/b.raw") == Array(file.nativeBytes(frames: 0..<300)))
        }
        let small = try source(.signed16, channels: 2, frames: 10, seed: 1)
        do {
            _ = try PlaybackEngine(file: small, device: "player_none", configuration: .custom(ALSAConfiguration()))
            Issue.record("opening an undefined PCM succeeded")
        } catch {
            #expect(error.operation == "snd_pcm_open player_none")
        }
    }

    @Test func wavFilesOnDiskMissingUnreadableOrInvalidAreTypedErrors() throws {
        try withSyncTemporaryDirectory { dir in
            #expect(throws: WAVFileError.missing(path: dir + "/none.wav")) { try WAVFile(contentsOf: dir + "/none.wav") }
            do {
                _ = try WAVFile(contentsOf: dir)
                Issue.record("a directory decoded")
            } catch let error as WAVFileError {
                guard case let .unreadable(cause) = error else { Issue.record("\(error)"); return }
                #expect(cause.code == .isDirectory)
            }
            try writeFile(dir + "/text.wav", "hello")
            #expect(throws: WAVFileError.invalid(path: dir + "/text.wav", .notWAV(reason: "no RIFF header (starts with hell)"))) {
                try WAVFile(contentsOf: dir + "/text.wav")
            }
            let format = WAVFormat(encoding: .float32, channels: 1, sampleRate: 44100)
            try AtomicFile.write(WAVFile.encode([0.25, -0.25], format: format), to: dir + "/ok.wav")
            let file = try WAVFile(contentsOf: dir + "/ok.wav")
            #expect(file.format == format && file.frameCount == 2)
        }
    }
}
