// audiorouted: parses options, builds the watcher list, runs the services on one
// thread (SingleThreadExecutor: no idle wake-ups, docs/daemon.md).
import AudioRouteCore
import AudioRouteDaemon
import AudioRouteSystem
import AudioRouteVersion
import AudioRouteDBus
import AudioRouteWatchers
import Logging
import AudioRouteUCMHelper

/// Exits with `status` (ExitStatus: sysexits, docs/client.md "Exit statuses") after the message;
/// a usage error's message is followed by the usage.
private func fail(_ message: String, status: Int32) -> Never {
    StandardStream.error.write("audiorouted: \(message)\n" + (status == ExitStatus.usage ? DaemonOptions.usage + "\n" : ""))
    CurrentProcess.exit(status)
}

// A write to a peer that went away (standard error a pipe whose reader exited, as under
// D-Bus activation's Exec=; a socket) must fail with EPIPE, not kill the daemon: systemd
// sets SIGPIPE ignored for its services, nothing else does. First, before anything writes.
// Inherited across exec, but the daemon starts no process.
ProcessSignal.pipe.ignore()

let environment = Environment.variables
let options: DaemonOptions
let paths: DaemonPaths
do throws(UsageError) {
    options = try DaemonOptions.parse(Array(CommandLine.arguments.dropFirst()))
    if options.help {
        print(DaemonOptions.usage)
        CurrentProcess.exit(0)
    }
    if options.version {
        print("audiorouted " + AudioRouteVersion.text)
        CurrentProcess.exit(0)
    }
} catch {
    fail(error.description, status: ExitStatus.usage)
}
do throws(UsageError) {
    // Where the files go is configuration (the environment), not the command line.
    paths = try options.paths(environment: environment)
} catch {
    fail(error.description, status: ExitStatus.config)
}

// What one large message took (sd-bus reads a whole message) goes back when it is freed.
MemoryTuning.returnLargeBlocks()

let executor = SingleThreadExecutor.shared
guard executor.install() else { fail("another executor is installed", status: ExitStatus.software) }
// Before any thread exists, so that every thread leaves SIGTERM/SIGINT to the loop's signalfd.
let signals: AsyncStream<Int32>
do throws(Errno) {
    signals = try SignalStream.make([ProcessSignal.terminate.rawValue, ProcessSignal.interrupt.rawValue], loop: executor)
} catch {
    fail("cannot take SIGTERM and SIGINT: \(error)", status: ExitStatus.osError)
}

let level = options.logLevel
// Under systemd, standard error is the journal: priorities as `<N>` prefixes, no time stamps.
let journal = JournalLogHandler.isJournalStream(environment: environment)
LoggingSystem.bootstrap { label in daemonLogHandler(label: label, level: level, journal: journal) }
let logger = Logger(label: "audiorouted")

// The hardware watchers: sound cards and jacks (udev, evdev), Bluetooth (BlueZ on
// the system bus). One that cannot start (no system bus) is logged; the others go on.
// A card with a UCM profile gets its ports and devices from the helper process (docs/ucm.md).
// (No closure here: top-level code's closures are main-actor isolated, and this thread is
// the executor's, which the runtime's isolation check does not take for the main actor.)
let ucm: UCMHelpers?
if let helper = options.ucmHelperPath(besideDaemon: CurrentProcess.executableDirectory()) {
    ucm = UCMHelpers(executable: helper, ucmRoot: options.ucmRoot, logger: Logger(label: "audiorouted.ucm"))
} else {
    ucm = nil
}
let watchers: [any PortWatcher] = [
    // Read on the executor's loop: a uevent reaches the route service without a thread hand-over.
    UdevWatcher(
        logger: Logger(label: "audiorouted.udev"), loop: executor, ucmHelpers: ucm),
    BluezWatcher(logger: Logger(label: "audiorouted.bluez")),
]

// Sleep, wake and the screen lock from logind, read on the executor's loop. The system
// instance follows no session's lock (docs/decisions.md).
let logind = LogindWatcher(
    session: LogindSessionChoice.forDaemon(
        system: options.system, environment: environment, pid: CurrentProcess.processID, uid: CurrentProcess.userID),
    loop: executor, logger: Logger(label: "audiorouted.logind"))

// The user's sound server (PipeWire, PulseAudio), found by its sockets and followed on the
// session bus. The system instance serves no one user: it does not look.
let userRuntime = environment["XDG_RUNTIME_DIR"] ?? "/run/user/\(CurrentProcess.userID)"
let soundServers: SoundServerWatcher? =
    options.system
    ? nil
    : SoundServerWatcher(
        runtimeDirectory: userRuntime, sessionBus: environment["DBUS_SESSION_BUS_ADDRESS"] ?? "unix:path=\(userRuntime)/bus", loop: executor,
        logger: Logger(label: "audiorouted.soundserver"))

// The PipeWire helper: while the user's server is PipeWire, its default sink and source
// follow the route (docs/daemon.md, "The PipeWire helper"); the PulseAudio helper does the same
// while it is PulseAudio ("The PulseAudio helper").
let pipewire: PipeWireHelper?
let pipewireHelper = options.pipewireHelperPath(besideDaemon: CurrentProcess.executableDirectory())
let pulseHelper = options.pulseHelperPath(besideDaemon: CurrentProcess.executableDirectory())
if soundServers != nil, pipewireHelper != nil || pulseHelper != nil {
    pipewire = PipeWireHelper(
        executable: pipewireHelper, pulseExecutable: pulseHelper, runtimeDirectory: userRuntime, loop: executor, logger: Logger(label: "audiorouted.pipewire"))
} else {
    pipewire = nil
}

// The server's streams become sessions, their category from their media.role (docs/roles-file.md).
let roles = pipewire == nil ? StreamRoleTable.builtIn : StreamRoleTable.load(path: options.roles, logger: logger)

// The API on the session bus (one daemon per user), or the system bus with --system.
let bus: ServerBus = options.system ? .system : .session
Task {
    do {
        try await Daemon.run(
            paths: paths, watchers: watchers, system: logind, ucm: ucm, bus: bus, soundServers: soundServers, pipewire: pipewire, roles: roles, logger: logger,
            signals: signals, sleep: { try await executor.sleep(for: $0) }, executor: executor)
        CurrentProcess.exit(0)
    } catch let error as StartupError {
        // The bus is missing or the name taken.
        fail(error.description, status: ExitStatus.unavailable)
    } catch {
        logger.critical("stopped on error", metadata: ["error": "\(error)"])
        // Non-zero either way, so that a service manager restarts it: the bus lost is the bus
        // unavailable, anything else a fault of the daemon.
        CurrentProcess.exit(error is BusError ? ExitStatus.unavailable : ExitStatus.software)
    }
}
executor.run()
