// `audioroute play` end to end: the built binary, the real audiorouted on a
// private bus, and a libasound `file` PCM standing for the device.
import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Glibc
import Testing

@Suite(.serialized) struct PlayCommandTests {
    static func play(_ arguments: [String], environment: [String: String]) throws -> (status: Int32, out: String, err: String) {
        let child = try ChildProcess(productsDirectory + "/audioroute", ["play"] + arguments, environment: environment)
        let out = CLI.readAll(child.stdout)
        guard let status = child.wait(seconds: 20) else {
            child.signal(SIGKILL)
            throw TestFailure("audioroute play \(arguments) did not finish")
        }
        return (status, out, child.availableStderr())
    }

    /// A real daemon on a private bus, a `playtest` file PCM writing `DIR/out.raw`, and
    /// `DIR/a.wav` (0.2 s of 48 kHz stereo 16-bit) for `body(dir, file, environment)`.
    static func withPlayTest(_ body: (String, WAVFile, [String: String]) async throws -> Void) async throws {
        try await withTemporaryDirectory { dir in
            let bus = try PrivateBus()
            defer { bus.close() }
            let daemon = try RealDaemon(address: bus.address, directory: dir)
            defer { daemon.kill() }
            try AtomicFile.write(
                Array("pcm.!playtest { type file slave.pcm \"null\" file \"\(dir)/out.raw\" format \"raw\" }\n".utf8),
                to: dir + "/.asoundrc")
            let format = WAVFormat(encoding: .signed16, channels: 2, sampleRate: 48000)
            let samples = (0..<9600).map { Double(($0 * 31) % 2000 - 1000) / 32768 }
            try AtomicFile.write(WAVFile.encode(samples, format: format), to: dir + "/a.wav")
            let file = try WAVFile(contentsOf: dir + "/a.wav")
            try await body(dir, file, ["DBUS_SESSION_BUS_ADDRESS": bus.address, "HOME": dir, "XDG_RUNTIME_DIR": dir + "/run"])
        }
    }

    @Test func playsAFileToTheDeviceAndExitsZero() async throws {
        try await Self.withPlayTest { dir, file, environment in

            let result = try Self.play([dir + "/a.wav", "--device", "playtest"], environment: environment)
            #expect(result.status == 0, "\(result.err)")
            #expect((try? AtomicFile.read(dir + "/out.raw")) == Array(file.nativeBytes(frames: 0..<4800)))
            // Not a terminal: plain lines, no carriage returns.
            #expect(!result.out.contains("\r") && result.out.contains("0:00/0:00"), "\(result.out)")

            let bad = try Self.play([dir + "/.asoundrc", "--device", "playtest"], environment: environment)
            #expect(bad.status == 65 && bad.err.contains("cannot decode (format: unknown)"), "\(bad.err)")
            let missing = try Self.play([dir + "/none.wav"], environment: environment)
            #expect(missing.status == 66 && missing.err.contains("no such file"), "\(missing.err)")
        }
    }

    /// An encoder on PATH; missing, the test fails naming its Debian package (scripts/bootstrap installs it).
    static func encode(_ name: String, package: String, _ arguments: [String]) throws {
        let path = (Environment.variables["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map { "\($0)/\(name)" }
            .first { FileInfo.isReadable($0) }
        guard let path else { throw TestFailure("\(name) is not installed: apt-get install \(package) (scripts/bootstrap installs it)") }
        let result = try ChildProcess(path, arguments).collect()
        guard result.status == 0 else { throw TestFailure("\(name) \(arguments): status \(result.status): \(result.stderr)") }
    }

    /// FLAC, MP3 and a 5.1 WAV through the command: the FLAC's samples exactly; the MP3 and the
    /// 5.1 file as float stereo (libsndfile's decoding and the downmix, tested in AudioSessionTests).
    @Test func playsFLACMP3AndSixChannelFiles() async throws {
        try await Self.withPlayTest { dir, file, environment in
            try Self.encode("flac", package: "flac", ["-s", dir + "/a.wav", "-o", dir + "/a.flac"])
            let flac = try Self.play([dir + "/a.flac", "--device", "playtest"], environment: environment)
            #expect(flac.status == 0, "\(flac.err)")
            #expect((try? AtomicFile.read(dir + "/out.raw")) == Array(file.nativeBytes(frames: 0..<file.frameCount)))

            try Self.encode("lame", package: "lame", ["--quiet", "-V", "4", "--add-id3v2", "--tt", "t", dir + "/a.wav", dir + "/a.mp3"])
            let mp3 = try Self.play([dir + "/a.mp3", "--device", "playtest"], environment: environment)
            #expect(mp3.status == 0, "\(mp3.err)")
            let mp3Frames = ((try? AtomicFile.read(dir + "/out.raw")) ?? []).count / 8
            #expect(abs(mp3Frames - file.frameCount) <= 1152, "\(mp3Frames) frames of float stereo")

            let six = WAVFile.encode(
                (0..<(4800 * 6)).map { Double($0 % 6) / 10 }, format: WAVFormat(encoding: .signed16, channels: 6, sampleRate: 48000))
            try AtomicFile.write(six, to: dir + "/six.wav")
            let sixResult = try Self.play([dir + "/six.wav", "--device", "playtest"], environment: environment)
            #expect(sixResult.status == 0, "\(sixResult.err)")
            #expect(((try? AtomicFile.read(dir + "/out.raw")) ?? []).count == 4800 * 8)
        }
    }

    @Test func rateSetsEnableRateAndPlaysTheResampledFile() async throws {
        try await Self.withPlayTest { dir, file, environment in

            let result = try Self.play([dir + "/a.wav", "--device", "playtest", "--rate", "1.5", "--varispeed"], environment: environment)
            #expect(result.status == 0, "\(result.err)")
            var expected: [UInt8] = []
            var position = SourcePosition(frame: 0)
            file.renderVarispeed(from: &position, step: VarispeedStep(rate: 1.5), maxFrames: .max, as: .signed16, gains: .unity, into: &expected)
            let out = (try? AtomicFile.read(dir + "/out.raw")) ?? []
            #expect(out.count == 3200 * 4)  // 4800 frames at 1.5
            let same = out == expected
            #expect(same)

            let outside = try Self.play([dir + "/a.wav", "--device", "playtest", "--rate", "3"], environment: environment)
            #expect(outside.status == 64 && outside.err.contains("--rate must be between 0.5 and 2"), "\(outside.err)")
        }
    }

    /// `--at T` (T 3 s ahead on CLOCK_MONOTONIC): the device gets silence up to T (less what the
    /// process took to start, under 2 s), then the file's own frames; a T that is not a positive
    /// number is a usage error.
    @Test func atStartsTheFileAtATime() async throws {
        try await Self.withPlayTest { dir, file, environment in
            let at = Double(MonotonicClock.nanoseconds()) / 1e9 + 3
            let result = try Self.play([dir + "/a.wav", "--device", "playtest", "--at", String(at)], environment: environment)
            #expect(result.status == 0, "\(result.err)")
            let out = (try? AtomicFile.read(dir + "/out.raw")) ?? []
            let leadIn = out.count / 4 - 4800
            #expect(leadIn > 48000 && leadIn <= 3 * 48000, "\(leadIn) frames of silence")
            #expect(out.prefix(leadIn * 4).allSatisfy { $0 == 0 })
            #expect(Array(out.suffix(4800 * 4)) == Array(file.nativeBytes(frames: 0..<4800)))

            let bad = try Self.play([dir + "/a.wav", "--device", "playtest", "--at=-1"], environment: environment)
            #expect(bad.status == 64 && bad.err.contains("--at must be"), "\(bad.err)")
        }
    }

    @Test func noDaemonIsAClearErrorAndStatusOne() async throws {
        try await withTemporaryDirectory { dir in
            let format = WAVFormat(encoding: .signed16, channels: 1, sampleRate: 8000)
            try AtomicFile.write(WAVFile.encode([0, 0.5], format: format), to: dir + "/a.wav")
            let result = try Self.play(
                [dir + "/a.wav"], environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(dir)/no-bus", "HOME": dir])
            #expect(result.status == 69)
            #expect(result.err.contains("audiorouted") && result.err.contains("not reachable"), "\(result.err)")
        }
    }

    /// SIGINT and SIGTERM stop cleanly: 128+N, after deactivating (looping forever on `null`, which does not pace;
    /// `--loops -1` as a user types it, which argument-parser took for an option until it parsed the value unconditionally).
    @Test(arguments: [SIGINT, SIGTERM]) func aSignalStopsWith128PlusN(_ number: Int32) async throws {
        try await withTemporaryDirectory { dir in
            let bus = try PrivateBus()
            defer { bus.close() }
            let daemon = try RealDaemon(address: bus.address, directory: dir)
            defer { daemon.kill() }
            let format = WAVFormat(encoding: .signed16, channels: 2, sampleRate: 48000)
            try AtomicFile.write(WAVFile.encode([Double](repeating: 0, count: 960), format: format), to: dir + "/a.wav")
            let child = try ChildProcess(
                productsDirectory + "/audioroute", ["play", dir + "/a.wav", "--device", "null", "--loops", "-1"],
                environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address, "HOME": dir, "XDG_RUNTIME_DIR": dir + "/run"])
            // The first progress line says it is playing.
            var first: [UInt8] = []
            var byte: UInt8 = 0
            while read(child.stdout, &byte, 1) == 1, byte != UInt8(ascii: "\n") { first.append(byte) }
            #expect(String(decoding: first, as: UTF8.self).contains("playing"))
            child.signal(number)
            guard let status = child.wait(seconds: 20) else {
                child.signal(SIGKILL)
                throw TestFailure("audioroute play ignored signal \(number)")
            }
            #expect(status == 128 + number, "\(child.availableStderr())")
        }
    }
}
