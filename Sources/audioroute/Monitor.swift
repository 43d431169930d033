import ArgumentParser
import AudioRouteCore
import AudioRouteSystem
import AudioSession
import Synchronization

/// `audioroute monitor [--json]`: the daemon's event stream. With `--direct [--category C
/// --options O,...]`: a line per port arrival or removal, and per route change of one active
/// session run through the tower in this process.
struct Monitor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow route changes, port arrivals and removals, and every session's activity.",
        discussion: """
            Without --direct: audiorouted's events, one line each. With --json the first line is \
            {"event":"ready","current":ROUTE}; then "routeChange" (reason, previous, current), \
            "portAdded"/"portRemoved"/"portUpdated" (port), "silentMode" (on), "screenLock" (locked), \
            "sessionChanged" (session, app, change, detail: any session opened, closed, activated, \
            deactivated, interrupted, ducked or silenced, the sound server's streams included), \
            "mediaServicesWereLost" and "mediaServicesWereReset" when the daemon goes and comes \
            back. Routes are {"inputs":[uid],"outputs":[uid]} as with --direct. Stops on SIGINT \
            or SIGTERM.

            With --direct: one line per event. Port lines ("portAdded", "portRemoved", "portUpdated") carry the \
            port; route lines ("routeChange") the reason. Every line carries the previous and \
            current route of one active session of the given category and options (run through \
            the same tower as the daemon). Stops on SIGINT or SIGTERM.
            """
    )

    @OptionGroup var options: HardwareOptions
    @OptionGroup var daemon: BusOptions

    @Option(help: "The session's category.", completion: Completions.categories)
    var category: String = "playback"

    @Option(name: .customLong("options"), help: "The session's category options, comma-separated (e.g. allowBluetooth,defaultToSpeaker).", completion: Completions.options)
    var categoryOptions: String = ""

    @Option(help: "The session's mode.", completion: Completions.modes)
    var mode: String = "default"

    @Flag(help: "Start each line with the time it was written, CLOCK_MONOTONIC (the clock of udevadm monitor and of the kernel's uevents): \"monotonicNs\" in JSON, [seconds] in text.")
    var timestamps = false

    static let sessionID = "monitor"

    func validate() throws { _ = try parsedOptions() }

    func parsedOptions() throws -> CategoryOptions {
        try checkedSessionRequest(category: category, mode: mode, options: categoryOptions)
    }

    func run() async throws {
        options.bootstrapLogging()
        MonitorLine.timestamps.store(timestamps, ordering: .relaxed)
        guard options.direct else { return try await fromDaemon() }
        var tower = Tower()
        do {
            _ = try tower.openSession(Session(id: Self.sessionID))
            _ = try tower.setCategory(Category(rawValue: category)!, mode: Mode(rawValue: mode)!, options: try parsedOptions(), session: Self.sessionID)
            _ = try tower.setActive(true, session: Self.sessionID)
        } catch {
            Terminal.error("\(error)")
            throw ExitCode(ExitStatus.usage)
        }
        let json = options.json
        let work = Task { [tower] in
            var tower = tower
            // Unavailable ports never reach the tower, as in the daemon.
            for await (source, event) in DirectWatchers.usableEvents(DirectWatchers.events(DirectWatchers.all(options))) {
                let previous = tower.route
                let outcome: TowerOutcome
                do {
                    outcome = try tower.apply(event)
                } catch {
                    Terminal.warning("\(source): event refused: \(error)")
                    continue
                }
                for change in outcome.portChanges {
                    MonitorLine.port(change, source: source, previous: previous, current: tower.route, json: json)
                }
                if let change = outcome.change { MonitorLine.route(change, json: json) }
                // A playback session stopped by a route disconnect is reactivated so that the
                // monitor keeps following the category (the interruption is still reported).
                if let session = tower.session(Self.sessionID), !session.isActive {
                    for event in outcome.events where event.session == Self.sessionID {
                        MonitorLine.session(event, previous: previous, current: tower.route, json: json)
                    }
                    _ = try? tower.setActive(true, session: Self.sessionID)
                }
            }
        }
        let signals = SignalForward([.interrupt, .terminate]) { _ in work.cancel() }
        await work.value
        signals.cancel()
    }
}

extension Monitor {
    /// Follows the daemon's signals until SIGINT/SIGTERM.
    func fromDaemon() async throws {
        // Taken from the start: a signal that comes while connecting, or right after the
        // first line, stops the monitor as soon as it follows events.
        let (stops, stop) = AsyncStream.makeStream(of: Int32.self)
        let signals = SignalForward([.interrupt, .terminate]) { stop.yield($0) }
        defer { signals.cancel() }
        let session = daemon.session(app: "audioroute-monitor")
        let stream = await session.notifications
        let json = options.json
        try await withDaemon(daemon, direct: "monitor") { () throws(AudioSessionError) in
            try await session.connect()
            try await session.followSessionActivity()
            // Absent daemon: say so plainly, as every other command does.
            guard await session.isDaemonRunning else {
                throw .daemonUnavailable(bus: daemon.bus.description, detail: "org.audioroute.AudioRoute1 has no owner")
            }
            let route = try await session.currentRoute
            if json {
                MonitorLine.write(
                    JSON.object([.init("event", .string("ready")), .init("schemaVersion", .integer(CLIJSON.schemaVersion)), .init("current", route.route.json)]))
            } else {
                MonitorLine.write("route now: \(route.route)")
            }
        }
        let work = Task {
            for await event in stream { MonitorLine.daemon(event, json: json) }
        }
        let stopper = Task {
            for await _ in stops { break }
            work.cancel()
        }
        await work.value
        stopper.cancel()
        await session.close()
    }
}

/// Lines of `monitor`, written at once (tests and scripts read them as they come).
enum MonitorLine {
    static func port(_ change: PortChange, source: String, previous: Route, current: Route, json: Bool) {
        let (event, reason): (String, RouteChangeReason) =
            switch change.kind {
            case .added: ("portAdded", .newDeviceAvailable)
            case .removed: ("portRemoved", .oldDeviceUnavailable)
            case .updated: ("portUpdated", .routeConfigurationChange)
            }
        if json {
            write(JSON.object([
                .init("event", .string(event)), .init("source", .string(source)), .init("reason", .string(reason.rawValue)),
                .init("port", change.port.json), .init("previous", previous.json), .init("current", current.json),
            ]))
        } else {
            let sign = change.kind == .added ? "+" : change.kind == .removed ? "-" : "~"
            write("\(sign) \(PortText.line(change.port))  [\(reason.rawValue)] \(previous) -> \(current)")
        }
    }

    static func route(_ change: RouteChange, json: Bool) {
        if json {
            write(JSON.object([
                .init("event", .string("routeChange")), .init("reason", .string(change.reason.rawValue)),
                .init("previous", change.previous.json), .init("current", change.current.json),
            ]))
        } else {
            write("route \(change.reason.rawValue): \(change.previous) -> \(change.current)")
        }
    }

    static func session(_ event: SessionEvent, previous: Route, current: Route, json: Bool) {
        if json {
            var members = event.json
            if case .object(let list) = members {
                members = .object([.init("event", .string("session"))] + list + [.init("previous", previous.json), .init("current", current.json)])
            }
            write(members)
        } else {
            write("session \(event.kind.name) \(previous) -> \(current)")
        }
    }

    /// One daemon notification (nothing for the ones that concern a session: monitor has none).
    static func daemon(_ event: AudioSessionNotification, json: Bool) {
        switch event {
        case .routeChange(let info):
            route(RouteChange(reason: info.reason, previous: info.previousRoute.route, current: info.currentRoute.route), json: json)
        case .portsChanged(let kind, let port):
            let (name, sign) =
                switch kind {
                case .added: ("portAdded", "+")
                case .removed: ("portRemoved", "-")
                case .updated: ("portUpdated", "~")
                }
            if json {
                write(JSON.object([.init("event", .string(name)), .init("source", .string("daemon")), .init("port", port.port.json)]))
            } else {
                write("\(sign) \(PortText.line(port.port))")
            }
        case .silentModeChanged(let on):
            if json { write(JSON.object([.init("event", .string("silentMode")), .init("on", .bool(on))])) } else { write("silent mode \(on ? "on" : "off")") }
        case .screenLockChanged(let locked):
            if json {
                write(JSON.object([.init("event", .string("screenLock")), .init("locked", .bool(locked))]))
            } else {
                write("screen \(locked ? "locked" : "unlocked")")
            }
        case .sessionActivity(let activity):
            sessionActivity(activity, json: json)
        case .mediaServicesWereLost, .mediaServicesWereReset:
            let name = event == .mediaServicesWereLost ? "mediaServicesWereLost" : "mediaServicesWereReset"
            if json { write(JSON.object([.init("event", .string(name))])) } else { write(name) }
        default:
            return
        }
    }

    /// Any session's change (Monitor1's SessionChanged). The app name comes from another process:
    /// printed escaped (TerminalText), in JSON too.
    static func sessionActivity(_ activity: SessionActivity, json: Bool) {
        if json {
            write(JSON.object([
                .init("event", .string("sessionChanged")), .init("session", .string(activity.path)), .init("app", .string(activity.app)),
                .init("change", .string(activity.change.rawValue)), .init("detail", .string(activity.detail)),
            ]))
        } else {
            let app = activity.app.isEmpty ? "-" : TerminalText.safe(activity.app)
            let detail = activity.detail.isEmpty ? "" : " " + TerminalText.safe(activity.detail)
            // Named as `status` names it: its number, a stream's node or PulseAudio sink input.
            let name = TerminalText.safe(StatusSession.name(of: activity.path, server: nil))
            write("session \(name) \(app): \(activity.change.rawValue)\(detail)")
        }
    }

    /// `--timestamps`: set once, before the first line.
    static let timestamps = Atomic<Bool>(false)

    // Stamped as the line is written: for daemon events, once the client library has
    // handed the event to the app (how docs/benchmarks.md times "a client receives").

    /// One JSON line; with `--timestamps` its first member is `"monotonicNs"`.
    static func write(_ document: JSON) {
        guard timestamps.load(ordering: .relaxed), case .object(let members) = document else { return emit(document.text) }
        let stamp = JSON.Member("monotonicNs", .integer(Int64(MonotonicClock.nanoseconds())))
        emit(JSON.object([stamp] + members).text)
    }

    /// One text line; with `--timestamps` it starts with `[seconds.microseconds]`.
    static func write(_ line: String) {
        guard timestamps.load(ordering: .relaxed) else { return emit(line) }
        let now = MonotonicClock.nanoseconds()
        let micros = String(now % 1_000_000_000 / 1000)
        emit("[\(now / 1_000_000_000).\(String(repeating: "0", count: 6 - micros.count))\(micros)] " + line)
    }

    private static func emit(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        StandardStream.output.write(bytes)
    }
}

