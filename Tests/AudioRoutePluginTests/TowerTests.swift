// A plain aplay through the plugin is a session in the real audiorouted's tower (a private bus,
// no hardware): the frames still go to the test's route file (a file PCM), and what the tower
// decides of the session shows in them. The other sessions are a test client (APIClient).
import AudioRouteCore
import AudioRouteIPC
import AudioRouteSystem
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `count` frames of S16_LE stereo, every sample `value`.
private func frames(_ count: Int, _ value: Int16) -> [UInt8] {
    let sample = [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
    return Array((0..<count * 2).map { _ in sample }.joined())
}

/// The file's left channel as runs of one value: (value, frames).
private func runs(_ bytes: [UInt8]) -> [(Int16, Int)] {
    var result: [(Int16, Int)] = []
    var index = 0
    while index + 3 < bytes.count {
        let value = Int16(bitPattern: UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8)
        if let last = result.last, last.0 == value { result[result.count - 1].1 += 1 } else { result.append((value, 1)) }
        index += 4
    }
    return result
}

/// The process's user and system time so far, in clock ticks (/proc/PID/stat fields 14 and 15).
private func cpuTicks(_ pid: pid_t) -> Int {
    guard let stat = try? readText("/proc/\(pid)/stat"), let end = stat.lastIndex(of: ")") else { return 0 }
    let fields = stat[stat.index(after: end)...].split(separator: " ")
    return fields.count > 12 ? (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0) : 0
}

/// What a D-Bus signal needs to cross the private bus and be seen at aplay's next period (the
/// plugin reads the bus at each): far more than it takes, so the phases never overlap.
private func letTheSignalArrive() { MonotonicClock.sleep(nanoseconds: 300_000_000) }

/// A daemon on a private bus, the plugin bench beside it, and aplay on the bus.
private final class Tower {
    let bus: PrivateBus
    var daemon: RealDaemon
    let bench: Bench
    let client: APIClient
    private let dir: String
    private var daemons = 0

    init(_ dir: String) throws {
        self.dir = dir
        bus = try PrivateBus()
        daemon = try Self.startDaemon(bus, dir + "/daemon-0")
        bench = try Bench(dir)
        try bench.route(to: "plugtest_a")
        client = try APIClient(address: bus.address)
    }

    deinit {
        daemon.kill()
        bus.close()
    }

    private static func startDaemon(_ bus: PrivateBus, _ directory: String) throws -> RealDaemon {
        mkdir(directory, 0o700)
        return try RealDaemon(address: bus.address, directory: directory)
    }

    /// Kills the daemon and starts another on the same bus (a crash and systemd's restart).
    func restartDaemon() throws {
        daemon.kill()
        daemons += 1
        daemon = try Self.startDaemon(bus, dir + "/daemon-\(daemons)")
    }

    /// The private bus is also the system bus, where BlueALSA's plugin looks for BlueALSA.
    var environment: [String: String] {
        var environment = bench.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        return environment
    }

    /// - Parameter debug: AUDIOROUTE_DEBUG=1, the plugin's trace on aplay's standard error.
    func aplay(_ device: String, flags: [String] = [], debug: Bool = false) throws -> ChildProcess {
        var environment = environment
        if debug { environment["AUDIOROUTE_DEBUG"] = "1" }
        return try ChildProcess("/usr/bin/aplay", flags + AudioRoutePluginTests.aplay(device, "-"), environment: environment, input: .pipe)
    }

    /// Sends `count` frames of `value` and waits until aplay has handed them all to the plugin.
    func play(_ player: ChildProcess, _ count: Int, _ value: Int16) throws {
        player.send(frames(count, value))
        try #require(waitUntilReadingInput(player), "stderr: \(player.availableStderr())")
    }

    var sessions: String { client.property(DBusAPI.managerPath, DBusAPI.managerInterface, "Sessions") }

    /// `Sessions` once `accept` takes it, or as it is after `seconds`: the plugin's activation is
    /// a call of its own, which may still be on its way when the frames have been written.
    func sessions(within seconds: Double = 5, until accept: (String) -> Bool) -> String {
        let deadline = MonotonicClock.milliseconds() + Int64(seconds * 1000)
        var listed = sessions
        while !accept(listed) && MonotonicClock.milliseconds() < deadline {
            usleep(20_000)
            listed = sessions
        }
        return listed
    }

    /// A call (a playAndRecord session of the test client) interrupts `player`, which then gets
    /// 5000 frames of 2000 and is held, blocked in poll in the plugin. Returns the call's path.
    @discardableResult
    func holdByACall(_ player: ChildProcess, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let call = try client.openSession("call", category: "playAndRecord")
        #expect(client.session(call, "SetActive", "bb", "[true, false]") == "{\"reply\": null}", sourceLocation: sourceLocation)
        letTheSignalArrive()
        player.send(frames(5000, 2000))
        try #require(waitUntilBlocked(player, inCall: "7 "), "not held in poll; stderr: \(player.availableStderr())", sourceLocation: sourceLocation)
        return call
    }
}

/// BlueALSA on the private bus, as much of it as BlueALSA's ALSA plugin (the real
/// libasound_module_pcm_bluealsa.so, 4.0.0) reads: one A2DP PCM, whose Open fails as when
/// another stream holds it. That plugin gives EBUSY at hw_params for any failed Open
/// (bluealsa-pcm.c, bluealsa_hw_params), as on the real-kernel bench with music playing.
private final class BusyBlueALSA {
    static let script = #"""
        import sys
        import dbus, dbus.service
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib
        DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        name = dbus.service.BusName("org.bluealsa", bus)
        PCM = "/org/bluealsa/hci0/dev_00_11_22_33_44_55/a2dpsrc/sink"
        PROPERTIES = {"Device": dbus.ObjectPath("/org/bluez/hci0/dev_00_11_22_33_44_55"), "Sequence": dbus.UInt32(1),
                      "Transport": "A2DP-source", "Mode": "sink", "Format": dbus.UInt16(0x8210), "Channels": dbus.Byte(2),
                      "Sampling": dbus.UInt32(48000), "Codec": "SBC", "Delay": dbus.UInt16(0), "SoftVolume": True,
                      "Volume": dbus.UInt16(0x7f7f)}
        class Manager(dbus.service.Object):
            @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
            def GetManagedObjects(self):
                return {PCM: {"org.bluealsa.PCM1": PROPERTIES}}
        class Pcm(dbus.service.Object):
            @dbus.service.method("org.bluealsa.PCM1", out_signature="hh")
            def Open(self):
                print("open", flush=True)
                raise dbus.exceptions.DBusException("Device or resource busy", name="org.freedesktop.DBus.Error.Failed")
        Manager(bus, "/org/bluealsa")
        Pcm(bus, PCM)
        print("ready", flush=True)
        GLib.MainLoop().run()
        """#
    let process: ScriptedProcess

    init(address: String) throws {
        process = try ScriptedProcess("/usr/bin/python3", ["-c", Self.script, address])
        guard process.take(seconds: 20, { $0 == "ready" }) != nil else { throw TestFailure("the BlueALSA mock did not start") }
    }

    /// How many times a client tried to open the PCM, within `seconds`.
    func opens(seconds: Double) -> Int { process.collect(seconds: seconds) { $0 == "open" }.count }

    deinit { process.kill() }
}

/// The first line `process` writes on its standard output within `seconds`, nil if none.
private func firstLine(of process: ChildProcess, seconds: Int32) -> String? {
    var line: [UInt8] = []
    let deadline = MonotonicClock.milliseconds() + Int64(seconds) * 1000
    while MonotonicClock.milliseconds() < deadline {
        var poller = pollfd(fd: process.stdout, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 100) == 1 else { continue }
        var byte: UInt8 = 0
        guard read(process.stdout, &byte, 1) == 1 else { return nil }
        if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
        line.append(byte)
    }
    return nil
}

/// The lines of the plugin's trace (AUDIOROUTE_DEBUG) in `stderr` that contain `text`.
private func traced(_ stderr: String, _ text: String) -> Int {
    stderr.split(separator: "\n").filter { $0.hasPrefix("audioroute ") && $0.contains(text) }.count
}

@Suite(.serialized) struct PluginTowerTests {
    /// A tower routed to BlueALSA's stand-in whose PCM is busy, and music's session active on it.
    fileprivate static func musicOnABusyDevice(_ dir: String) throws -> (tower: Tower, blueALSA: BusyBlueALSA, music: String) {
        let tower = try Tower(dir)
        let blueALSA = try BusyBlueALSA(address: tower.bus.address)
        try tower.bench.route(to: "plugtest_busy")
        let music = try tower.client.openSession("music", category: "playback")
        #expect(tower.client.session(music, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
        return (tower, blueALSA, music)
    }

    /// A call while music holds the route's exclusive device (BlueALSA's A2DP PCM: EBUSY at
    /// hw_params): the plugin activates the call's session at once, before its first frames, so
    /// the tower interrupts the music; the route moves (here the test moves it, on the music's
    /// interruption, as the daemon moves a voiceChat route from A2DP to HFP), and the open,
    /// tried again on the route as it now stands, succeeds: the call plays, its session activated
    /// once. Before, aplay failed with "Device or resource busy".
    @Test func aBusyDeviceActivatesTheSessionAndTheOpenFollowsTheRoute() throws {
        try withSyncTemporaryDirectory { dir in
            let (tower, blueALSA, music) = try Self.musicOnABusyDevice(dir)
            let call = try tower.aplay("audioroute:CATEGORY=playAndRecord,MODE=voiceChat", debug: true)
            let interrupted = tower.client.signal("Interruption", path: music, args: "[\"began\", \"default\", false]")
            try #require(interrupted != nil, "the call did not interrupt the music: \(call.availableStderr())")
            try tower.bench.route(to: "plugtest_b")
            try tower.play(call, 4000, 500)
            #expect(tower.sessions.contains("\"aplay\", \"playAndRecord\", \"voiceChat\", [], true"), "\(tower.sessions)")
            call.closeInput()
            #expect(call.wait(seconds: 10) == 0)
            let stderr = call.availableStderr()
            #expect(blueALSA.opens(seconds: 0.1) >= 1, "BlueALSA's PCM was never opened: \(stderr)")
            #expect(traced(stderr, "session activated") == 1, "\(stderr)")
            #expect(runs(tower.bench.bytes("b.raw")).first.map { "\($0.0)x\($0.1)" } == "500x4000")
            #expect(tower.client.signal("Interruption", path: music, args: "[\"ended\", \"\", true]") != nil)
        }
    }

    /// The same call from the client library's player (`audioroute play`, an `AudioPlayer`
    /// following its session, which moves with the plugin's mover but has no session of its own
    /// there): its first open finds the music's device busy; it is tried again every 25 ms for up
    /// to a second, after the activation that interrupts the music, on the route as it then
    /// stands. Before, `audioroute play` failed at once with "Device or resource busy" (on the
    /// real-kernel Bluetooth bench, every call while music held the A2DP PCM).
    @Test func thePlayersCallOnABusyDeviceOpensOnceTheTowerHasMovedTheRoute() throws {
        try withSyncTemporaryDirectory { dir in
            let (tower, blueALSA, music) = try Self.musicOnABusyDevice(dir)
            let samples = [Double](repeating: 500.0 / 32768, count: 24_000 * 2)
            try AtomicFile.write(WAVFile.encode(samples, format: WAVFormat(encoding: .signed16, channels: 2, sampleRate: 48_000)), to: dir + "/call.wav")
            let call = try ChildProcess(
                CLI.audioroute, ["play", "--category", "playAndRecord", "--mode", "voiceChat", dir + "/call.wav"],
                environment: tower.environment)
            let interrupted = tower.client.signal("Interruption", path: music, args: "[\"began\", \"default\", false]")
            try #require(interrupted != nil, "the call did not interrupt the music: \(call.availableStderr())")
            // The route moves (as the daemon moves a call to HFP) once the player has found the
            // music's device busy.
            try #require(blueALSA.process.take(seconds: 5, { $0 == "open" }) != nil, "BlueALSA's PCM was never tried: \(call.availableStderr())")
            try tower.bench.route(to: "plugtest_b")
            let status = call.wait(seconds: 20)
            #expect(status == 0, "stderr: \(call.availableStderr())")
            #expect(runs(tower.bench.bytes("b.raw")).map { "\($0.0)x\($0.1)" } == ["500x24000"])
        }
    }

    /// The device stays busy (the route does not move): the open is tried again for about a
    /// second, then fails with EBUSY as before, and the session is deactivated with notifyOthers,
    /// so the music it interrupted is told to resume.
    @Test func aDeviceThatStaysBusyFailsAndLetsTheInterruptedResume() throws {
        try withSyncTemporaryDirectory { dir in
            let (tower, blueALSA, music) = try Self.musicOnABusyDevice(dir)
            let started = MonotonicClock.milliseconds()
            let call = try tower.aplay("audioroute:CATEGORY=playAndRecord,MODE=voiceChat", debug: true)
            #expect(call.wait(seconds: 10) == 1)
            let elapsed = MonotonicClock.milliseconds() - started
            let stderr = call.availableStderr()
            #expect(stderr.contains("Device or resource busy"), "\(stderr)")
            #expect(elapsed >= 1000, "gave up after \(elapsed) ms")
            #expect(blueALSA.opens(seconds: 0.1) >= 10, "\(stderr)")
            #expect(traced(stderr, "session deactivated") == 1, "\(stderr)")
            #expect(tower.client.signal("Interruption", path: music, args: "[\"began\", \"default\", false]") != nil)
            #expect(tower.client.signal("Interruption", path: music, args: "[\"ended\", \"\", true]") != nil)
        }
    }

    /// The PCM's session: named after the process, category and options from the device string,
    /// active once frames flow, gone when aplay closes the PCM.
    @Test func aPlainAplayIsASessionInTheTower() throws {
        try withSyncTemporaryDirectory { dir in
            let tower = try Tower(dir)
            let player = try tower.aplay("audioroute:CATEGORY=ambient,OPTIONS=duckOthers")
            try tower.play(player, 4000, 100)
            let active = "\"aplay\", \"ambient\", \"default\", [\"duckOthers\"], true"
            let sessions = tower.sessions { $0.contains(active) }
            #expect(sessions.contains(active), "\(sessions)")
            // `SessionStates`: the session's process is aplay itself (the plugin opened it there).
            let states = tower.client.call("/org/audioroute/AudioRoute1", "org.freedesktop.DBus.Properties", "Get", "ss", "[\"org.audioroute.AudioRoute1\", \"SessionStates\"]")
            #expect(states.contains(", \(player.pid), \"aplay\", \"active\", [\"controlsRoute\"]]"), "\(states)")
            player.closeInput()
            #expect(player.wait(seconds: 10) == 0, "stderr: \(player.availableStderr())")
            #expect(!tower.sessions.contains("aplay"), "\(tower.sessions)")
        }
    }

    /// Ducked by another session's duckOthers: the duck gain (0.3); silent mode silences a
    /// soloAmbient stream (zeros, the stream keeps running); each undone, full again.
    @Test func duckingAndSilentModeScaleTheFrames() throws {
        try withSyncTemporaryDirectory { dir in
            let tower = try Tower(dir)
            let player = try tower.aplay("audioroute:CATEGORY=soloAmbient")
            try tower.play(player, 5000, 1000)
            let prompt = try tower.client.openSession("prompt", category: "playback", options: ["mixWithOthers", "duckOthers"])
            #expect(tower.client.session(prompt, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
            letTheSignalArrive()
            try tower.play(player, 5000, 1000)
            #expect(tower.client.session(prompt, "SetActive", "bb", "[false, true]") == "{\"reply\": null}")
            letTheSignalArrive()
            try tower.play(player, 5000, 1000)
            #expect(tower.client.manager("SetSilentMode", "b", "[true]") == "{\"reply\": null}")
            letTheSignalArrive()
            try tower.play(player, 5000, 1000)
            #expect(tower.client.manager("SetSilentMode", "b", "[false]") == "{\"reply\": null}")
            letTheSignalArrive()
            try tower.play(player, 5000, 1000)
            player.closeInput()
            #expect(player.wait(seconds: 10) == 0, "stderr: \(player.availableStderr())")
            let found = runs(tower.bench.bytes("a.raw")).prefix(5).map { "\($0.0)x\($0.1)" }
            #expect(found == ["1000x5000", "300x5000", "1000x5000", "0x5000", "1000x5000"])
        }
    }

    /// A call interrupts the music: aplay is held (blocked in the plugin, its frames kept), and
    /// goes on where it stopped when the call ends with notifyOthers; nothing lost, nothing twice.
    /// Non-blocking (`aplay -N`: EAGAIN, then it waits in poll on the PCM's descriptor), the
    /// descriptor is not ready while held, so the app sleeps rather than spins.
    @Test(arguments: [[], ["-N"]]) func anInterruptionHoldsTheWriterUntilItEndsWithResume(flags: [String]) throws {
        try withSyncTemporaryDirectory { dir in
            let tower = try Tower(dir)
            let player = try tower.aplay("audioroute", flags: flags)
            try tower.play(player, 5000, 1000)
            let call = try tower.holdByACall(player)
            let before = cpuTicks(player.pid)
            MonotonicClock.sleep(nanoseconds: 500_000_000)
            #expect(cpuTicks(player.pid) - before < 10, "aplay \(flags) spins while held")
            #expect(tower.sessions.contains("\"aplay\", \"playback\", \"default\", [], false"), "\(tower.sessions)")
            #expect(tower.client.session(call, "SetActive", "bb", "[false, true]") == "{\"reply\": null}")
            try #require(waitUntilReadingInput(player), "not resumed; stderr: \(player.availableStderr())")
            #expect(tower.sessions.contains("\"aplay\", \"playback\", \"default\", [], true"), "\(tower.sessions)")
            player.closeInput()
            #expect(player.wait(seconds: 10) == 0, "stderr: \(player.availableStderr())")
            let found = runs(tower.bench.bytes("a.raw")).prefix(2).map { "\($0.0)x\($0.1)" }
            #expect(found == ["1000x5000", "2000x5000"])
        }
    }

    /// A held aplay ends on SIGTERM as an unheld one does (its handler aborts the PCM): the
    /// plugin's hold never keeps an app from being stopped, blocking or not, its stash full.
    /// The route file rewritten meanwhile (as an unplug does) must not wake it for nothing: on
    /// the real kernel, the unread change kept the PCM's descriptor ready and aplay spun in
    /// alsa-lib's wait, deaf to its signal.
    @Test(arguments: [[], ["-N"]]) func aHeldAplayEndsOnSIGTERM(flags: [String]) throws {
        try withSyncTemporaryDirectory { dir in
            let tower = try Tower(dir)
            let player = try tower.aplay("audioroute", flags: flags)
            defer { player.signal(SIGKILL) }
            try tower.play(player, 5000, 1000)
            try tower.holdByACall(player)
            player.send(frames(8000, 3000))  // more than the stash takes (within the pipe's 64 KiB)
            MonotonicClock.sleep(nanoseconds: 300_000_000)
            try tower.bench.route(to: "plugtest_b")
            MonotonicClock.sleep(nanoseconds: 100_000_000)
            let before = cpuTicks(player.pid)
            MonotonicClock.sleep(nanoseconds: 500_000_000)
            #expect(cpuTicks(player.pid) - before < 10, "aplay \(flags) spins while held")
            player.signal(SIGTERM)
            #expect(player.wait(seconds: 5) != nil, "aplay \(flags) outlived SIGTERM while held; stderr: \(player.availableStderr())")
            #expect(!runs(tower.bench.bytes("a.raw")).contains { $0.0 == 3000 }, "played while held")
        }
    }

    /// The tower goes away while it holds aplay (a call interrupted it): the daemon killed, with
    /// or without a new one on the bus, or the bus itself killed. The writer is released and
    /// plays on outside the tower, nothing lost, and says so once. Before, aplay stayed held for
    /// ever, and at the end of its input sat in poll.
    @Test(arguments: ["daemon", "daemon restarted", "bus"]) func aLostTowerReleasesAHeldWriter(_ lost: String) throws {
        try withSyncTemporaryDirectory { dir in
            let tower = try Tower(dir)
            let player = try tower.aplay("audioroute", debug: true)
            try tower.play(player, 5000, 1000)
            try tower.holdByACall(player)
            switch lost {
            case "daemon": tower.daemon.kill()
            case "daemon restarted": try tower.restartDaemon()
            default: tower.bus.close()
            }
            try #require(waitUntilReadingInput(player), "still held; stderr: \(player.availableStderr())")
            player.send(frames(5000, 3000))
            try #require(waitUntilReadingInput(player), "stderr: \(player.availableStderr())")
            player.closeInput()
            #expect(player.wait(seconds: 10) == 0, "stderr: \(player.availableStderr())")
            let stderr = player.availableStderr()
            let said = stderr.split(separator: "\n").filter { $0.contains("the tower (audiorouted) went away") }
            #expect(said.count == 1, "stderr: \(stderr)")
            let found = runs(tower.bench.bytes("a.raw")).prefix(3).map { "\($0.0)x\($0.1)" }
            #expect(found == ["1000x5000", "2000x5000", "3000x5000"], "stderr: \(stderr)")
        }
    }

    /// A daemon that is there but gives the stream no session (a category and options it refuses;
    /// its limits are the same path): said once on standard error with the daemon's reason, and
    /// the stream plays outside the tower. Before, only AUDIOROUTE_DEBUG's trace said so.
    @Test func aStreamTheTowerRefusesSaysSoAndPlays() throws {
        try withSyncTemporaryDirectory { dir in
            let tower = try Tower(dir)
            let player = try tower.aplay("audioroute:CATEGORY=ambient,OPTIONS=mixWithOthers")
            try tower.play(player, 3000, 500)
            player.closeInput()
            #expect(player.wait(seconds: 10) == 0, "stderr: \(player.availableStderr())")
            let stderr = player.availableStderr()
            let said = stderr.split(separator: "\n").filter { $0.contains("gave this stream no session") }
            #expect(said.count == 1, "stderr: \(stderr)")
            #expect(said.first?.contains("mixWithOthers") == true, "the daemon's reason is not in: \(stderr)")
            #expect(!tower.sessions.contains("ambient"), "\(tower.sessions)")
            #expect(runs(tower.bench.bytes("a.raw")).first.map { "\($0.0)x\($0.1)" } == "500x3000")
        }
    }

    /// A process whose name is not UTF-8 (any 15 bytes are a name) still gets a session, its
    /// name's bad bytes as '?'. Before, the session's open failed and the stream played outside
    /// the tower, silently.
    @Test func aProcessNameThatIsNotUTF8GetsASession() throws {
        try withSyncTemporaryDirectory { dir in
            let tower = try Tower(dir)
            // The kernel names a process after the file it executes: a link named with bytes
            // that are not UTF-8 (0xFF 0xFE) before "aplay" (aplay insists on its name), made and
            // run from Python, which handles bytes.
            let script = """
                import os, sys
                link = sys.argv[1].encode() + b"/\\xff\\xfeaplay"
                os.symlink("/usr/bin/aplay", link)
                os.execv(link, [link] + sys.argv[2:])
                """
            let player = try ChildProcess(
                "/usr/bin/python3", ["-c", script, dir] + AudioRoutePluginTests.aplay("audioroute:CATEGORY=ambient", "-"),
                environment: tower.environment, input: .pipe)
            try tower.play(player, 3000, 700)
            #expect(tower.sessions.contains("\"??aplay\", \"ambient\""), "\(tower.sessions)")
            player.closeInput()
            #expect(player.wait(seconds: 10) == 0, "stderr: \(player.availableStderr())")
            #expect(!player.availableStderr().contains("no session"), "stderr: \(player.availableStderr())")
        }
    }

    /// An app held by an interruption that never ends with shouldResume (here the call's session
    /// deactivates without notifyOthers) restarts its stream, as a player pauses and plays on a
    /// device that cannot pause (snd_pcm_drop, then snd_pcm_prepare; mpv's ALSA output does
    /// this): the plugin asks the tower to activate it again, and it plays. Before, such an app
    /// stayed held until it was stopped.
    @Test func anAppThatRestartsItsStreamWhileHeldPlaysAgain() throws {
        try withSyncTemporaryDirectory { dir in
            let tower = try Tower(dir)
            let client = dir + "/restart-client"
            let compiled = try Subprocess.run("/usr/bin/cc", [
                "-std=gnu11", "-Wall", "-Werror", "-o", client,
                Subprocess.packageRoot + "/Tests/Helpers/restart-client/restart-client.c", "-lasound",
            ])
            try #require(compiled.status == 0, "cc: \(compiled.stderr)")
            var environment = tower.environment
            environment["AUDIOROUTE_DEBUG"] = "1"
            let player = try ChildProcess(client, ["audioroute"], environment: environment, input: .pipe)
            try tower.play(player, 5000, 1000)
            #expect(tower.sessions.contains("\"restart-client\", \"playback\", \"default\", [], true"), "\(tower.sessions)")
            let call = try tower.client.openSession("call", category: "playAndRecord")
            #expect(tower.client.session(call, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
            letTheSignalArrive()
            // More than the plugin stashes for a held non-blocking app (its buffer, about 100 ms):
            // the client waits in poll, not in read.
            player.send(frames(12000, 2000))  // 48 KB: within the pipe's 64 KiB
            // The call ends without notifyOthers: no `ended` reaches the held stream.
            #expect(tower.client.session(call, "SetActive", "bb", "[false, false]") == "{\"reply\": null}")
            letTheSignalArrive()
            #expect(!waitUntilReadingInput(player, seconds: 1), "not held: stderr: \(player.availableStderr())")
            #expect(tower.sessions.contains("\"restart-client\", \"playback\", \"default\", [], false"), "\(tower.sessions)")
            Glibc.kill(player.pid, SIGUSR1)
            try #require(firstLine(of: player, seconds: 10) == "restarted", "stderr: \(player.availableStderr())")
            try #require(waitUntilReadingInput(player), "still held after the restart; stderr: \(player.availableStderr())")
            #expect(tower.sessions.contains("\"restart-client\", \"playback\", \"default\", [], true"), "\(tower.sessions)")
            try tower.play(player, 5000, 3000)
            player.closeInput()
            #expect(player.wait(seconds: 10) == 0, "stderr: \(player.availableStderr())")
            let found = runs(tower.bench.bytes("a.raw")).map { "\($0.0)x\($0.1)" }
            #expect(found.first == "1000x5000" && found.contains("3000x5000"), "\(found)")
        }
    }

    /// mpv, held by a call that ends without shouldResume, is paused and played again by its
    /// user: mpv's ALSA output drops the stream on pause and prepares it on play (the plugin
    /// cannot pause), which asks the tower to activate the session again, and the music goes on.
    /// mpv reads a WAV file from its standard input, so the test paces it as a device would.
    /// Before, mpv's pause never got through: its writer was held inside the plugin's transfer,
    /// with the lock its pause needs.
    @Test(.enabled(if: access("/usr/bin/mpv", X_OK) == 0, "mpv is not installed (scripts/bootstrap installs it)"),
          .timeLimit(.minutes(1)))
    func mpvHeldByACallPlaysAgainWhenItsUserPausesAndPlays() throws {
        try withSyncTemporaryDirectory { dir in
            let tower = try Tower(dir)
            let socket = dir + "/mpv.socket"
            let mpv = try ChildProcess("/usr/bin/mpv", [
                "--no-config", "--really-quiet", "--no-video", "--ao=alsa", "--audio-device=alsa/audioroute",
                "--audio-format=s16", "--audio-channels=stereo", "--cache=no", "--input-ipc-server=" + socket,
                // From a pipe, lavf would read 5 MB before it starts: the header is enough here.
                "--demuxer-lavf-probesize=32", "--demuxer-lavf-analyzeduration=0", "-",
            ], environment: tower.environment, input: .pipe)
            defer { mpv.signal(SIGKILL) }
            // A WAV header whose data runs on (mpv plays what comes), then a second of 1000s.
            var header = WAVFile.encode([], format: WAVFormat(encoding: .signed16, channels: 2, sampleRate: 48_000))
            header.replaceSubrange(4..<8, with: [0xff, 0xff, 0xff, 0x7f])
            header.replaceSubrange((header.count - 4)..<header.count, with: [0xf0, 0xff, 0xff, 0x7f])
            mpv.send(header + frames(48_000, 1000))
            func played(_ value: Int16) -> Int { runs(tower.bench.bytes("a.raw")).filter { $0.0 == value }.map(\.1).reduce(0, +) }
            func ipc(_ command: String) throws {
                // At most 5 s for mpv's answer: a pause that never gets through fails, not hangs.
                let sent = try Subprocess.run("/usr/bin/timeout", ["-s", "KILL", "5", "/usr/bin/python3", "-c", """
                    import socket, sys
                    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode() + b"\\n"); s.recv(4096)
                    """, socket, command])
                try #require(sent.status == 0, "mpv did not answer \(command) (\(sent.status)): \(sent.stderr)")
            }
            func waitFor(_ what: () -> Bool) -> Bool {
                let deadline = MonotonicClock.milliseconds() + 10_000
                while MonotonicClock.milliseconds() < deadline { if what() { return true }; MonotonicClock.sleep(nanoseconds: 20_000_000) }
                return false
            }
            try #require(waitFor { played(1000) >= 24_000 }, "mpv did not play: \(mpv.availableStderr())")
            let call = try tower.client.openSession("call", category: "playAndRecord")
            #expect(tower.client.session(call, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
            letTheSignalArrive()
            // Held: what mpv is given now does not reach the device, even once the call ends
            // without shouldResume (no `ended` for the held stream).
            mpv.send(frames(48_000, 2000))
            #expect(tower.client.session(call, "SetActive", "bb", "[false, false]") == "{\"reply\": null}")
            MonotonicClock.sleep(nanoseconds: 1_000_000_000)
            #expect(played(2000) == 0, "played while held; stderr: \(mpv.availableStderr())")
            // The user pauses and plays.
            try ipc(#"{"command": ["set_property", "pause", true]}"#)
            MonotonicClock.sleep(nanoseconds: 300_000_000)
            try ipc(#"{"command": ["set_property", "pause", false]}"#)
            mpv.send(frames(48_000, 3000))
            #expect(waitFor { played(3000) >= 24_000 }, "not playing again after pause and play; stderr: \(mpv.availableStderr())")
            #expect(tower.sessions.contains("\"playback\", \"default\", [], true"), "\(tower.sessions)")
            try ipc(#"{"command": ["quit"]}"#)
            #expect(mpv.wait(seconds: 10) != nil)
        }
    }

    /// The daemon restarts under a playing stream: the plugin opens its session in the new one
    /// (same name, category and options) and activates it again, without the app doing anything.
    @Test func aRestartedDaemonGetsTheSessionBack() throws {
        try withSyncTemporaryDirectory { dir in
            let tower = try Tower(dir)
            let player = try tower.aplay("audioroute:CATEGORY=ambient")
            try tower.play(player, 4000, 100)
            #expect(tower.sessions.contains("\"aplay\", \"ambient\", \"default\", [], true"), "\(tower.sessions)")
            try tower.restartDaemon()
            #expect(!tower.sessions.contains("aplay"), "\(tower.sessions)")
            letTheSignalArrive()
            try tower.play(player, 4000, 100)  // the plugin hears of the new daemon at its next period
            #expect(tower.sessions.contains("\"aplay\", \"ambient\", \"default\", [], true"), "\(tower.sessions)")
            player.closeInput()
            #expect(player.wait(seconds: 10) == 0, "stderr: \(player.availableStderr())")
        }
    }

    /// aplay's stream interrupts the music of another app; when aplay closes the PCM, the
    /// session is deactivated with notifyOthers, so the music is told to resume.
    @Test func closingThePCMLetsTheInterruptedResume() throws {
        try withSyncTemporaryDirectory { dir in
            let tower = try Tower(dir)
            let music = try tower.client.openSession("music", category: "playback")
            #expect(tower.client.session(music, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
            let player = try tower.aplay("audioroute")
            try tower.play(player, 4000, 100)
            #expect(tower.client.signal("Interruption", path: music, args: "[\"began\", \"default\", false]") != nil)
            player.closeInput()
            #expect(player.wait(seconds: 10) == 0, "stderr: \(player.availableStderr())")
            #expect(tower.client.signal("Interruption", path: music, args: "[\"ended\", \"\", true]") != nil)
        }
    }
}
