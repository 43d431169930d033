import ArgumentParser
import AudioRouteCore
import AudioRouteIPC
import AudioSession

/// `audioroute status [--json]`: the daemon's devices and their ports (the route's marked), its
/// sessions (process, program, state), silent mode, the screen lock and the sound server.
struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the route, the devices and their ports, and the sessions of audiorouted.",
        discussion: """
            Like `wpctl status`, as a tree: the route; each device with its ports (type, direction, \
            priority, sequence, ALSA name; `*` and `[route output]`/`[route input]` mark the ports of \
            the route); each session with its app name, category, mode, options, state (active, \
            inactive or interrupted), owner, process id and program (the process's command name; in \
            JSON the app name when there is none), and in brackets whether it controls the route, is \
            ducked or silenced. The sound server's streams are sessions too, named by their node \
            (PipeWire) or sink input (PulseAudio). Then \
            silent mode, the screen lock and the sound server. With --json: one object, its schema in \
            docs/cli-json.md (its schemaVersion first).
            """
    )

    @OptionGroup var daemon: BusOptions

    @Flag(help: "Print one JSON document (docs/cli-json.md).")
    var json = false

    func run() async throws {
        LogOptions.bootstrap(level: .warning)
        let session = daemon.session()
        try await withDaemon(daemon) { () throws(AudioSessionError) in
            let route = try await session.currentRoute
            let ports = try await session.availablePorts
            let sessions = try await session.sessions
            let states = try await session.sessionStates
            let silent = try await session.silentMode
            let locked = try await session.screenLocked
            let engine = try await session.soundServer
            // The route's inputs' data sources and the one in use (Version 4).
            var dataSources: [String: DataSourcesReply] = [:]
            if try await session.daemonVersion >= 4 {
                for input in route.inputs { dataSources[input.uid] = try await session.dataSources(uid: input.uid) }
            }
            let serverDefaults = try await session.soundServerDefaults
            let byPath = Dictionary((states ?? []).map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
            let entries = sessions.map { StatusSession(summary: $0, state: byPath[$0.path], server: engine?.server) }
            var out = OutputBuffer()
            if json {
                out.append(
                    JSON.object([
                        .init("schemaVersion", .integer(CLIJSON.schemaVersion)),
                        .init("route", DaemonText.routeJSON(route, dataSources: dataSources)), .init("ports", .array(ports.map(DaemonText.portJSON))),
                        .init("sessions", .array(entries.map(\.json))), .init("silentMode", .bool(silent)),
                        .init("screenLocked", locked.map(JSON.bool) ?? .null), .init("soundServer", engine?.json ?? .null),
                        .init("soundServerDefaults", serverDefaults.map(JSON.string) ?? .null),
                    ]).text)
            } else {
                out.appendText("audiorouted on \(daemon.bus)")
                out.appendText("Route")
                out.appendText(" ├─ outputs: \(DaemonText.routeSide(route.outputs))")
                out.appendText(" └─ inputs:  \(DaemonText.routeSide(route.inputs))")
                for input in route.inputs {
                    guard let reply = dataSources[input.uid], let selected = reply.selected else { continue }
                    out.appendText("     data source of \(input.uid): \(selected) (\(reply.reason))")
                }
                for line in StatusTree.devices(ports, route: route) { out.appendText(line) }
                for line in StatusTree.sessions(entries) { out.appendText(line) }
                out.appendText("Silent mode: \(silent ? "on" : "off")")
                out.appendText("Screen: \(locked.map { $0 ? "locked" : "unlocked" } ?? "lock state not reported by this daemon")")
                out.appendText("Sound server: \(engine.map(\.summary) ?? "not reported by this daemon")")
                out.appendText("Server defaults: \(serverDefaults ?? "not reported by this daemon")")
            }
            out.flush()
        }
    }
}

/// A session as `status` shows it: `Sessions`' entry and, from a daemon of Version 7 or later,
/// its `SessionStates` entry.
struct StatusSession {
    var summary: SessionSummary
    var state: SessionState?
    /// The sound server, to name a stream's session by its node or its PulseAudio object.
    var server: SoundServerKind?

    /// A short name: a D-Bus session's number, a stream's node (PipeWire) or sink input or
    /// source output (PulseAudio, whose node ids carry the kind in their top two bits).
    var name: String { Self.name(of: summary.path, server: server) }

    /// `name` of the session at `path` (`server` nil: a node id past PulseAudio's largest index is
    /// taken as PulseAudio's).
    static func name(of path: String, server: SoundServerKind?) -> String {
        if let number = DBusAPI.sessionNumber(path) { return "\(number)" }
        let streams = DBusAPI.managerPath + "/pipewire/"
        guard path.hasPrefix(streams), let node = UInt32(path.dropFirst(streams.count)) else { return path }
        if server == .pulseaudio || node > PulseFacility.maximumIndex,
            let facility = PulseFacility(rawValue: Int32(node >> 30)), facility == .sinkInput || facility == .sourceOutput
        {
            return (facility == .sinkInput ? "sink-input " : "source-output ") + "\(node & PulseFacility.maximumIndex)"
        }
        return "node \(node)"
    }

    /// `active`, `inactive` or `interrupted` (an older daemon: active or inactive).
    var activity: String { state?.state ?? (summary.isActive ? "active" : "inactive") }

    /// The process's command name, else the app name the session gave; nil for neither.
    var program: String? { state?.program ?? (summary.app.isEmpty ? nil : summary.app) }

    var json: JSON {
        guard case .object(var members) = DaemonText.sessionJSON(summary) else { return DaemonText.sessionJSON(summary) }
        members += [
            .init("name", .string(name)), .init("pid", state?.processID.map { .integer(Int64($0)) } ?? .null),
            .init("program", program.map(JSON.string) ?? .null), .init("state", .string(activity)),
            .init("controlsRoute", .bool(state?.marks.contains(SessionState.Mark.controlsRoute.rawValue) ?? false)),
            .init("marks", .array((state?.marks ?? []).map(JSON.string))),
        ]
        return .object(members)
    }

    /// One line of the tree: name, app, category/mode and options, state, owner, then the process
    /// (pid and program, when the daemon says them) and the marks (`[controls the route, ducked]`).
    var line: String {
        let options = summary.options.isEmpty ? "" : " [\(summary.options.joined(separator: ","))]"
        let app = summary.app.isEmpty ? "(no app name)" : summary.app
        let process = (state?.processID.map { "  pid=\($0)" } ?? "") + (state?.program.map { "  program=\($0)" } ?? "")
        let marks = (state?.marks ?? []).map { mark in
            switch SessionState.Mark(rawValue: mark) {
            case .controlsRoute: return "controls the route"
            case .ducked: return "ducked"
            case .silenced: return "silenced"
            case nil: return mark
            }
        }
        return "\(name)  \(app)  \(summary.category)/\(summary.mode)\(options)  \(activity)  owner=\(summary.owner)\(process)"
            + (marks.isEmpty ? "" : "  [\(marks.joined(separator: ", "))]")
    }
}

/// The tree of `status`'s text: branches drawn as `wpctl status` draws them.
enum StatusTree {
    /// `Devices`, each with its ports, the route's marked `*` and `[route output]`/`[route input]`.
    static func devices(_ ports: [PortDescription], route: RouteDescription) -> [String] {
        let outputs = Set(route.outputs.map(\.uid))
        let inputs = Set(route.inputs.map(\.uid))
        var order: [String] = []
        var byDevice: [String: [PortDescription]] = [:]
        for port in ports {
            if byDevice[port.device] == nil { order.append(port.device) }
            byDevice[port.device, default: []].append(port)
        }
        var lines = ["Devices"]
        if order.isEmpty { lines.append(" └─ (none)") }
        for (index, device) in order.enumerated() {
            let lastDevice = index == order.count - 1
            lines.append(" \(lastDevice ? "└─" : "├─") \(device)")
            let devicePorts = byDevice[device] ?? []
            for (portIndex, port) in devicePorts.enumerated() {
                let branch = portIndex == devicePorts.count - 1 ? "└─" : "├─"
                var marks: [String] = []
                if outputs.contains(port.uid) { marks.append("route output") }
                if inputs.contains(port.uid) { marks.append("route input") }
                let line = DaemonText.portLine(port, inRoute: !marks.isEmpty)
                lines.append(" \(lastDevice ? "   " : "│  ") \(branch)\(line)" + (marks.isEmpty ? "" : "  [\(marks.joined(separator: ", "))]"))
            }
        }
        return lines
    }

    /// `Sessions`, one line each.
    static func sessions(_ sessions: [StatusSession]) -> [String] {
        var lines = ["Sessions"]
        if sessions.isEmpty { lines.append(" └─ (none)") }
        for (index, session) in sessions.enumerated() {
            lines.append(" \(index == sessions.count - 1 ? "└─" : "├─") \(session.line)")
        }
        return lines
    }
}

/// `audioroute explain [--json]`: the rule that chose the route and why each other port lost.
struct Explain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Say which rule chose the current route, and why each other port lost.")

    @OptionGroup var daemon: BusOptions

    @Flag(help: "Print one JSON document.")
    var json = false

    func run() async throws {
        LogOptions.bootstrap(level: .warning)
        let session = daemon.session()
        try await withDaemon(daemon) { () throws(AudioSessionError) in
            let explanation = try await session.explain()
            // Which data source the route's input uses, and why (Version 4).
            var dataSources: [(uid: String, reply: DataSourcesReply)] = []
            if try await session.daemonVersion >= 4 {
                for input in try await session.currentRoute.inputs {
                    let reply = try await session.dataSources(uid: input.uid)
                    if reply.selected != nil { dataSources.append((input.uid, reply)) }
                }
            }
            var out = OutputBuffer()
            if json {
                out.append(
                    JSON.object([
                        .init("schemaVersion", .integer(CLIJSON.schemaVersion)),
                        .init("outputRule", .string(explanation.outputRule)), .init("inputRule", .string(explanation.inputRule)),
                        .init("ports", .array(explanation.ports.map { .object([.init("uid", .string($0.uid)), .init("reasons", .array($0.reasons.map(JSON.string)))]) })),
                        .init("dataSources", .array(dataSources.map {
                            .object([.init("uid", .string($0.uid)), .init("selected", $0.reply.selected.map(JSON.string) ?? .null), .init("reason", .string($0.reply.reason))])
                        })),
                    ]).text)
            } else {
                out.appendText("output: \(explanation.outputRule)")
                out.appendText("input:  \(explanation.inputRule)")
                for port in explanation.ports { out.appendText("  \(port.uid): \(port.reasons.joined(separator: "; "))") }
                for (uid, reply) in dataSources { out.appendText("data source of \(uid): \(reply.selected ?? "none"): \(reply.reason)") }
            }
            out.flush()
        }
    }
}
