// The whole path of a headset plug, with nothing simulated above the kernel: a jack
// event on a umockdev testbed reaches the real audiorouted (udev watcher, tower, route
// file, D-Bus), its notification reaches this process's AudioSession, and the
// AudioPlayer following it moves to the headset's device, continuing from the same
// frame; the unplug pauses it. The devices are `file` PCMs (test-bench.md) whose file
// is a pipe to `audioroute demo-sink` (docs/demo.md), so that playback runs at the real
// rate and is still going when the plug arrives.
import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import AudioRouteALSA
import AudioSession
import Glibc
import Synchronization
import Testing

/// `share/demo/emitter.py` under umockdev-wrapper: owns the testbed, one command a line.
private final class Emitter {
    let process: ChildProcess
    private var reader: LineReader
    private let input: Int32
    let root: String

    init(packageRoot: String) throws {
        var inPipe: [Int32] = [0, 0]
        guard pipe(&inPipe) == 0 else { throw TestFailure("pipe: errno \(errno)") }
        for fd in inPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        defer { close(inPipe[0]) }
        process = try ChildProcess(
            "/usr/bin/umockdev-wrapper", ["/usr/bin/python3", packageRoot + "/share/demo/emitter.py"],
            environment: ["PYTHONUNBUFFERED": "1"], input: .descriptor(inPipe[0]))
        input = inPipe[1]
        reader = LineReader(fd: process.stdout)
        guard let ready = reader.next(seconds: 30), ready.hasPrefix("READY ") else {
            close(input)
            throw TestFailure("the umockdev emitter did not start: \(process.availableStderr())")
        }
        root = String(ready.dropFirst("READY ".count))
    }

    /// Sends a command; its answer must be OK.
    func expectOK(_ command: String) throws {
        let bytes = Array((command + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
        let answer = reader.next(seconds: 20)
        guard answer?.hasPrefix("OK") == true else { throw TestFailure("emitter: \(command): \(answer ?? "no answer")") }
    }

    /// quit lets the emitter remove its testbed.
    func quit() {
        let bytes = Array("quit\n".utf8)
        _ = bytes.withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
        if process.wait(seconds: 10) == nil { process.signal(SIGKILL) }
        close(input)
    }
}

/// The package root: the first ancestor of the test binary holding share/demo.
private let packageRoot: String? = {
    var dir = productsDirectory
    while dir.contains("/") {
        if access(dir + "/share/demo/emitter.py", R_OK) == 0 { return dir }
        dir = String(dir[..<dir.lastIndex(of: "/")!])
    }
    return nil
}()

private func contents(_ path: String) -> [UInt8] { (try? AtomicFile.read(path)) ?? [] }

/// Polls `condition` every millisecond for up to `seconds`.
private func waitUntil(seconds: Double = 15, _ condition: () -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try await Task.sleep(for: .milliseconds(1))
    }
    return true
}

@Suite(.serialized) struct PlayerHotplugTests {
    @Test func aPluggedHeadsetTakesTheMusicFromTheSameFrameAndTheUnplugPausesIt() async throws {
        let root = try #require(packageRoot, "no share/demo above \(productsDirectory)")
        try await withTemporaryDirectory { dir in
            let emitter = try Emitter(packageRoot: root)
            defer { emitter.quit() }
            // The demo's phone: a speaker on demo_builtin, a headset jack on demo_headphones.
            try emitter.expectOK("jackdev /dev/input/event20 14 0 PinePhone_Headset_Jack")
            try emitter.expectOK("load \(root)/share/demo/phone.umockdev")
            let bus = try PrivateBus()
            defer { bus.close() }
            let daemon = try RealDaemon(address: bus.address, directory: dir, testbed: emitter.root)
            defer { daemon.kill() }

            let sink = productsDirectory + "/audioroute"
            let devices = """
                pcm.!demo_builtin { type file slave.pcm "null" file "|exec '\(sink)' demo-sink '\(dir)/speaker.raw'" format "raw" }
                pcm.!demo_headphones { type file slave.pcm "null" file "|exec '\(sink)' demo-sink '\(dir)/headset.raw'" format "raw" }

                """
            try AtomicFile.write(Array(devices.utf8), to: dir + "/devices.conf")
            let routeFile = dir + "/run/audioroute/asound.conf"
            // 10 s of a pattern that differs from frame to frame: a lost or repeated frame shows.
            let frames = 480_000
            let format = WAVFormat(encoding: .signed16, channels: 2, sampleRate: 48_000)
            let samples = (0..<(frames * 2)).map { Double(($0 * 7919) % 20000 - 10000) / 32768 }
            try AtomicFile.write(WAVFile.encode(samples, format: format), to: dir + "/music.wav")
            let source = try WAVFile(contentsOf: dir + "/music.wav")

            let music = AudioSession(bus: .address(bus.address), appName: "music")
            try await music.setCategory(.playback)
            try await music.setActive(true)
            #expect(try await waitUntil { String(decoding: contents(routeFile), as: UTF8.self).contains("slave.pcm \"demo_builtin\"") })
            let player = try AudioPlayer(
                contentsOf: dir + "/music.wav", routeFile: routeFile, configurationFiles: [dir + "/devices.conf"],
                periodFrames: 480, latencyMicroseconds: 20_000)
            let following = await player.follow(music)
            defer { following.cancel() }
            let reroutes = Mutex<[RerouteReport]>([])
            let collecting = Task {
                for await event in player.events { if case .rerouted(let report) = event { reroutes.withLock { $0.append(report) } } }
            }
            defer { collecting.cancel() }
            try player.play()
            defer { player.stop() }
            #expect(try await waitUntil { contents(dir + "/speaker.raw").count >= 4800 * 4 }, "nothing reached the speaker")

            // Plug: the player reroutes by itself.
            try emitter.expectOK("jacks /dev/input/event20 2:1,4:1")
            #expect(try await waitUntil { reroutes.withLock { !$0.isEmpty } }, "the player did not reroute")
            #expect(try await waitUntil { contents(dir + "/headset.raw").count >= 4800 * 4 }, "nothing reached the headset")
            #expect(player.isPlaying)

            // Unplug: it pauses, and nothing goes to the speaker.
            try emitter.expectOK("jacks /dev/input/event20 2:0,4:0")
            #expect(try await waitUntil { !player.isPlaying }, "the unplug did not pause the player")
            #expect(try await waitUntil { String(decoding: contents(routeFile), as: UTF8.self).contains("slave.pcm \"demo_builtin\"") })
            let speaker = contents(dir + "/speaker.raw")
            let headset = contents(dir + "/headset.raw")
            try await Task.sleep(for: .milliseconds(200))
            #expect(contents(dir + "/speaker.raw") == speaker && contents(dir + "/headset.raw") == headset)
            #expect(access(dir + "/speaker.raw.0001", F_OK) != 0, "the speaker was opened again after the unplug")

            // The speaker got the file from its start up to the reroute's frame, the headset
            // from exactly there up to the pause: no frame lost or repeated.
            let played = player.framesPlayed
            #expect(played > 0 && played < frames)
            let report = reroutes.withLock { $0 }
            #expect(report.count == 1 && report.first?.resumeFrame == speaker.count / 4, "\(report), speaker \(speaker.count / 4) frames")
            #expect(speaker + headset == Array(source.nativeBytes(frames: 0..<played)))
        }
    }
}
