// Command-line options, paths and the service group of `audiorouted`.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Logging
import ServiceLifecycle
import AudioRouteUCMHelper

/// A command line that cannot be used, said plainly.
public struct UsageError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// `audiorouted`'s options. Parsed by hand: four options do not justify
/// swift-argument-parser, which links FoundationEssentials (docs/daemon.md).
public struct DaemonOptions: Sendable, Hashable {
    /// A system-wide instance: /var/lib/audioroute and /run.
    public var system = false
    public var stateDirectory: String?
    public var runtimeDirectory: String?
    /// Notice by default, as PulseAudio's daemon (PipeWire and WirePlumber default to
    /// warnings): start, readiness, a missing watcher and shutdown are logged, not every
    /// port event, which `--log-level info` adds (docs/daemon.md).
    public var logLevel: Logger.Level = .notice
    /// The ALSA UCM2 tree the helper reads (its ALSA_CONFIG_UCM2) when given; else libasound's default.
    public var ucmRoot: String?
    /// The UCM helper every card is asked about (docs/ucm.md); "none" for udev's ports only;
    /// nil: `audioroute-ucm` beside the daemon's executable, else from PATH.
    public var ucmHelper: String?
    /// The PipeWire helper started while the user's server is PipeWire (docs/daemon.md, "The
    /// PipeWire helper"); "none" for no helper; nil: `audioroute-pipewire` beside the daemon's
    /// executable, else from PATH.
    public var pipewireHelper: String?
    /// The roles file (docs/roles-file.md): which session each `media.role` of the server's
    /// streams gets; nil: `StreamRoleTable.defaultPath` when it exists.
    public var roles: String?
    /// The PulseAudio helper started while the user's server is PulseAudio (docs/daemon.md, "The
    /// PulseAudio helper"); "none" for no helper; nil: `audioroute-pulse` beside the daemon's
    /// executable, else from PATH.
    public var pulseHelper: String?
    public var help = false
    /// `--version`: print the version and the git commit, and exit.
    public var version = false

    public init() {}

    public static let usage = """
        usage: audiorouted [--version] [--system] [--state-dir DIR] [--runtime-dir DIR] [--log-level LEVEL] [--ucm-root DIR] [--ucm-helper PATH]
                           [--pipewire-helper PATH] [--pulse-helper PATH] [--roles FILE]
          --version          print the version and the git commit it was built from, and exit
          --system           run as the system instance: the D-Bus API on the system bus (default: the session
                             bus), state in /var/lib/audioroute, runtime files in /run
          --state-dir DIR    where state.json lives (default $XDG_STATE_HOME/audioroute or ~/.local/state/audioroute)
          --runtime-dir DIR  where audioroute/asound.conf is written (default $XDG_RUNTIME_DIR)
          --log-level LEVEL  trace, debug, info, notice, warning, error or critical (default notice)
          --ucm-root DIR     the ALSA UCM2 configurations the helper reads (default /usr/share/alsa/ucm2)
          --ucm-helper PATH  the helper that reads every card's UCM profile and switches its devices (default:
                             audioroute-ucm beside audiorouted, else in PATH); none: every card's ports come from udev
          --pipewire-helper PATH  the helper that sets PipeWire's default sink and source to the route's (default:
                             audioroute-pipewire beside audiorouted, else in PATH); none: PipeWire's defaults are its own
          --pulse-helper PATH  the helper that sets PulseAudio's default sink and source to the route's (default:
                             audioroute-pulse beside audiorouted, else in PATH); none: PulseAudio's defaults are its own
          --roles FILE       the session each media.role of PipeWire's streams gets (default /etc/audioroute/roles.json
                             if present, else the built-in table)
        """

    /// Parses the arguments after the program name. Accepts `--opt value` and `--opt=value`.
    public static func parse(_ arguments: [String]) throws(UsageError) -> DaemonOptions {
        var options = DaemonOptions()
        var index = 0
        func value(_ name: String, inline: String?) throws(UsageError) -> String {
            if let inline { return inline }
            index += 1
            guard index < arguments.count else { throw UsageError("\(name) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            let parts = argument.split(separator: "=", maxSplits: 1)
            let name = parts.first.map(String.init) ?? argument
            let inline = parts.count == 2 ? String(parts[1]) : nil
            switch name {
            case "--system" where inline == nil: options.system = true
            case "--help", "-h": options.help = true
            case "--version": options.version = true
            case "--state-dir": options.stateDirectory = try absolute(value(name, inline: inline), name)
            case "--runtime-dir": options.runtimeDirectory = try absolute(value(name, inline: inline), name)
            case "--ucm-root": options.ucmRoot = try absolute(value(name, inline: inline), name)
            case "--ucm-helper":
                let helper = try value(name, inline: inline)
                guard !helper.isEmpty else { throw UsageError("--ucm-helper needs a path, or none") }
                options.ucmHelper = helper
            case "--pipewire-helper":
                let helper = try value(name, inline: inline)
                guard !helper.isEmpty else { throw UsageError("--pipewire-helper needs a path, or none") }
                options.pipewireHelper = helper
            case "--pulse-helper":
                let helper = try value(name, inline: inline)
                guard !helper.isEmpty else { throw UsageError("--pulse-helper needs a path, or none") }
                options.pulseHelper = helper
            case "--roles": options.roles = try absolute(value(name, inline: inline), name)
            case "--log-level":
                let level = try value(name, inline: inline)
                guard let parsed = Logger.Level(rawValue: level) else { throw UsageError("unknown log level \"\(level)\"") }
                options.logLevel = parsed
            default: throw UsageError("unknown option \"\(argument)\"")
            }
            index += 1
        }
        return options
    }

    private static func absolute(_ path: String, _ name: String) throws(UsageError) -> String {
        guard path.hasPrefix("/") else { throw UsageError("\(name) needs an absolute path, not \"\(path)\"") }
        return path
    }

    /// The UCM helper to start, or nil for none (`--ucm-helper none`).
    public func ucmHelperPath(besideDaemon directory: String?) -> String? {
        UCMHelpers.executable(option: ucmHelper, beside: directory)
    }

    /// The PipeWire helper to start, or nil for none (`--pipewire-helper none`, or the system instance).
    public func pipewireHelperPath(besideDaemon directory: String?) -> String? {
        system ? nil : PipeWireHelper.executable(option: pipewireHelper, beside: directory)
    }

    /// The PulseAudio helper to start, or nil for none (`--pulse-helper none`, or the system instance).
    public func pulseHelperPath(besideDaemon directory: String?) -> String? {
        guard !system else { return nil }
        if let pulseHelper { return pulseHelper == "none" ? nil : pulseHelper }
        if let directory, CurrentProcess.isExecutable(directory + "/audioroute-pulse") { return directory + "/audioroute-pulse" }
        return "audioroute-pulse"
    }

    /// The state and runtime directories these options choose in `environment`.
    public func paths(environment: [String: String]) throws(UsageError) -> DaemonPaths {
        guard let state = stateDirectory ?? StateStore.defaultDirectory(system: system, environment: environment) else {
            throw UsageError("neither XDG_STATE_HOME nor HOME is set: pass --state-dir")
        }
        let runtime: String
        if let runtimeDirectory {
            runtime = runtimeDirectory
        } else if system {
            runtime = RouteFileLocation.systemRuntimeDirectory
        } else if let xdg = environment["XDG_RUNTIME_DIR"], xdg.hasPrefix("/") {
            runtime = xdg
        } else {
            // No fallback to /tmp: the file decides where every ALSA client plays.
            throw UsageError("XDG_RUNTIME_DIR is not set: pass --runtime-dir")
        }
        return DaemonPaths(stateDirectory: state, runtimeDirectory: runtime, system: system)
    }
}

/// The daemon could not start; the description says why.
public struct StartupError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
}

/// Where the daemon keeps its files.
public struct DaemonPaths: Sendable, Hashable {
    public var stateDirectory: String
    public var runtimeDirectory: String
    public var system: Bool

    public init(stateDirectory: String, runtimeDirectory: String, system: Bool = false) {
        self.stateDirectory = stateDirectory
        self.runtimeDirectory = runtimeDirectory
        self.system = system
    }
}

/// Builds and runs the daemon's services.
public enum Daemon {
    /// Loads the state, starts the state and route services, one service per
    /// watcher and the D-Bus service in a ServiceGroup, tells systemd READY=1 once
    /// the route file is written and the watchers have enumerated the hardware
    /// present (1 s at most), and returns after SIGTERM/SIGINT when every
    /// service has stopped (in reverse order: the D-Bus API, the watchers, the
    /// routes, then the final state save).
    ///
    /// With a `bus`, the D-Bus API is served there: the name is taken before
    /// anything else starts (a missing bus or a taken name is a `StartupError`),
    /// so READY=1 always means the API is reachable.
    ///
    /// `system`, when given, feeds logind's sleep, wake and screen lock to the route service
    /// (`SystemEventService`); `soundServers`, the user's sound server (`SoundServerService`).
    ///
    /// `signals`, when given, replace ServiceGroup's own SIGTERM/SIGINT handling (which
    /// uses Dispatch): the first one that arrives starts the graceful shutdown. `sleep`
    /// times the state service's coalescing and the cap on the wait for READY=1. With an
    /// `executor`, the D-Bus connection is read on its loop (`BusServer.start(executor:)`).
    /// audiorouted passes all three from its one-thread executor (docs/daemon.md).
    public static func run(
        paths: DaemonPaths, watchers: [any PortWatcher], system: LogindWatcher? = nil, ucm: UCMHelpers? = nil, bus: ServerBus? = nil,
        soundServers: SoundServerWatcher? = nil, pipewire: PipeWireHelper? = nil, roles: StreamRoleTable = .builtIn, logger: Logger,
        signals: AsyncStream<Int32>? = nil, sleep: (@Sendable (Duration) async throws -> Void)? = nil,
        executor: SingleThreadExecutor? = nil
    ) async throws {
        var server: BusServer?
        if let bus {
            do throws(BusError) {
                server = try await DBusService.connect(bus: bus, executor: executor, logger: logger)
            } catch {
                throw StartupError(description: "cannot serve the D-Bus API on \(bus): \(error)")
            }
            logger.info("D-Bus name acquired", metadata: ["name": "\(DBusAPI.busName)", "bus": "\(bus)"])
        }
        let store = StateStore(directory: paths.stateDirectory)
        let (initial, outcome) = store.load(logger: logger)
        logger.info("state", metadata: ["path": "\(store.path)", "outcome": "\(outcome)"])
        let stateService = StateService(store: store, initial: initial, sleep: sleep ?? StateService.taskSleep, logger: logger)
        let writer = AlsaRouteConfigWriter(runtimeDirectory: paths.runtimeDirectory, directoryMode: paths.system ? 0o755 : 0o700)
        let serverDefaults: @Sendable () -> String
        if let pipewire {
            serverDefaults = { pipewire.follows }
        } else {
            serverDefaults = { "the daemon runs no PipeWire helper" }
        }
        let routeService = RouteService(
            stateService: stateService, initialState: initial, alsa: writer, watchers: watchers.map(\.name),
            appliers: (ucm.map { [UCMApplier(helpers: $0)] } ?? []) + (pipewire.map { [PipeWireDefaultsApplier(helper: $0)] } ?? []),
            sleep: sleep ?? StateService.taskSleep, logger: logger,
            serverDefaults: serverDefaults,
            onReady: { notify("READY=1", logger: logger); logger.notice("ready", metadata: ["alsa": "\(writer.path)"]) },
            onStopping: { notify("STOPPING=1", logger: logger) })
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: stateService, serviceName: "state"),
            .init(service: routeService, serviceName: "routes"),
        ]
        for watcher in watchers {
            services.append(.init(service: WatcherService(watcher: watcher, routes: routeService, logger: logger), serviceName: watcher.name))
        }
        if let system {
            services.append(.init(service: SystemEventService(watcher: system, routes: routeService, logger: logger), serviceName: "logind"))
        }
        if let soundServers {
            services.append(
                .init(
                    service: SoundServerService(
                        watcher: soundServers, routes: routeService, pipewire: pipewire, sleep: sleep ?? StateService.taskSleep, logger: logger),
                    serviceName: "soundserver"))
        }
        if let pipewire {
            // After the sound-server service, so that it stops first: paused streams are started
            // again while the helper still runs.
            services.append(
                .init(service: PipeWireStreamService(helper: pipewire, routes: routeService, roles: roles, logger: logger), serviceName: "pipewire-streams"))
        }
        if let server {
            // Last in the list, so it stops first: no call reaches a stopped route service.
            let policy = AccessPolicy(enforced: bus != .session, audioGroup: CurrentProcess.groupID(named: "audio"))
            services.append(.init(service: DBusService(server: server, routes: routeService, policy: policy, logger: logger), serviceName: "dbus"))
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services,
                gracefulShutdownSignals: signals == nil ? [.sigterm, .sigint] : [],
                logger: logger))
        guard let signals else {
            try await group.run()
            return
        }
        try await withThrowingTaskGroup(of: Bool.self) { tasks in
            tasks.addTask {
                try await group.run()
                return true
            }
            tasks.addTask {
                for await number in signals {
                    logger.notice("signal received, shutting down", metadata: ["signal": "\(number)"])
                    await group.triggerGracefulShutdown()
                    break
                }
                return false
            }
            // When the service group is done, the signal waiter is no longer needed.
            for try await groupEnded in tasks where groupEnded {
                tasks.cancelAll()
            }
        }
    }

    private static func notify(_ state: String, logger: Logger) {
        do throws(Errno) {
            try SystemdNotify.notify(state)
        } catch {
            logger.warning("\(error)")
        }
    }
}
