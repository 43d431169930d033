// aplay through the plugin as it ships (scripts/build-alsa-plugin) and the shipped
// configuration snippet, into file PCMs named by a route file that the daemon's own
// writer (AlsaRouteConfigWriter) writes: no kernel, no sound card.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteSystem
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The plugin, built once per test process by the script that builds it for installing.
let plugin: Result<String, TestFailure> = {
    do {
        let result = try Subprocess.run(Subprocess.packageRoot + "/scripts/build-alsa-plugin", [makeTemporaryDirectory()])
        guard result.status == 0, let path = result.stdoutLines.last else {
            return .failure(TestFailure("scripts/build-alsa-plugin failed: \(result.stderr)"))
        }
        return .success(String(path))
    } catch {
        return .failure(TestFailure("scripts/build-alsa-plugin: \(error)"))
    }
}()

func port(_ name: String) -> Port {
    Port(uid: name, type: .usbAudio, device: name, direction: .output, alsa: .named(name))
}

/// A temporary HOME whose ~/.asoundrc is the shipped snippet (its `lib` pointed at the built
/// plugin) and two file PCMs, `plugtest_a` and `plugtest_b`; `plugtest_busy` is BlueALSA's plugin
/// (the real one), for a BlueALSA on the bus (TowerTests' `BusyBlueALSA`).
struct Bench {
    let dir: String
    var runtime: String { dir + "/run" }
    var environment: [String: String] { ["HOME": dir, "XDG_RUNTIME_DIR": runtime, "XDG_CONFIG_HOME": dir + "/config"] }
    let writer: AlsaRouteConfigWriter

    /// - Parameter loadingTheRouteFile: ~/.asoundrc also has docs/alsa.md's hook that loads the
    ///   route file into the configuration, as for clients without the plugin.
    init(_ dir: String, loadingTheRouteFile: Bool = false) throws {
        self.dir = dir
        let plugin = try plugin.get()
        let snippet = try readText(Subprocess.packageRoot + "/share/alsa/50-audioroute.conf")
        let shipped = "lib \"libasound_module_pcm_audioroute.so\""
        try #require(snippet.contains(shipped))
        var asoundrc = snippet.replacing(shipped, with: "lib \"\(plugin)\"") + """
            pcm.!plugtest_a { type file slave.pcm "null" file "\(dir)/a.raw" format "raw" }
            pcm.!plugtest_b { type file slave.pcm "null" file "\(dir)/b.raw" format "raw" }
            pcm.!plugtest_mic { type file slave.pcm "null" file "/dev/null" infile "\(dir)/mic.raw" format "raw" }
            pcm.!plugtest_busy { type bluealsa device "00:11:22:33:44:55" profile "a2dp" }
            pcm.!plugtest_51 { type file slave.pcm { type null chmap [ "FL,FR,RL,RR,FC,LFE" ] } file "\(dir)/c.raw" format "raw" }
            pcm.!plugtest_stereo { type file slave.pcm { type null chmap [ "FL,FR" ] } file "\(dir)/d.raw" format "raw" }

            """
        if loadingTheRouteFile {
            // The first fenced block after the `<!-- asoundrc -->` marker.
            let docs = try readText(Subprocess.packageRoot + "/docs/alsa.md")
            let block = docs.split(separator: "<!-- asoundrc -->", maxSplits: 1).last?.split(separator: "```", maxSplits: 2)
            try #require(block?.count == 3, "docs/alsa.md has no asoundrc block")
            asoundrc += block![1].drop { $0 != "\n" }
        }
        try writeFile(dir + "/.asoundrc", asoundrc)
        writer = AlsaRouteConfigWriter(runtimeDirectory: dir + "/run")
    }

    func route(to name: String) throws { try writer.write(AlsaRouteConfig(output: port(name), input: nil)) }

    func bytes(_ file: String) -> [UInt8] { (try? AtomicFile.read(dir + "/" + file)) ?? [] }

}

/// Waits (10 s at most) until `player` (aplay reading its frames from a pipe that holds no more)
/// blocks reading its standard input: every frame sent before has gone through the plugin then,
/// since aplay writes each chunk it read before it reads the next. The `file` PCM keeps up to a
/// buffer of them until it is closed, so the file's size cannot tell.
func waitUntilReadingInput(_ player: ChildProcess, seconds: Int64 = 10) -> Bool {
    waitUntilBlocked(player, inCall: "0 0x0 ", seconds: seconds)
}

/// Waits (10 s at most) until `player` is blocked in the system call that /proc/PID/syscall
/// starts with `prefix` (its number, then its arguments: "0 0x0 " is read(0, ...)).
func waitUntilBlocked(_ player: ChildProcess, inCall prefix: String, seconds: Int64 = 10) -> Bool {
    let deadline = MonotonicClock.milliseconds() + seconds * 1000
    while MonotonicClock.milliseconds() < deadline {
        if let call = try? readText("/proc/\(player.pid)/syscall"), call.hasPrefix(prefix) { return true }
        MonotonicClock.sleep(nanoseconds: 2_000_000)
    }
    return false
}

/// A capture stream reads the route's input: a file PCM whose `infile` is the microphone.
@Test func arecordThroughThePluginReadsTheRoutesInput() throws {
    try withSyncTemporaryDirectory { dir in
        let bench = try Bench(dir)
        let microphone = Port(uid: "mic", type: .usbAudio, device: "mic", direction: .input, alsa: "plugtest_mic")
        try bench.writer.write(AlsaRouteConfig(output: port("plugtest_a"), input: microphone))
        let recorded = pattern(4000 * 6, seed: 14)
        try AtomicFile.write(recorded, to: dir + "/mic.raw")
        let arecord = ["-q", "-D", "audioroute_capture", "-t", "raw", "-f", "S16_LE", "-c", "2", "-r", "48000",
                       "--period-size=1000", "--buffer-size=4000", "-s", "5000", dir + "/out.raw"]
        let result = try run("/usr/bin/arecord", arecord, environment: bench.environment)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let out = bench.bytes("out.raw")
        #expect(out.count == 5000 * 4)
        let same = out == Array(recorded.prefix(5000 * 4))  // not in #expect, which would print both arrays
        #expect(same, "out.raw is not the route's input")
    }
}

/// A capture stream on a route with no input (the route file's capture PCM is `null`, as until a
/// session that records is active) reads silence at the pace of a device, never junk; when a mic
/// comes into the route, the stream moves to it. Before, alsa-lib's null PCM returned at once and
/// left arecord's buffer as it was (heap bytes or zeros), in 10 of 20 real recordings.
@Test func arecordOnARouteWithNoInputReadsPacedSilenceThenTheMic() throws {
    try withSyncTemporaryDirectory { dir in
        let bench = try Bench(dir)
        try bench.writer.write(AlsaRouteConfig(output: port("plugtest_a"), input: nil))
        // No zero byte in the mic's frames: the silence before them ends where they begin.
        let recorded = pattern(48_000 * 8, seed: 21).map { $0 | 1 }  // 1 s of S32_LE stereo
        try AtomicFile.write(recorded, to: dir + "/mic.raw")
        // 0.5 s at 48 kHz, in 1000-frame periods; S32_LE, whose silence is zeros as S16's is,
        // but whose junk is less likely to be all zeros.
        let arecord = try ChildProcess("/usr/bin/arecord", [
            "-q", "-D", "audioroute_capture", "-t", "raw", "-f", "S32_LE", "-c", "2", "-r", "48000",
            "--period-size=1000", "--buffer-size=4000", "-s", "24000", dir + "/out.raw",
        ], environment: bench.environment)
        let started = MonotonicClock.milliseconds()
        // The mic comes once arecord has recorded 4000 frames (83 ms) with none.
        let deadline = started + 10_000
        while bench.bytes("out.raw").count < 4000 * 8 && MonotonicClock.milliseconds() < deadline {
            MonotonicClock.sleep(nanoseconds: 5_000_000)
        }
        let microphone = Port(uid: "mic", type: .usbAudio, device: "mic", direction: .input, alsa: "plugtest_mic")
        try bench.writer.write(AlsaRouteConfig(output: port("plugtest_a"), input: microphone))
        #expect(arecord.wait(seconds: 10) == 0, "stderr: \(arecord.availableStderr())")
        let elapsed = MonotonicClock.milliseconds() - started
        let out = bench.bytes("out.raw")
        #expect(out.count == 24000 * 8)
        // Silence first, then the mic's own frames from its start: nothing else.
        let silent = out.prefix { $0 == 0 }.count / 8
        #expect(silent >= 4000, "\(silent) frames of silence before the mic: the null device was not paced")
        let rest = Array(out.dropFirst(silent * 8))
        let mic = rest == Array(recorded.prefix(rest.count))  // not in #expect, which would print both arrays
        #expect(mic, "after \(silent) frames of silence, not the mic's frames")
        // Paced: the silence took the time it stands for (a lower bound, not a speed).
        #expect(elapsed >= Int64(silent) * 1000 / 48_000 - 20, "\(silent) frames of silence in \(elapsed) ms")
    }
}

/// aplay's arguments for raw S16_LE stereo 48 kHz with 1000-frame periods (4000 bytes).
func aplay(_ device: String, _ input: String) -> [String] {
    ["-q", "-D", device, "-t", "raw", "-f", "S16_LE", "-c", "2", "-r", "48000", "--period-size=1000", "--buffer-size=4000", input]
}

/// `written` is `frames` then only silence (aplay pads its last period with zeros).
private func expectFramesThenSilence(_ written: [UInt8], _ frames: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(written.count >= frames.count, sourceLocation: sourceLocation)
    let same = Array(written.prefix(frames.count)) == frames  // not in #expect, which would print both arrays
    #expect(same, "\(written.count) bytes written for \(frames.count): not the frames", sourceLocation: sourceLocation)
    let silence = written.dropFirst(frames.count).allSatisfy { $0 == 0 }
    #expect(silence, "not silence after the frames", sourceLocation: sourceLocation)
}

@Suite struct PluginAplayTests {
    @Test func aplayThroughThePluginWritesTheRoutesFile() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try Bench(dir)
            try bench.route(to: "plugtest_a")
            let frames = pattern(4000 * 5 + 400, seed: 7)
            try AtomicFile.write(frames, to: dir + "/in.raw")
            // Read/write access, then mmap access (aplay -M): the file PCM starts its file afresh.
            for access in [[], ["-M"]] {
                let result = try run("/usr/bin/aplay", access + aplay("audioroute", dir + "/in.raw"), environment: bench.environment)
                #expect(result.status == 0, "\(access) stderr: \(result.stderr)")
                expectFramesThenSilence(bench.bytes("a.raw"), frames)
                #expect(bench.bytes("b.raw").isEmpty)
            }
        }
    }

    /// The buffer an app may ask for is bounded (2 MiB), and an app that takes the largest (as
    /// speaker-test does without -b) plays. Before, ioplug's default let it take 206 million
    /// frames, and the plugin allocated four buffers' worth of them.
    @Test func theBufferIsBoundedAndTheLargestPlays() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try Bench(dir)
            try bench.route(to: "plugtest_a")
            let frames = pattern(4000, seed: 3)
            try AtomicFile.write(frames, to: dir + "/in.raw")
            let dump = try run("/usr/bin/aplay", ["--dump-hw-params"] + aplay("audioroute", dir + "/in.raw"), environment: bench.environment)
            #expect(dump.status == 0, "stderr: \(dump.stderr)")
            func range(_ name: String) -> [Int]? {
                guard let line = dump.stderr.split(separator: "\n").first(where: { $0.hasPrefix(name + ": ") }) else { return nil }
                return line.dropFirst(name.count + 2).split(whereSeparator: { "[]() ".contains($0) }).compactMap { Int($0) }
            }
            // Dumped before the format is set: in frames, the bound is that of a 1-byte frame.
            #expect(range("BUFFER_BYTES")?.last == 2 * 1024 * 1024, "stderr: \(dump.stderr)")
            #expect(range("PERIOD_BYTES")?.last == 1024 * 1024, "stderr: \(dump.stderr)")
            #expect(range("BUFFER_SIZE")?.last == 2 * 1024 * 1024, "stderr: \(dump.stderr)")
            // The largest buffer, asked for as speaker-test asks without -b.
            let largest = ["-q", "-D", "audioroute", "-t", "raw", "-f", "S16_LE", "-c", "2", "-r", "48000",
                           "--buffer-size=100000000", dir + "/in.raw"]
            let result = try run("/usr/bin/aplay", largest, environment: bench.environment)
            #expect(result.status == 0, "stderr: \(result.stderr)")
            let same = Array(bench.bytes("a.raw").prefix(frames.count)) == frames
            #expect(same, "the frames did not reach the route's device")
        }
    }

    @Test func argumentsComeFromTheDeviceStringOrTheEnvironment() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try Bench(dir)
            try bench.route(to: "plugtest_a")
            try AtomicFile.write(pattern(4000, seed: 8), to: dir + "/in.raw")
            let good = try run("/usr/bin/aplay", aplay("audioroute:CATEGORY=ambient,OPTIONS=mixWithOthers+duckOthers", dir + "/in.raw"), environment: bench.environment)
            #expect(good.status == 0, "stderr: \(good.stderr)")
            let bad = try run("/usr/bin/aplay", aplay("audioroute:CATEGORY=loud", dir + "/in.raw"), environment: bench.environment)
            #expect(bad.status != 0)
            #expect(bad.stderr.contains("unknown category \"loud\""), "stderr: \(bad.stderr)")
            var environment = bench.environment
            environment["AUDIOROUTE_CATEGORY"] = "shouting"
            let badEnvironment = try run("/usr/bin/aplay", aplay("audioroute", dir + "/in.raw"), environment: environment)
            #expect(badEnvironment.status != 0)
            #expect(badEnvironment.stderr.contains("AUDIOROUTE_CATEGORY"), "stderr: \(badEnvironment.stderr)")
        }
    }

    /// Issue 17: the route file loaded into the configuration by the documented ~/.asoundrc hook
    /// leaves `audioroute` to the plugin (the file defines it with `pcm.?`), so both can be
    /// installed: aplay still goes through the plugin; the file's own `audioroute_route` is
    /// the plain plug.
    @Test func theRouteFilesHookLeavesAudiorouteToThePlugin() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try Bench(dir, loadingTheRouteFile: true)
            try bench.route(to: "plugtest_a")
            let frames = pattern(4000 * 2 + 400, seed: 17)
            try AtomicFile.write(frames, to: dir + "/in.raw")
            var shouting = bench.environment
            shouting["AUDIOROUTE_CATEGORY"] = "shouting"
            let plugin = try run("/usr/bin/aplay", aplay("audioroute", dir + "/in.raw"), environment: shouting)
            #expect(plugin.status != 0)
            #expect(plugin.stderr.contains("AUDIOROUTE_CATEGORY"), "audioroute is not the plugin: \(plugin.stderr)")
            let result = try run("/usr/bin/aplay", aplay("audioroute", dir + "/in.raw"), environment: bench.environment)
            #expect(result.status == 0, "stderr: \(result.stderr)")
            expectFramesThenSilence(bench.bytes("a.raw"), frames)
            let route = try run("/usr/bin/aplay", aplay(AlsaRouteConfig.outputPCM, dir + "/in.raw"), environment: shouting)
            #expect(route.status == 0, "stderr: \(route.stderr)")
            expectFramesThenSilence(bench.bytes("a.raw"), frames)
        }
    }

    @Test func withoutARouteFileTheOpenFailsAndSaysWhy() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try Bench(dir)
            try AtomicFile.write(pattern(4000, seed: 9), to: dir + "/in.raw")
            let result = try run("/usr/bin/aplay", aplay("audioroute", dir + "/in.raw"), environment: bench.environment)
            #expect(result.status != 0)
            #expect(result.stderr.contains("is audiorouted running?"), "stderr: \(result.stderr)")
        }
    }

    /// The live move: aplay reads its frames from a pipe; halfway the route file names another
    /// device. The rest lands in the new device's file, none lost, none twice.
    @Test func anOpenStreamMovesToTheNewRouteAtAPeriodBoundary() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try Bench(dir)
            try bench.route(to: "plugtest_a")
            let first = pattern(4000 * 8, seed: 10)  // 8 periods
            let second = pattern(4000 * 6 + 1200, seed: 11)
            let player = try ChildProcess("/usr/bin/aplay", aplay("audioroute", "-"), environment: bench.environment, input: .pipe)
            player.send(first)
            try #require(waitUntilReadingInput(player), "stderr: \(player.availableStderr())")
            try bench.route(to: "plugtest_b")
            player.send(second)
            player.closeInput()
            #expect(player.wait(seconds: 10) == 0, "stderr: \(player.availableStderr())")
            let old = bench.bytes("a.raw")
            #expect(old.count == first.count)
            let same = old == first  // not compared in #expect, which would print both arrays
            #expect(same, "a.raw is not the frames sent before the move")
            expectFramesThenSilence(bench.bytes("b.raw"), second)
        }
    }

    /// A move reads the route file once: the version that named the new device is the one
    /// opened. Counted with inotify's IN_OPEN on the file, watched with IN_CLOSE_NOWRITE so that
    /// two opens are never adjacent events, which inotify would merge (the writer's own opens are
    /// of its temporary file). Before, a move read it twice: to compare, then to open.
    @Test func aMoveReadsTheRouteFileOnce() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try Bench(dir)
            try bench.route(to: "plugtest_a")
            let player = try ChildProcess("/usr/bin/aplay", aplay("audioroute", "-"), environment: bench.environment, input: .pipe)
            player.send(pattern(4000 * 2, seed: 30))
            try #require(waitUntilReadingInput(player), "stderr: \(player.availableStderr())")
            let watch = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            try #require(watch >= 0)
            defer { close(watch) }
            try #require(inotify_add_watch(watch, bench.runtime + "/audioroute", UInt32(IN_OPEN | IN_CLOSE_NOWRITE)) >= 0)
            try bench.route(to: "plugtest_b")
            player.send(pattern(4000 * 2, seed: 31))
            // Counted once aplay has ended: its last frames went through the move (a check while
            // it runs could come before aplay has even woken for them); its close reads nothing.
            player.closeInput()
            #expect(player.wait(seconds: 10) == 0, "stderr: \(player.availableStderr())")
            var opens = 0
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                var offset = 0
                while offset + 16 <= count {
                    let length = Int(buffer[offset + 12]) | Int(buffer[offset + 13]) << 8 | Int(buffer[offset + 14]) << 16
                    let name = String(decoding: buffer[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }, as: UTF8.self)
                    let mask = UInt32(buffer[offset + 4]) | UInt32(buffer[offset + 5]) << 8 | UInt32(buffer[offset + 6]) << 16
                    if name == "asound.conf" && mask & UInt32(IN_OPEN) != 0 { opens += 1 }
                    offset += 16 + length
                }
            }
            #expect(opens == 1, "the route file was opened \(opens) times for one move")
            let moved = !bench.bytes("b.raw").isEmpty
            #expect(moved, "the stream did not move")
        }
    }

    /// The plugin offers the channel maps of the route's device, so that a player chooses a
    /// layout the device plays (a 5.1 device: 5.1; a stereo one: stereo, the player mixing down
    /// by its own rule) and reads the map in use. Before, it offered none (mpv: "query_chmaps()
    /// returned NULL", a 5.1 file played as stereo even to a 5.1 device).
    @Test(arguments: [
        ("plugtest_51", 6, ["query FIXED FL FR RL RR FC LFE", "get FL FR RL RR FC LFE"]),
        ("plugtest_stereo", 2, ["query FIXED FL FR", "get FL FR"]),
        ("plugtest_stereo", 6, ["query FIXED FL FR", "get none"]),  // the plug would convert: no map is the stream's
        ("plugtest_a", 2, ["query none", "get none"]),  // a device that says nothing: as before
    ])
    func theChannelMapsAreTheDevices(_ device: String, _ channels: Int, _ expected: [String]) throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try Bench(dir)
            try bench.route(to: device)
            let probe = dir + "/chmap-probe"
            let compiled = try Subprocess.run("/usr/bin/cc", [
                "-std=gnu11", "-Wall", "-Werror", "-o", probe, Subprocess.packageRoot + "/Tests/Helpers/chmap-probe/chmap-probe.c", "-lasound",
            ])
            try #require(compiled.status == 0, "cc: \(compiled.stderr)")
            let result = try ChildProcess(probe, ["audioroute", "\(channels)"], environment: bench.environment, input: .pipe).collect()
            #expect(result.status == 0, "stderr: \(result.stderr)")
            #expect(result.stdoutLines.map(String.init) == expected, "stderr: \(result.stderr)")
        }
    }

    /// A route whose device cannot be opened holds the writer (aplay blocks in the plugin, at a
    /// boundary, frames kept) until the route names one that can: then everything continues there.
    @Test func aDeviceThatCannotOpenHoldsTheStreamUntilTheNextRoute() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try Bench(dir)
            try bench.route(to: "plugtest_a")
            let first = pattern(4000 * 3, seed: 15)
            let second = pattern(4000 * 3, seed: 16)
            let player = try ChildProcess("/usr/bin/aplay", aplay("audioroute", "-"), environment: bench.environment, input: .pipe)
            player.send(first)
            try #require(waitUntilReadingInput(player), "stderr: \(player.availableStderr())")
            try bench.route(to: "plugtest_missing")  // not defined: the open fails
            player.send(second)
            try #require(waitUntilBlocked(player, inCall: "7 "), "not held in poll; stderr: \(player.availableStderr())")  // poll(2)
            #expect(player.exitStatus == nil)
            #expect(bench.bytes("b.raw").isEmpty)
            try bench.route(to: "plugtest_b")
            player.closeInput()
            #expect(player.wait(seconds: 10) == 0, "stderr: \(player.availableStderr())")
            #expect(bench.bytes("a.raw").count == first.count)
            expectFramesThenSilence(bench.bytes("b.raw"), second)
        }
    }

    /// A rewrite of the route file that names the same device (the other side changed) is no move.
    @Test func aRewriteWithTheSameDeviceDoesNotMove() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try Bench(dir)
            try bench.route(to: "plugtest_a")
            let first = pattern(4000 * 2, seed: 12)
            let second = pattern(4000 * 2, seed: 13)
            let player = try ChildProcess("/usr/bin/aplay", aplay("audioroute", "-"), environment: bench.environment, input: .pipe)
            player.send(first)
            try #require(waitUntilReadingInput(player), "stderr: \(player.availableStderr())")
            try bench.writer.write(AlsaRouteConfig(output: port("plugtest_a"), input: port("plugtest_b")))
            player.send(second)
            player.closeInput()
            #expect(player.wait(seconds: 10) == 0, "stderr: \(player.availableStderr())")
            expectFramesThenSilence(bench.bytes("a.raw"), first + second)
            #expect(bench.bytes("b.raw").isEmpty)
        }
    }
}
