// sd_notify, option parsing, and the built audiorouted binary end to end.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteDaemon
import AudioRouteSystem
import AudioRouteTestbed
import AudioRouteDBus
import AudioRouteWatchers
import Logging
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// libsystemd's sd_notify reads NOTIFY_SOCKET from the environment: set for one call
/// (the suite is serialized; nothing else in the test process reads it).
private func notify(_ state: String, socket: String?) throws(Errno) -> Bool {
    if let socket { setenv("NOTIFY_SOCKET", socket, 1) } else { unsetenv("NOTIFY_SOCKET") }
    defer { unsetenv("NOTIFY_SOCKET") }
    return try SystemdNotify.notify(state)
}

@Suite(.serialized) struct SystemdNotifyTests {
    @Test func sendsToAFilesystemSocket() async throws {
        try await withTemporaryDirectory { dir in
            let socket = try NotifySocket(path: dir + "/notify")
            #expect(try notify("READY=1", socket: socket.name))
            #expect(socket.receive(seconds: 5) == "READY=1")
        }
    }

    @Test func sendsToAnAbstractSocket() throws {
        let socket = try NotifySocket(path: "@audioroute-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        #expect(try notify("STOPPING=1", socket: socket.name))
        #expect(socket.receive(seconds: 5) == "STOPPING=1")
    }

    @Test func withoutASocketThereIsNothingToTell() throws {
        #expect(try notify("READY=1", socket: nil) == false)
        #expect(try notify("READY=1", socket: "") == false)
    }

    @Test func anUnusableSocketIsAnError() async throws {
        try await withTemporaryDirectory { dir in
            #expect(throws: Errno(.noSuchFileOrDirectory, "sd_notify READY=1 to", path: dir + "/absent")) {
                try notify("READY=1", socket: dir + "/absent")
            }
            #expect(throws: Errno.self) {
                try notify("READY=1", socket: "relative")
            }
        }
    }
}

@Suite struct DaemonOptionsTests {
    @Test func parsesEveryOptionInBothSpellings() throws {
        let options = try DaemonOptions.parse(["--system", "--state-dir", "/s", "--runtime-dir=/r", "--log-level=debug"])
        #expect(options.system)
        #expect(options.stateDirectory == "/s")
        #expect(options.runtimeDirectory == "/r")
        #expect(options.logLevel == .debug)
        #expect(try DaemonOptions.parse([]) == DaemonOptions())
        // Quiet by default (docs/daemon.md): start, warnings and shutdown, not every port event.
        #expect(try DaemonOptions.parse([]).logLevel == .notice)
    }

    @Test(arguments: [
        (["--bogus"], "unknown option \"--bogus\""),
        (["--state-dir"], "--state-dir needs a value"),
        (["--state-dir", "relative"], "--state-dir needs an absolute path, not \"relative\""),
        (["--log-level", "loud"], "unknown log level \"loud\""),
        (["--system=yes"], "unknown option \"--system=yes\""),
        (["--ucm-root", "ucm2"], "--ucm-root needs an absolute path, not \"ucm2\""),
        (["--ucm-helper", ""], "--ucm-helper needs a path, or none"),
        (["--pulse-helper", ""], "--pulse-helper needs a path, or none"),
    ])
    func badCommandLinesAreNamed(_ arguments: [String], _ message: String) {
        #expect(throws: UsageError(message)) { try DaemonOptions.parse(arguments) }
    }

    /// The UCM helper: given, none, or audioroute-ucm beside the daemon, else from PATH.
    @Test func theUCMHelperIsFoundBesideTheDaemon() throws {
        let options = try DaemonOptions.parse(["--ucm-root=/u", "--ucm-helper", "/opt/h"])
        #expect(options.ucmRoot == "/u")
        #expect(options.ucmHelperPath(besideDaemon: "/usr/bin") == "/opt/h")
        #expect(try DaemonOptions.parse(["--ucm-helper", "none"]).ucmHelperPath(besideDaemon: "/usr/bin") == nil)
        let directory = try makeTemporaryDirectory()
        #expect(DaemonOptions().ucmHelperPath(besideDaemon: directory) == "audioroute-ucm")
        try writeText(directory + "/audioroute-ucm", "#!/bin/sh\n")
        #expect(DaemonOptions().ucmHelperPath(besideDaemon: directory) == "audioroute-ucm", "not executable")
        chmod(directory + "/audioroute-ucm", 0o755)
        #expect(DaemonOptions().ucmHelperPath(besideDaemon: directory) == directory + "/audioroute-ucm")
    }

    /// The PulseAudio helper: given, none, or audioroute-pulse beside the daemon, else from PATH;
    /// never for the system instance; apart from the PipeWire helper's option.
    @Test func thePulseAudioHelperIsFoundBesideTheDaemon() throws {
        #expect(try DaemonOptions.parse(["--pulse-helper", "/opt/p"]).pulseHelperPath(besideDaemon: "/usr/bin") == "/opt/p")
        let none = try DaemonOptions.parse(["--pulse-helper=none"])
        #expect(none.pulseHelperPath(besideDaemon: "/usr/bin") == nil)
        #expect(none.pipewireHelperPath(besideDaemon: "/nowhere") == "audioroute-pipewire", "the PipeWire helper is not turned off with it")
        #expect(try DaemonOptions.parse(["--system"]).pulseHelperPath(besideDaemon: "/usr/bin") == nil)
        let directory = try makeTemporaryDirectory()
        defer { removeTree(directory) }
        #expect(DaemonOptions().pulseHelperPath(besideDaemon: directory) == "audioroute-pulse")
        try writeText(directory + "/audioroute-pulse", "#!/bin/sh\n")
        chmod(directory + "/audioroute-pulse", 0o755)
        #expect(DaemonOptions().pulseHelperPath(besideDaemon: directory) == directory + "/audioroute-pulse")
    }

    @Test func pathsFollowXDGTheSystemFlagAndOverrides() throws {
        let environment = ["HOME": "/home/u", "XDG_RUNTIME_DIR": "/run/user/1000"]
        #expect(try DaemonOptions().paths(environment: environment) == DaemonPaths(stateDirectory: "/home/u/.local/state/audioroute", runtimeDirectory: "/run/user/1000"))
        var system = DaemonOptions()
        system.system = true
        #expect(try system.paths(environment: [:]) == DaemonPaths(stateDirectory: "/var/lib/audioroute", runtimeDirectory: "/run", system: true))
        var overridden = try DaemonOptions.parse(["--state-dir", "/s", "--runtime-dir", "/r"])
        #expect(try overridden.paths(environment: [:]) == DaemonPaths(stateDirectory: "/s", runtimeDirectory: "/r"))
        overridden.runtimeDirectory = nil
        #expect(throws: UsageError("XDG_RUNTIME_DIR is not set: pass --runtime-dir")) { try overridden.paths(environment: [:]) }
    }
}

/// The built binary: started with temporary directories, it writes the route
/// file for the empty route, says READY=1 on NOTIFY_SOCKET, and exits 0 on SIGTERM.
@Suite struct AudioroutedEndToEndTests {
    static let binary = productsDirectory + "/audiorouted"

    /// Starts the daemon (AudioRouteTestbed's launch) with temporary state and runtime
    /// directories under `dir`, a private session bus and a notification socket, and its real
    /// watchers kept off the machine: udev under an empty umockdev testbed in `dir` (no sound
    /// cards, whatever the machine has) and a system bus address that does not exist (no
    /// BlueZ): (socket, bus, daemon). Close the bus.
    static func startOnPrivateBus(
        _ arguments: [String] = [], in dir: String, binary: String = binary
    ) throws -> (NotifySocket, PrivateBus, ChildProcess) {
        let testbed = dir + "/testbed"
        guard mkdir(testbed, 0o700) == 0 else { throw TestFailure("mkdir \(testbed): errno \(errno)") }
        let bus = try PrivateBus()
        do {
            var launch = DaemonLaunch(binary: binary, directory: dir, sessionBus: bus.address)
            launch.wrapper = ["/usr/bin/umockdev-wrapper"]
            launch.environment = ["UMOCKDEV_DIR": testbed]
            launch.arguments = arguments
            let (child, socket) = try start(launch)
            return (socket, bus, child)
        } catch {
            bus.close()
            throw error
        }
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func startsReadyAndStopsCleanly(_ signal: Int32) async throws {
        try await withTemporaryDirectory { dir in
            let (socket, bus, child) = try Self.startOnPrivateBus(["--log-level", "debug"], in: dir)
            defer { bus.close() }
            let ready = socket.receive(seconds: 20)
            #expect(ready == "READY=1", "stderr: \(child.availableStderr())")
            guard ready == "READY=1" else { return }

            // The route file for the initial, empty route is there before READY.
            let path = dir + "/run/audioroute/asound.conf"
            #expect(try readText(path) == AlsaRouteConfig(route: .empty, ports: []).text)
            var info = stat()
            #expect(stat(dir + "/run/audioroute", &info) == 0)
            #expect(info.st_mode & 0o777 == 0o700)

            // Both real watchers run, against nothing of the machine's: BlueZ finds
            // no system bus and says so; udev (an empty testbed) has nothing to report.
            var stderr = child.availableStderr()
            var clock = ContinuousClock.now
            let deadline = clock.advanced(by: .seconds(10))
            while !stderr.contains("watcher=bluez [AudioRouteDaemon] watcher unavailable"), clock < deadline {
                usleep(5_000)
                stderr += child.availableStderr()
                clock = .now
            }
            #expect(stderr.contains("no D-Bus system bus"), "stderr: \(stderr)")
            #expect(stderr.contains("watcher=udev [AudioRouteDaemon] watcher started"), "stderr: \(stderr)")
            #expect(try readText(path) == AlsaRouteConfig(route: .empty, ports: []).text, "no port came from the machine")

            child.signal(signal)
            #expect(socket.receive(seconds: 10) == "STOPPING=1")
            let status = child.wait(seconds: 10)
            stderr += child.availableStderr()
            #expect(status == 0, "stderr: \(stderr)")
            #expect(stderr.contains("ready"))
            #expect(!stderr.contains("watcher=udev [AudioRouteDaemon] watcher unavailable"), "stderr: \(stderr)")
        }
    }

    @Test func aCorruptStateFileIsMovedAsideAndTheDaemonStillStarts() async throws {
        try await withTemporaryDirectory { dir in
            #expect(mkdir(dir + "/state", 0o700) == 0)
            try writeText(dir + "/state/state.json", "{\"version\": 1, \"seq")
            let (socket, bus, child) = try Self.startOnPrivateBus(in: dir)
            defer { bus.close() }
            #expect(socket.receive(seconds: 20) == "READY=1")
            child.signal(SIGTERM)
            #expect(child.wait(seconds: 10) == 0)
            let stderr = child.availableStderr()
            #expect(stderr.contains("state file unusable, moved aside"), "stderr: \(stderr)")
            let entries = directoryEntries(dir + "/state")
            #expect(entries.count == 1)
            #expect(entries.first?.hasPrefix("state.json.corrupt-") == true)
        }
    }

    /// Context switches (voluntary + involuntary) of each thread of `pid`, by thread id.
    static func switches(_ pid: pid_t) -> [String: Int] {
        var result: [String: Int] = [:]
        for thread in directoryEntries("/proc/\(pid)/task") {
            guard let status = try? readText("/proc/\(pid)/task/\(thread)/status") else { continue }
            var total = 0
            for line in status.split(separator: "\n") where line.contains("ctxt_switches:") {
                total += Int(line.split(separator: ":")[1].trimmingPrefix(while: { $0 == " " || $0 == "\t" })) ?? 0
            }
            result[thread] = total
        }
        return result
    }

    /// Idle means asleep: with the bus, both watchers and the state service running and
    /// nothing happening, no thread of the daemon wakes (no timer, no polling; Dispatch's
    /// 1 Hz worker-pool monitor used to, before the one-thread executor).
    @Test func anIdleDaemonNeverWakesUp() async throws {
        try await withTemporaryDirectory { dir in
            let (socket, bus, child) = try Self.startOnPrivateBus(["--log-level", "debug"], in: dir)
            defer { bus.close() }
            defer {
                child.signal(SIGTERM)
                _ = child.wait(seconds: 10)
            }
            #expect(socket.receive(seconds: 20) == "READY=1")
            // Both watchers have settled (BlueZ: no system bus here).
            var stderr = child.availableStderr()
            for _ in 0..<2000 where !stderr.contains("watcher=bluez [AudioRouteDaemon] watcher unavailable") {
                usleep(5_000)
                stderr += child.availableStderr()
            }
            usleep(300_000)
            let before = Self.switches(child.pid)
            try await Task.sleep(for: .seconds(3))
            let after = Self.switches(child.pid)
            // One thread: the executor's loop (jobs, udev, jacks, the D-Bus connection, SIGTERM and
            // SIGINT from a signalfd); the BlueZ watcher's ended (no system bus here).
            #expect(before.count == 1, "threads: \(before)")
            #expect(after == before, "threads woke while idle: before \(before), after \(after)")
        }
    }

    @Test func aBadCommandLineExitsWithUsage() throws {
        let child = try ChildProcess(Self.binary, ["--frobnicate"])
        // EX_USAGE, as every AudioRoute program's (docs/client.md, "Exit statuses").
        #expect(child.wait(seconds: 20) == 64)
        let stderr = child.availableStderr()
        #expect(stderr.hasPrefix("audiorouted: unknown option \"--frobnicate\"\nusage: audiorouted"))
    }

    @Test func withoutARuntimeDirectoryItRefusesToGuess() throws {
        let child = try ChildProcess(Self.binary, ["--state-dir", "/tmp/unused-audioroute"], removing: ["XDG_RUNTIME_DIR"])
        // EX_CONFIG, without the usage: the command line was right.
        #expect(child.wait(seconds: 20) == 78)
        let stderr = child.availableStderr()
        #expect(stderr.contains("XDG_RUNTIME_DIR is not set: pass --runtime-dir") && !stderr.contains("usage:"), "\(stderr)")
    }
}
