// The layer-2 sound-server bench itself (AudioRouteTestKit's SoundServerBench): each server
// starts on its private runtime directory and bus with the virtual devices, plays what a client
// gives it into the sink it was told (read back from the sink's monitor), and leaves nothing
// running when it stops. Skipped, with the missing programs named, where a server is not installed.
import AudioRouteCore
import AudioRouteSystem
import AudioRouteTestKit
import Glibc
import Testing

@Suite(.serialized, .timeLimit(.minutes(1))) struct SoundServerBenchTests {
    static let pipewireMissing = SoundServerKind.pipewire.missing
    static let pulseMissing = SoundServerKind.pulseaudio.missing

    @Test(.enabled(if: pipewireMissing == nil, "pipewire, wireplumber, pipewire-pulse or pulseaudio-utils not installed"))
    func pipewireStartsWithTheVirtualDevices() throws {
        try startsWithTheVirtualDevices(.pipewire, serverName: "PulseAudio (on PipeWire", socket: "pipewire-0")
    }

    @Test(.enabled(if: pulseMissing == nil, "pulseaudio or pulseaudio-utils not installed"))
    func pulseaudioStartsWithTheVirtualDevices() throws {
        try startsWithTheVirtualDevices(.pulseaudio, serverName: "Server Name: pulseaudio", socket: "pulse/native")
    }

    @Test(.enabled(if: pipewireMissing == nil, "pipewire, wireplumber, pipewire-pulse or pulseaudio-utils not installed"))
    func pipewirePlaysIntoTheSinkItIsGiven() throws {
        let bench = try SoundServerBench(.pipewire)
        defer { bench.stop() }
        try playsIntoTheSinkItIsGiven(bench, player: "pw-play", ["--target", "headphones"])
        try playsIntoTheSinkItIsGiven(bench, player: "paplay", ["-d", "headphones"])
    }

    @Test(.enabled(if: pulseMissing == nil, "pulseaudio or pulseaudio-utils not installed"))
    func pulseaudioPlaysIntoTheSinkItIsGiven() throws {
        let bench = try SoundServerBench(.pulseaudio)
        defer { bench.stop() }
        try playsIntoTheSinkItIsGiven(bench, player: "paplay", ["-d", "headphones"])
    }

    @Test(.enabled(if: pipewireMissing == nil && pulseMissing == nil, "a server is not installed"), arguments: SoundServerKind.allCases)
    func stopsCleanLeavingNothingRunning(_ kind: SoundServerKind) throws {
        let bench = try SoundServerBench(kind)
        let pids = bench.serverPIDs
        let directory = bench.directory
        #expect(pids.count == (kind == .pipewire ? 3 : 1))
        #expect(bench.processesLeft().count == pids.count, "the servers are found by their runtime directory")
        bench.stop()
        #expect(bench.serverPIDs.isEmpty)
        #expect(bench.processesLeft().isEmpty, "still running with the bench's runtime directory: \(bench.processesLeft())")
        for pid in pids { #expect(kill(pid, 0) != 0, "server \(pid) was not reaped") }
        #expect(access(directory, F_OK) != 0, "\(directory) is still there")
    }

    /// scripts/testbed.py starts the same servers for the scripts (bench/client-libraries):
    /// its configuration is this one, word for word.
    @Test func thePythonBenchHasTheSameConfiguration() throws {
        let python = try readText(Subprocess.packageRoot + "/scripts/testbed.py")
        for (name, text) in [
            ("the bus", SoundServerBench.busConfiguration), ("PipeWire's objects", SoundServerBench.pipewireObjects),
            ("PulseAudio's script", SoundServerBench.pulseScript),
        ] {
            #expect(python.contains(text), "scripts/testbed.py has another \(name)")
        }
    }

    // MARK: -

    func startsWithTheVirtualDevices(_ kind: SoundServerKind, serverName: String, socket: String) throws {
        let bench = try SoundServerBench(kind)
        defer { bench.stop() }
        let info = bench.run("pactl", ["info"])
        #expect(info.status == 0 && info.stdout.contains(serverName), "\(info.stdout)\(info.stderr)")
        #expect(info.stdout.contains("Default Sink: speaker"), "\(info.stdout)")
        #expect(info.stdout.contains("Server String: \(bench.runtimeDirectory)/pulse/native"), "the private runtime directory's server")
        #expect(access(bench.runtimeDirectory + "/" + socket, F_OK) == 0)
        let sinks = bench.run("pactl", ["list", "short", "sinks"]).names
        #expect(sinks.sorted() == SoundServerBench.sinks.sorted(), "nothing but the virtual sinks: \(sinks)")
        let sources = bench.run("pactl", ["list", "short", "sources"]).names
        #expect(sources.sorted() == ["headphones.monitor", "mic", "speaker.monitor"], "\(sources)")
    }

    /// Plays half-scale 1 kHz into `headphones` while both sinks' monitors are recorded: the
    /// tone is in the headphones' recording, not in the speaker's (the default).
    func playsIntoTheSinkItIsGiven(_ bench: SoundServerBench, player: String, _ arguments: [String]) throws {
        let wav = bench.directory + "/tone.wav"
        try writeBytes(wav, toneWAV(seconds: 0.5))
        var recorders: [String: ChildProcess] = [:]
        for sink in SoundServerBench.sinks {
            recorders[sink] = try bench.start(
                "parec",
                ["-d", sink + ".monitor", "--raw", "--latency-msec=20", "--format=s16le", "--rate=48000", "--channels=2", bench.directory + "/\(sink).raw"])
        }
        defer { for recorder in recorders.values { recorder.kill() } }
        // Recording before the tone starts: PulseAudio's null sink starts a monitor stream up to
        // 2 s late, so each recording must be growing first.
        let started = MonotonicClock.milliseconds()
        while !SoundServerBench.sinks.allSatisfy({ fileSize(bench.directory + "/\($0).raw") > 0 }) {
            guard MonotonicClock.milliseconds() - started < 5000 else { throw TestFailure("parec recorded nothing in 5 s") }
            usleep(20_000)
        }
        let played = bench.run(player, arguments + [wav])
        #expect(played.status == 0, "\(player): \(played.stderr)")
        usleep(200_000)
        for recorder in recorders.values {
            recorder.signal(SIGINT)
            _ = recorder.wait(seconds: 3)
        }
        let heard = try peakAndLoudFrames(bench.directory + "/headphones.raw")
        let other = try peakAndLoudFrames(bench.directory + "/speaker.raw")
        // 0.5 of full scale as played; the servers apply no gain at 100 % volume.
        #expect(heard.peak > 15_000 && heard.peak < 17_500, "\(player): the headphones' monitor peaked at \(heard.peak)")
        #expect(heard.loudFrames > 48_000 * 4 / 10, "\(player): \(heard.loudFrames) loud frames of 24000 played")
        #expect(other.peak < 100, "\(player): the speaker got \(other.peak)")
    }
}

/// A 48 kHz stereo s16 WAV of a 1 kHz tone at half scale.
func toneWAV(seconds: Double) -> [UInt8] {
    let frames = Int(48_000 * seconds)
    var data: [UInt8] = []
    data.reserveCapacity(frames * 4)
    for frame in 0..<frames {
        let sample = Int16(16_384 * sin(2 * Double.pi * 1000 * Double(frame) / 48_000))
        for _ in 0..<2 { withUnsafeBytes(of: sample.littleEndian) { data += $0 } }
    }
    func le32(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(value).littleEndian) { Array($0) } }
    func le16(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt16(value).littleEndian) { Array($0) } }
    return Array("RIFF".utf8) + le32(36 + data.count) + Array("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(2) + le32(48_000)
        + le32(48_000 * 4) + le16(4) + le16(16) + Array("data".utf8) + le32(data.count) + data
}

/// The largest |sample| of a raw s16le stereo file, and how many frames exceed a tenth of the tone.
func peakAndLoudFrames(_ path: String) throws -> (peak: Int, loudFrames: Int) {
    let bytes = try AtomicFile.read(path)
    var peak = 0
    var loud = 0
    var index = 0
    while index + 3 < bytes.count {
        let left = Int(Int16(bitPattern: UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8))
        peak = max(peak, abs(left))
        if abs(left) > 1_600 { loud += 1 }
        index += 4
    }
    return (peak, loud)
}

func fileSize(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : 0
}

func writeBytes(_ path: String, _ bytes: [UInt8]) throws { try AtomicFile.write(bytes, to: path) }
