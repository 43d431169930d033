import AudioRouteCore
import AudioRouteSystem
import Synchronization

/// What a plain `aplay` needs to play through the `audioroute` ALSA plugin in the demo: aplay
/// itself, the plugin, and a private ALSA configuration. Nil (with the reason on the timeline)
/// when aplay or the plugin is missing: the demo then tells the story without it.
struct AplaySetup {
    let aplay: String
    let plugin: String
    /// aplay's own view of the demo's devices: the same file PCMs, writing into `out-aplay/`,
    /// so that the player's checks count the player's frames only.
    let devices: DemoDevices
    /// aplay's environment: a HOME whose ~/.asoundrc loads the plugin and the devices, the
    /// daemon's runtime directory (the plugin reads the route file there), the demo's bus.
    let environment: [String: String]
    let log: String
    /// The device string: a mixable playback session, so that it plays beside the music
    /// (once the plugin opens a session in the tower) instead of interrupting it.
    static let device = "audioroute:CATEGORY=playback,OPTIONS=mixWithOthers"

    /// The plugin the demo loads: `AUDIOROUTE_ALSA_PLUGIN` (a path to the built
    /// libasound_module_pcm_audioroute.so), else built now from the package's sources with
    /// scripts/build-alsa-plugin into the demo's directory (about a second), so that it is
    /// the plugin of these sources and no install is needed.
    static func prepare(root: String, dir: String, executable: String, busAddress: String, timeline: DemoTimeline) -> AplaySetup? {
        func skip(_ why: String) -> AplaySetup? {
            timeline.event("aplay skipped", ["reason": .string(why)], "the plain aplay part is skipped: \(why)")
            return nil
        }
        guard let aplay = findInPath("aplay") else { return skip("no aplay in PATH (Debian: apt-get install alsa-utils)") }
        let plugin: String
        if let given = Environment.variables["AUDIOROUTE_ALSA_PLUGIN"], !given.isEmpty {
            guard FileInfo.isReadable(given) else { return skip("AUDIOROUTE_ALSA_PLUGIN=\(given) is not a readable file") }
            plugin = given
            timeline.event("aplay", ["plugin": .string(plugin)], "the audioroute ALSA plugin from AUDIOROUTE_ALSA_PLUGIN: \(plugin)")
        } else {
            let log = dir + "/logs/build-alsa-plugin.log"
            let script = root + "/scripts/build-alsa-plugin"
            guard FileInfo.isExecutable(script) else { return skip("no \(script) to build the ALSA plugin with") }
            let started = MonotonicClock.milliseconds()
            var options = DemoChild.options([:])
            options.standardOutput = .open("/dev/null", .writeOnly)
            options.standardError = .open(log, [.writeOnly, .create, .append])
            let status = (try? DemoChild.spawn([script, dir + "/alsa-plugin"], options).wait().shellStatus) ?? 127
            plugin = dir + "/alsa-plugin/libasound_module_pcm_audioroute.so"
            guard status == 0, FileInfo.isReadable(plugin) else {
                return skip("scripts/build-alsa-plugin failed (exit \(status); a C compiler and libasound2-dev are needed): see \(log) (kept with --keep)")
            }
            timeline.event(
                "aplay", ["plugin": .string(plugin), "buildms": .integer(MonotonicClock.milliseconds() - started)],
                "built the audioroute ALSA plugin with scripts/build-alsa-plugin (\(MonotonicClock.milliseconds() - started) ms)")
        }
        guard !plugin.contains("\""), !plugin.contains("\\") else { return skip("the plugin's path has a quote or a backslash: \(plugin)") }
        guard let snippet = try? AtomicFile.read(root + "/share/alsa/50-audioroute.conf") else {
            return skip("no \(root)/share/alsa/50-audioroute.conf (the plugin's definitions)")
        }
        let home = dir + "/aplay-home"
        let devices = DemoDevices(dir: dir + "/out-aplay", executable: executable)
        do {
            try AtomicFile.createDirectory(home)
            try AtomicFile.createDirectory(devices.dir)
            // The shipped definitions, their plugin pointed at this one (a later `lib` of the
            // same type replaces the earlier), then the devices.
            let asoundrc = String(decoding: snippet, as: UTF8.self) + "\npcm_type.audioroute { lib \"\(plugin)\" }\n" + devices.configuration
            try AtomicFile.write(Array(asoundrc.utf8), to: home + "/.asoundrc", mode: 0o644, durable: false)
        } catch {
            return skip("cannot write aplay's configuration: \(error)")
        }
        let environment = [
            "HOME": home, "XDG_CONFIG_HOME": home + "/.config", "XDG_RUNTIME_DIR": dir + "/run", "DBUS_SESSION_BUS_ADDRESS": busAddress,
        ]
        return AplaySetup(aplay: aplay, plugin: plugin, devices: devices, environment: environment, log: dir + "/logs/aplay.log")
    }

    /// `name` in a directory of PATH, executable.
    static func findInPath(_ name: String) -> String? {
        let path = Environment.variables["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileInfo.isExecutable($0) }
    }

    /// aplay's arguments: raw 16-bit stereo at 48 kHz from standard input, 20 ms periods.
    var arguments: [String] {
        [aplay, "-q", "-D", Self.device, "-t", "raw", "-f", "S16_LE", "-c", "2", "-r", "48000",
         "--period-size=\(DemoAplay.periodFrames)", "--buffer-size=\(4 * DemoAplay.periodFrames)", "-"]
    }
}

/// A running `aplay -D audioroute:…`, a child process reading numbered frames from a pipe that a
/// thread of the demo keeps full until `stop()`. Frame i carries i: the left sample is its low
/// 16 bits, the right one `0x5A00` plus its high bits (never silence, never a tone's equal
/// channels), so each device file tells which frames it got.
final class DemoAplay: Sendable {
    static let periodFrames = 960
    static let marker: UInt16 = 0x5A00
    let process: SpawnedProcess
    private let feeder: Feeder

    private final class Feeder: Sendable {
        let stopping = Atomic<Bool>(false)
        let written = Atomic<Int>(0)

        /// Writes numbered frames, a period at a time, until `stopping`; then closes the pipe
        /// (aplay's end of input). A write error (aplay gone) ends it too.
        func feed(_ output: consuming FileDescriptor) {
            var next = 0
            while !stopping.load(ordering: .acquiring) {
                guard (try? output.writeAll(DemoAplay.frames(from: next, count: DemoAplay.periodFrames))) != nil else { return }
                next += DemoAplay.periodFrames
                written.store(next, ordering: .releasing)
            }
        }
    }

    init(_ setup: AplaySetup) throws {
        let input = try DemoChild.pipe("aplay")
        // One page: aplay's input holds about 5 ms, so it ends soon after `stop`.
        _ = input.writeEnd.setPipeCapacity(4096)
        var options = DemoChild.options(setup.environment)
        options.standardInput = .duplicate(input.readEnd.rawValue)
        options.standardOutput = .open("/dev/null", .writeOnly)
        options.standardError = .open(setup.log, [.writeOnly, .create, .append])
        process = try DemoChild.spawn(setup.arguments, options)
        demoRegistry.add(process)
        let feeder = Feeder()
        self.feeder = feeder
        let output = input.keepingWriteEnd().release()
        do throws(Errno) {
            try startThread(name: "demo-aplay-feed") { feeder.feed(FileDescriptor(adopting: output)) }
        } catch {
            _ = FileDescriptor(adopting: output)
            throw DemoError("aplay's feeder thread: \(error.code)")
        }
    }

    /// Frames written to aplay so far.
    var written: Int { feeder.written.load(ordering: .acquiring) }

    /// Ends aplay's input; it plays what it has and exits.
    func stop() { feeder.stopping.store(true, ordering: .releasing) }

    /// aplay's exit status (as a shell gives it) once it has ended, waiting up to `seconds`;
    /// nil if it still runs.
    func exitStatus(seconds: Double) async throws -> Int32? {
        let deadline = MonotonicClock.milliseconds() + Int64(seconds * 1000)
        while MonotonicClock.milliseconds() < deadline {
            if let ended = try? process.tryWait() {
                demoRegistry.forget(process)
                return ended.shellStatus
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }

    /// `count` numbered frames from frame `first`, as raw S16_LE stereo.
    static func frames(from first: Int, count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count * 4)
        for index in first..<(first + count) {
            let left = UInt16(truncatingIfNeeded: index)
            let right = marker | UInt16(truncatingIfNeeded: index >> 16) & 0xff
            bytes += [UInt8(left & 0xff), UInt8(left >> 8), UInt8(right & 0xff), UInt8(right >> 8)]
        }
        return bytes
    }

    /// What one device file holds: numbered frames `first..<first+count` in order, then
    /// `silence` frames of zeros (aplay pads its last period); `ordered` false if anything
    /// else is in it.
    struct Span: Equatable {
        var file: String
        var device: String
        var first: Int
        var count: Int
        var silence: Int
        var ordered: Bool
    }

    /// The file's span, or nil if it is empty or unreadable.
    static func span(_ bytes: [UInt8], file: String, device: String) -> Span? {
        let frames = bytes.count / 4
        guard frames > 0 else { return nil }
        func number(_ frame: Int) -> Int? {
            let left = Int(bytes[frame * 4]) | Int(bytes[frame * 4 + 1]) << 8
            let right = UInt16(bytes[frame * 4 + 2]) | UInt16(bytes[frame * 4 + 3]) << 8
            guard right & 0xff00 == marker else { return nil }
            return Int(right & 0xff) << 16 | left
        }
        func silent(_ frame: Int) -> Bool { bytes[(frame * 4)..<(frame * 4 + 4)].allSatisfy { $0 == 0 } }
        let first = number(0) ?? -1
        var count = 0
        while count < frames, let value = number(count), value == first + count { count += 1 }
        var silence = 0
        while count + silence < frames, silent(count + silence) { silence += 1 }
        return Span(file: file, device: device, first: first, count: count, silence: silence,
                    ordered: first >= 0 && count + silence == frames && bytes.count % 4 == 0)
    }
}

/// aplay's part of the story, checked at the end: one process, its frames first in the old
/// port's file, then, from the next frame on, in the new port's, none lost or repeated.
struct AplayResult {
    var pid: Int32
    var exitStatus: Int32?
    var written: Int
    /// The devices aplay's frames had to reach, in order (the speaker, then the wired headset).
    var expected: [String]
    var spans: [DemoAplay.Span]

    var ok: Bool {
        guard exitStatus == 0, spans.map(\.device) == expected, spans.allSatisfy(\.ordered) else { return false }
        var next = 0
        for (index, span) in spans.enumerated() {
            guard span.first == next, span.silence == 0 || index == spans.count - 1 else { return false }
            next += span.count
        }
        return next == written
    }

    /// Every device file aplay wrote, in the order of its frames.
    static func spans(in devices: DemoDevices) -> [DemoAplay.Span] {
        devices.files().keys.compactMap { file -> DemoAplay.Span? in
            guard let device = devices.device(of: file), let bytes = try? AtomicFile.read(devices.dir + "/" + file) else { return nil }
            return DemoAplay.span(bytes, file: file, device: device)
        }.sorted { ($0.first, $0.file) < ($1.first, $1.file) }
    }

    func verify(_ timeline: DemoTimeline) -> Bool {
        let landed = spans.map { span in
            "frames \(span.first)..<\(span.first + span.count) in \(span.file)" + (span.ordered ? "" : " (and other data)")
                + (span.silence > 0 ? " then \(span.silence) frames of aplay's closing silence" : "")
        }.joined(separator: ", ")
        let status = exitStatus.map { "exit \($0)" } ?? "still running"
        let files: [JSON] = spans.map { span in
            .object([
                .init("file", .string(span.file)), .init("device", .string(span.device)), .init("first", .integer(Int64(span.first))),
                .init("frames", .integer(Int64(span.count))), .init("silence", .integer(Int64(span.silence))), .init("ordered", .bool(span.ordered)),
            ])
        }
        timeline.event(
            "verify",
            ["phase": .string("aplay"), "ok": .bool(ok), "pid": .integer(Int64(pid)), "exit": exitStatus.map { .integer(Int64($0)) } ?? .null,
             "written": .integer(Int64(written)), "expected": .array(expected.map { .string($0) }), "files": .array(files)],
            "\(ok ? "OK  " : "FAIL") aplay: one process (pid \(pid), \(status)), \(written) frames written to it: \(landed)"
                + " (expected \(expected.joined(separator: " then ")), in order, none lost or repeated)")
        return ok
    }
}

extension StoryRun {
    /// 1b. A plain `aplay -D audioroute:…` (not our player: a child process, the ALSA plugin in
    /// it) starts beside the music, on the speaker.
    func aplayStartsBesideTheMusic() async throws -> DemoAplay? {
        guard let setup = story.aplay else { return nil }
        let aplay = try DemoAplay(setup)
        timeline.event(
            "aplay", ["pid": .integer(Int64(aplay.process.pid)), "device": .string(AplaySetup.device)],
            "a plain aplay -D \(AplaySetup.device) (pid \(aplay.process.pid)) plays numbered frames beside the music")
        _ = try await setup.devices.waitForFrames(on: "demo_builtin", atLeast: 4_800, since: [:], what: "aplay's frames on the speaker (see logs/aplay.log)")
        timeline.event("aplay", ["device": .string("demo_builtin")], "aplay's frames reach the speaker (demo_builtin)")
        return aplay
    }

    /// 2b. After the plug, aplay's frames reach the wired headset: the plugin moved its open
    /// stream. aplay's input then ends; it exits by itself.
    func aplayFollowedTheHeadset(_ aplay: DemoAplay?) async throws -> AplayResult? {
        guard let aplay, let setup = story.aplay else { return nil }
        _ = try await setup.devices.waitForFrames(on: "demo_headphones", atLeast: 4_800, since: [:], what: "aplay's frames on the wired headset")
        timeline.event(
            "aplay follows", ["device": .string("demo_headphones"), "pid": .integer(Int64(aplay.process.pid))],
            "aplay's frames now reach the wired headset (demo_headphones): the same aplay (pid \(aplay.process.pid)), not restarted")
        aplay.stop()
        let status = try await aplay.exitStatus(seconds: 10)
        return AplayResult(
            pid: aplay.process.pid, exitStatus: status, written: aplay.written, expected: ["demo_builtin", "demo_headphones"],
            spans: AplayResult.spans(in: setup.devices))
    }
}
