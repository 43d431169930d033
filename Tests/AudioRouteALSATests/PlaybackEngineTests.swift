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

/// What the device must receive for `frames` with `gains`: the pure renderer's output.
private func expected(_ file: WAVFile, _ frames: Range<Int>, _ gains: OutputGains = .unity) -> [UInt8] {
    var out: [UInt8] = []
    file.render(frames: frames, as: file.format.encoding, gains: gains, into: &out)
    return out
}

@Suite struct PlaybackEngineTests {
    @Test(arguments: SampleEncoding.allCases)
    func aRerouteMidFileLosesAndRepeatsNoFrame(encoding: SampleEncoding) throws {
        try withSyncTemporaryDirectory { dir in
            let file = try source(encoding, channels: 2, frames: 10_007, seed: 11)
            let engine = try PlaybackEngine(file: file, device: "player_a", configuration: configuration(dir), periodFrames: 1000, latencyMicroseconds: 5000)
            #expect(engine.pcmFormat == PCMFormat(encoding))
            for _ in 0..<3 { #expect(try engine.writeNextPeriod() == 1000) }
            let first = try engine.reroute(to: "player_b")
            #expect(first.from == "player_a" && first.to == "player_b")
            #expect(first.resumeFrame == 3000 - first.rewoundFrames)
            // With a 5 ms buffer, some frames reached A's file and some were taken back: both halves are exercised.
            #expect(first.rewoundFrames > 0 && first.resumeFrame > 0, "\(first)")
            #expect(engine.position == first.resumeFrame)
            for _ in 0..<4 { try engine.writeNextPeriod() }
            // The plug in front of C passes the format through to its file.
            let second = try engine.reroute(to: "player_c")
            while try engine.writeNextPeriod() > 0 {}
            #expect(engine.isAtEnd)
            try engine.drain()
            engine.close()

            let a = contents(dir + "/a.raw"), b = contents(dir + "/b.raw"), c = contents(dir + "/c.raw")
            let frameBytes = file.format.bytesPerFrame
            #expect(a.count == first.resumeFrame * frameBytes)
            #expect(b.count == (second.resumeFrame - first.resumeFrame) * frameBytes)
            #expect(a + b + c == Array(file.nativeBytes(frames: 0..<file.frameCount)),
                    "\(encoding): a \(a.count) b \(b.count) c \(c.count) bytes, rewound \(first.rewoundFrames) and \(second.rewoundFrames)")
        }
    }

    @Test func reroutesAtEveryPointOfAShortFileAddUpToTheSource() throws {
        // A period of 7 frames and reroutes after 0...6 periods, and twice in a row.
        let file = try source(.signed16, channels: 2, frames: 49, seed: 4)
        for split in 0...7 {
            try withSyncTemporaryDirectory { dir in
                let engine = try PlaybackEngine(file: file, device: "player_a", configuration: configuration(dir), periodFrames: 7, latencyMicroseconds: 5000)
                for _ in 0..<split { try engine.writeNextPeriod() }
                try engine.reroute(to: "player_c")
                try engine.reroute(to: "player_b")
                while try engine.writeNextPeriod() > 0 {}
                try engine.drain()
                engine.close()
                let a = contents(dir + "/a.raw"), b = contents(dir + "/b.raw"), c = contents(dir + "/c.raw")
                #expect(c.isEmpty, "nothing was written between the two reroutes")
                #expect(a + b == Array(file.nativeBytes(frames: 0..<49)), "split after \(split) periods")
            }
        }
    }

    @Test func theDrainStrategyPlaysEverythingWrittenOnTheOldDevice() throws {
        try withSyncTemporaryDirectory { dir in
            let file = try source(.float32, channels: 2, frames: 5000, seed: 21)
            let engine = try PlaybackEngine(file: file, device: "player_a", configuration: configuration(dir), periodFrames: 1000, latencyMicroseconds: 5000)
            engine.rerouteStrategy = .drain
            for _ in 0..<2 { try engine.writeNextPeriod() }
            let report = try engine.reroute(to: "player_b")
            #expect(report.rewoundFrames == 0 && report.resumeFrame == 2000)
            while try engine.writeNextPeriod() > 0 {}
            try engine.drain()
            engine.close()
            #expect(contents(dir + "/a.raw") == Array(file.nativeBytes(frames: 0..<2000)))
            #expect(contents(dir + "/b.raw") == Array(file.nativeBytes(frames: 2000..<5000)))
        }
    }

    @Test func pauseKeepsThePositionAtTheFirstUnplayedFrame() throws {
        try withSyncTemporaryDirectory { dir in
            let file = try source(.signed24, channels: 2, frames: 4000, seed: 31)
            let engine = try PlaybackEngine(file: file, device: "player_a", configuration: configuration(dir), periodFrames: 1000, latencyMicroseconds: 5000)
            for _ in 0..<2 { try engine.writeNextPeriod() }
            let rewound = engine.pause()
            #expect(!engine.isOpen)
            #expect(rewound > 0 && engine.position == 2000 - rewound)
            #expect(contents(dir + "/a.raw") == Array(file.nativeBytes(frames: 0..<engine.position)))
            // Unpaused on another device (the route moved while paused).
            let report = try engine.reroute(to: "player_b")
            #expect(report.rewoundFrames == 0 && report.resumeFrame == 2000 - rewound)
            while try engine.writeNextPeriod() > 0 {}
            try engine.drain()
            engine.close()
            #expect(contents(dir + "/a.raw") + contents(dir + "/b.raw") == Array(file.nativeBytes(frames: 0..<4000)))
        }
    }

    /// How the player follows the route: the daemon rewrites the route file,
    /// the engine reroutes to the same name, `audioroute`, and lands on the new device.
    @Test func reopeningAudiorouteAfterTheRouteFileChangedMovesToTheNewDevice() throws {
        try withSyncTemporaryDirectory { dir in
            try writeFile(dir + "/devices.conf", devices(dir))
            let writer = AlsaRouteConfigWriter(runtimeDirectory: dir + "/run")
            let speaker = Port(uid: "speaker", type: .builtInSpeaker, device: "card0", direction: .output, alsa: "player_a")
            let headset = Port(uid: "headset", type: .headphones, device: "card0", direction: .output, alsa: "player_c")
            try writer.write(AlsaRouteConfig(output: speaker, input: nil))
            let file = try source(.signed16, channels: 2, frames: 6000, seed: 41)
            let engine = try PlaybackEngine(
                file: file, device: AlsaRouteConfig.outputPCM, configuration: .systemPlus(files: [dir + "/devices.conf", writer.path]),
                periodFrames: 1000, latencyMicroseconds: 5000)
            for _ in 0..<3 { try engine.writeNextPeriod() }
            try writer.write(AlsaRouteConfig(output: headset, input: nil))
            let report = try engine.reroute(to: AlsaRouteConfig.outputPCM)
            #expect(report.rewoundFrames > 0 && report.resumeFrame > 0, "\(report)")
            while try engine.writeNextPeriod() > 0 {}
            try engine.drain()
            engine.close()
            let a = contents(dir + "/a.raw"), c = contents(dir + "/c.raw")
            #expect(a == Array(file.nativeBytes(frames: 0..<report.resumeFrame)))
            #expect(c == Array(file.nativeBytes(frames: report.resumeFrame..<6000)))
        }
    }

    @Test func aMonoFileIsPlayedAsStereo() throws {
        try withSyncTemporaryDirectory { dir in
            let file = try source(.unsigned8, channels: 1, frames: 3001, rate: 22050, seed: 8)
            let engine = try PlaybackEngine(file: file, device: "player_a", configuration: configuration(dir), periodFrames: 512, latencyMicroseconds: 5000)
            for _ in 0..<2 { try engine.writeNextPeriod() }
            let report = try engine.reroute(to: "player_b")
            #expect(report.resumeFrame > 0 && report.rewoundFrames > 0, "\(report)")
            while try engine.writeNextPeriod() > 0 {}
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

    @Test func anUnknownDeviceIsLibasoundsErrorAndThePositionIsKept() throws {
        try withSyncTemporaryDirectory { dir in
            let file = try source(.signed16, channels: 2, frames: 300, seed: 3)
            let engine = try PlaybackEngine(file: file, device: "player_a", configuration: configuration(dir), periodFrames: 100, latencyMicroseconds: 5000)
            try engine.writeNextPeriod()
            do {
                try engine.reroute(to: "player_nowhere")
                Issue.record("rerouting to an undefined PCM succeeded")
            } catch let error as ALSAError {
                #expect(error.operation == "snd_pcm_open player_nowhere")
            }
            #expect(!engine.isOpen)
            let resume = engine.position
            #expect(contents(dir + "/a.raw").count == resume * 4)
            try engine.reroute(to: "player_b")
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
