// Layer 2 for the sound servers: a real PipeWire (with WirePlumber and pipewire-pulse), or a real
// PulseAudio, on a private runtime directory, home and session bus, with virtual devices only
// (null sinks and a null source). Nothing of the user's is read or touched, and everything it
// started is stopped and reaped in `stop()` (also from deinit, so a failing test cleans up).
import AudioRouteCore
import AudioRouteSystem
import Glibc

extension SoundServerKind {
    /// The programs the bench starts for it, then the clients the tests use.
    public var programs: [String] {
        switch self {
        case .pipewire: ["pipewire", "wireplumber", "pipewire-pulse", "pw-cli", "pw-metadata", "pw-play", "pactl", "paplay", "parec"]
        case .pulseaudio: ["pulseaudio", "pactl", "paplay", "parec"]
        }
    }

    /// Why the bench cannot run it here (the programs missing from PATH), or nil.
    public var missing: String? {
        let absent = programs.filter { SoundServerBench.executable($0) == nil }
        return absent.isEmpty ? nil : "\(rawValue) bench: not installed: \(absent.joined(separator: ", "))"
    }
}

/// A sound server on a private runtime directory and bus, with two null sinks (`speaker`,
/// `headphones`) and a null source (`mic`).
public final class SoundServerBench: @unchecked Sendable {
    /// The virtual sinks, in the order they are made (the first is the server's default).
    public static let sinks = ["speaker", "headphones"]
    /// The virtual source.
    public static let source = "mic"

    public let kind: SoundServerKind
    /// Holds `run/` (XDG_RUNTIME_DIR), `home/`, `config/`, `state/`, the bus socket, the logs.
    public let directory: String
    /// The server's XDG_RUNTIME_DIR: `pipewire-0` and `pulse/native` are there.
    public var runtimeDirectory: String { directory + "/run" }
    /// The private session bus.
    public let bus: PrivateBus
    /// What a client needs to reach this server and bus and nothing else.
    public let environment: [String: String]
    /// What a client must not inherit from the test's environment.
    public static let removedVariables: Set<String> = ["PULSE_SERVER", "PULSE_RUNTIME_PATH", "PULSE_COOKIE", "PIPEWIRE_REMOTE", "PIPEWIRE_RUNTIME_DIR", "DISPLAY", "WAYLAND_DISPLAY"]
    private var servers: [(name: String, pid: pid_t)] = []
    private let objects: String
    private let pulseStartup: String
    private var stopped = false

    /// Starts `kind`'s server(s) and waits until `pactl` sees every virtual device (and, for
    /// PipeWire, WirePlumber has chosen the default sink). Throws, having stopped what it
    /// started, if a program is missing or the server is not ready within `seconds`.
    /// With `startingServers` false, only the directory and the bus are made: `startServers()`
    /// starts them later (a server that starts after its clients).
    /// `pipewireObjects`: PipeWire's virtual devices (`alsaShapedObjects` gives them a real ALSA
    /// node's properties); the sinks and the source keep their names. `pulseScript`: PulseAudio's
    /// start-up script (`alsaShapedPulseScript` gives its devices a real ALSA sink's properties).
    public init(
        _ kind: SoundServerKind, seconds: Double = 10, startingServers: Bool = true, pipewireObjects: String = SoundServerBench.pipewireObjects,
        pulseScript: String = SoundServerBench.pulseScript
    ) throws {
        if let missing = kind.missing { throw TestFailure(missing) }
        self.kind = kind
        self.objects = pipewireObjects
        self.pulseStartup = pulseScript
        var template = Array("/tmp/audioroute-sound-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp: errno \(errno)") }
        directory = String(cString: made)
        for sub in ["run", "home", "config", "config/pipewire", "config/pipewire/pipewire.conf.d", "state", "data"] {
            mkdir(directory + "/" + sub, 0o700)
        }
        do {
            try writeFile(directory + "/bus.conf", Self.busConfiguration)
            bus = try PrivateBus(configuration: directory + "/bus.conf")
        } catch {
            removeTree(directory)
            throw error
        }
        environment = [
            "XDG_RUNTIME_DIR": directory + "/run", "HOME": directory + "/home", "XDG_CONFIG_HOME": directory + "/config",
            "XDG_STATE_HOME": directory + "/state", "XDG_DATA_HOME": directory + "/data", "DBUS_SESSION_BUS_ADDRESS": bus.address,
            // No system bus: no BlueZ, no rtkit, no logind.
            "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(directory)/no-system-bus",
        ]
        if startingServers { try startServers(seconds: seconds) }
    }

    /// Starts the servers (see `init`); stops everything and throws if they do not get ready.
    public func startServers(seconds: Double = 10) throws {
        do {
            try start(seconds: seconds)
        } catch {
            let logs = logTail()
            stop()
            throw TestFailure("\(error)\n\(logs)")
        }
    }

    /// Stops every server, in reverse order of start, keeping the bus and the directory.
    public func stopServers() {
        for server in servers.reversed() { terminate(server.pid) }
        servers = []
    }

    /// Kills every server with SIGKILL (a crash: their sockets stay behind), and reaps them.
    public func killServers() {
        for server in servers.reversed() {
            kill(server.pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(server.pid, &status, 0) < 0 && errno == EINTR {}
        }
        servers = []
    }

    private func start(seconds: Double) throws {
        let deadline = MonotonicClock.milliseconds() + Int64(seconds * 1000)
        switch kind {
        case .pipewire:
            try writeFile(directory + "/config/pipewire/pipewire.conf.d/50-audioroute-bench.conf", objects)
            try launch("pipewire", [])
            // WirePlumber and pipewire-pulse connect to pipewire-0: wait for it to listen.
            try waitUntil(deadline, "pipewire did not answer pw-cli info 0") { self.run("pw-cli", ["info", "0"]).status == 0 }
            try launch("wireplumber", [])
            try launch("pipewire-pulse", [])
            try waitUntil(deadline, "WirePlumber did not choose a default sink") {
                self.run("pw-metadata", ["-n", "default", "0", "default.audio.sink"]).stdout.contains("speaker")
            }
        case .pulseaudio:
            try writeFile(directory + "/bench.pa", pulseStartup)
            try launch(
                "pulseaudio",
                [
                    "-n", "-F", directory + "/bench.pa", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no", "--log-target=stderr",
                    "--system=no", "--disallow-exit",
                ])
        }
        try waitUntil(deadline, "pactl did not list the virtual devices") {
            let sinks = self.run("pactl", ["list", "short", "sinks"])
            let sources = self.run("pactl", ["list", "short", "sources"])
            return sinks.status == 0 && Self.sinks.allSatisfy { sinks.names.contains($0) } && sources.names.contains(Self.source)
        }
    }

    /// Runs a client (`pactl`, `pw-cli`, …) against this server and bus, to its end.
    public func run(_ program: String, _ arguments: [String]) -> ProcessResult {
        guard let path = Self.executable(program) else { return ProcessResult(status: 127, stdout: "", stderr: "\(program): not found") }
        do {
            return try ChildProcess(path, arguments, environment: environment, removing: Self.removedVariables, input: .pipe).collect()
        } catch {
            return ProcessResult(status: 127, stdout: "", stderr: "\(error)")
        }
    }

    /// Starts a client that runs until it ends or is signalled (a player, a recorder).
    public func start(_ program: String, _ arguments: [String]) throws -> ChildProcess {
        guard let path = Self.executable(program) else { throw TestFailure("\(program): not found") }
        return try ChildProcess(path, arguments, environment: environment, removing: Self.removedVariables, input: .pipe)
    }

    /// The pids of the server processes still running (none after `stop()`).
    public var serverPIDs: [pid_t] { servers.map(\.pid) }

    /// Every process on the machine whose environment names this bench's runtime directory:
    /// after `stop()`, none (a server's child, a bus-activated service, would show here).
    public func processesLeft() -> [pid_t] {
        let marker = Array("XDG_RUNTIME_DIR=\(runtimeDirectory)".utf8)
        return directoryEntries("/proc").compactMap { pid_t($0) }.filter { pid in
            guard pid != getpid(), let environ = readProcFile("/proc/\(pid)/environ") else { return false }
            return environ.split(separator: 0).contains { $0.elementsEqual(marker) }
        }
    }

    /// Stops the servers (SIGTERM, SIGKILL after 3 s), reaps them, stops the bus and removes the
    /// directory. Idempotent.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        // The clients of pipewire first, so that none of them logs its server going.
        for server in servers.reversed() { terminate(server.pid) }
        servers = []
        bus.close()
        removeTree(directory)
    }

    deinit { stop() }

    /// Stops one server process now (a test of a server going away); false if it was not running.
    @discardableResult
    public func stopServer(_ name: String) -> Bool {
        guard let index = servers.firstIndex(where: { $0.name == name }) else { return false }
        terminate(servers.remove(at: index).pid)
        return true
    }

    /// The last lines of each server's log, for a failure's message.
    public func logTail(lines: Int = 15) -> String {
        let names: [String] = kind == .pipewire ? ["pipewire", "wireplumber", "pipewire-pulse"] : ["pulseaudio"]
        return names.map { name in
            let text = (try? readText(directory + "/\(name).log")) ?? ""
            return "--- \(name).log\n" + text.split(separator: "\n").suffix(lines).joined(separator: "\n")
        }.joined(separator: "\n")
    }

    // MARK: - processes

    private func launch(_ name: String, _ arguments: [String]) throws {
        guard let path = Self.executable(name) else { throw TestFailure("\(name): not found") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // A log file, not a pipe: nobody reads a server's chatter while it runs, and a full
        // pipe would stall it.
        let log = directory + "/\(name).log"
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        switch spawn(path, arguments, environment: environment, removing: Self.removedVariables, actions: &actions) {
        case .success(let pid): servers.append((name, pid))
        case .failure(let error): throw TestFailure("cannot start \(name): \(error)")
        }
    }

    private func terminate(_ pid: pid_t) {
        kill(pid, SIGTERM)
        let deadline = MonotonicClock.milliseconds() + 3000
        var status: Int32 = 0
        while MonotonicClock.milliseconds() < deadline {
            if waitpid(pid, &status, WNOHANG) == pid { return }
            usleep(5000)
        }
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    private func waitUntil(_ deadline: Int64, _ failure: String, _ ready: () -> Bool) throws {
        while true {
            if ready() { return }
            for server in servers {
                var status: Int32 = 0
                if waitpid(server.pid, &status, WNOHANG) == server.pid {
                    servers.removeAll { $0.pid == server.pid }
                    throw TestFailure("\(server.name) exited (status \(status)) before it was ready")
                }
            }
            guard MonotonicClock.milliseconds() < deadline else { throw TestFailure(failure) }
            usleep(20_000)
        }
    }

    /// `name`'s path on PATH (or the usual places), if it is executable.
    public static func executable(_ name: String) -> String? {
        let path = getenv("PATH").map { String(cString: $0) } ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/bin", "/usr/local/bin"]
        return directories.map { $0 + "/" + name }.first { access($0, X_OK) == 0 }
    }

    // MARK: - configuration

    /// A session bus with nothing to activate: a service it started would outlive the bench.
    public static let busConfiguration = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:tmpdir=/tmp</listen>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>

        """

    /// PipeWire's virtual devices, made by pipewire itself at start (WirePlumber then manages
    /// them as any other node).
    public static let pipewireObjects = """
        context.objects = [
          { factory = adapter args = { factory.name = support.null-audio-sink node.name = "speaker" node.description = "Speaker"
              media.class = "Audio/Sink" audio.position = [ FL FR ] priority.session = 2000 object.linger = true } }
          { factory = adapter args = { factory.name = support.null-audio-sink node.name = "headphones" node.description = "Headphones"
              media.class = "Audio/Sink" audio.position = [ FL FR ] priority.session = 1000 object.linger = true } }
          { factory = adapter args = { factory.name = support.null-audio-sink node.name = "mic" node.description = "Mic" priority.session = 2000
              media.class = "Audio/Source" audio.position = [ FL FR ] object.linger = true } }
        ]

        """

    /// `pipewireObjects` with the properties PipeWire's ALSA nodes carry (their names from a real
    /// node's: Tests/Fixtures/pipewire/README.md), as if `speaker` and `mic` were card 0's PCM 0
    /// (the umockdev laptop's `Intel` card) and `headphones` card 2's PCM 0 (the Razer headset's
    /// `Pro` card, `usb-headset-razer-blackshark-v3-pro`). The values are the cards' own, from
    /// their fixtures; the nodes are null sinks all the same.
    public static let alsaShapedObjects = """
        context.objects = [
          { factory = adapter args = { factory.name = support.null-audio-sink node.name = "speaker" node.description = "Speaker"
              media.class = "Audio/Sink" audio.position = [ FL FR ] priority.session = 2000 object.linger = true
              device.api = "alsa" alsa.card = "0" alsa.device = "0" api.alsa.path = "front:0" api.alsa.pcm.card = "0"
              api.alsa.pcm.stream = "playback" card.profile.device = "0" } }
          { factory = adapter args = { factory.name = support.null-audio-sink node.name = "headphones" node.description = "Headphones"
              media.class = "Audio/Sink" audio.position = [ FL FR ] priority.session = 1000 object.linger = true
              device.api = "alsa" alsa.card = "2" alsa.device = "0" api.alsa.path = "front:2" api.alsa.pcm.card = "2"
              api.alsa.pcm.stream = "playback" card.profile.device = "0" } }
          { factory = adapter args = { factory.name = support.null-audio-sink node.name = "mic" node.description = "Mic" priority.session = 2000
              media.class = "Audio/Source" audio.position = [ FL FR ] object.linger = true
              device.api = "alsa" alsa.card = "0" alsa.device = "0" api.alsa.path = "front:0" api.alsa.pcm.card = "0"
              api.alsa.pcm.stream = "capture" card.profile.device = "0" } }
        ]

        """

    /// PulseAudio's whole start-up script (`-n`: no default.pa): the native protocol, the
    /// virtual devices, nothing that looks for hardware or autospawns.
    public static let pulseScript = """
        load-module module-native-protocol-unix
        load-module module-null-sink sink_name=speaker sink_properties=device.description=Speaker
        load-module module-null-sink sink_name=headphones sink_properties=device.description=Headphones
        load-module module-null-source source_name=mic
        set-default-sink speaker
        set-default-source mic

        """

    /// `pulseScript` with the properties PulseAudio's ALSA sinks and sources carry (module-alsa-card
    /// sets `device.api`, `alsa.card`, `alsa.device` and `device.string`: Tests/Fixtures/pulseaudio/
    /// README.md cites the source and a real sink's list), as `alsaShapedObjects` shapes PipeWire's:
    /// `speaker` and `mic` card 0's PCM 0, `headphones` card 2's. module-null-source takes no
    /// properties, so `mic` is a remapped source over the speaker's monitor (itself no monitor).
    public static let alsaShapedPulseScript = """
        load-module module-native-protocol-unix
        load-module module-null-sink sink_name=speaker sink_properties='device.description=Speaker device.api=alsa alsa.card=0 alsa.device=0 device.string=front:0'
        load-module module-null-sink sink_name=headphones sink_properties='device.description=Headphones device.api=alsa alsa.card=2 alsa.device=0 device.string=front:2'
        load-module module-remap-source master=speaker.monitor source_name=mic source_properties='device.description=Mic device.api=alsa alsa.card=0 alsa.device=0 device.string=front:0'
        set-default-sink speaker
        set-default-source mic

        """
}

extension ProcessResult {
    /// The second column of `pactl list short …`: the names.
    public var names: [String] {
        stdoutLines.compactMap { line in
            let fields = line.split(separator: "\t")
            return fields.count > 1 ? String(fields[1]) : nil
        }
    }
}

/// A /proc file's bytes (their size is 0 to stat), nil if it cannot be read.
func readProcFile(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while bytes.count < 1 << 20 {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += chunk[0..<count]
    }
    return bytes
}
