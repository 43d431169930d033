import ArgumentParser
import AudioRouteCore
import AudioSession

/// `audioroute status [--json]`: the daemon's route, ports, sessions and silent mode.
struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the current route, the ports and the sessions of audiorouted.",
        discussion: """
            Like `wpctl status`: the route, every port (type, direction, priority, sequence, ALSA name; \
            `*` marks the ports of the route) and every session (app, category, mode, options, active). \
            Then the sound server the daemon found (PipeWire, PulseAudio, or none: AudioRoute drives ALSA \
            directly), and whether its default sink and source follow the route. With --json: one object \
            with route, ports, sessions, silentMode, screenLocked, soundServer and soundServerDefaults \
            (null from a daemon that does not report them).
            """
    )

    @OptionGroup var daemon: BusOptions

    @Flag(help: "Print one JSON document.")
    var json = false

    func run() async throws {
        LogOptions.bootstrap(level: .warning)
        let session = daemon.session()
        try await withDaemon(daemon) { () throws(AudioSessionError) in
            let route = try await session.currentRoute
            let ports = try await session.availablePorts
            let sessions = try await session.sessions
            let silent = try await session.silentMode
            let locked = try await session.screenLocked
            let engine = try await session.soundServer
            // The route's inputs' data sources and the one in use (Version 4).
            var dataSources: [String: DataSourcesReply] = [:]
            if try await session.daemonVersion >= 4 {
                for input in route.inputs { dataSources[input.uid] = try await session.dataSources(uid: input.uid) }
            }
            let serverDefaults = try await session.soundServerDefaults
            var out = OutputBuffer()
            if json {
                out.append(
                    JSON.object([
                        .init("route", DaemonText.routeJSON(route, dataSources: dataSources)), .init("ports", .array(ports.map(DaemonText.portJSON))),
                        .init("sessions", .array(sessions.map(DaemonText.sessionJSON))), .init("silentMode", .bool(silent)),
                        .init("screenLocked", locked.map(JSON.bool) ?? .null), .init("soundServer", engine?.json ?? .null),
                        .init("soundServerDefaults", serverDefaults.map(JSON.string) ?? .null),
                    ]).text)
            } else {
                let inRoute = Set(route.outputs.map(\.uid) + route.inputs.map(\.uid))
                out.appendText("audiorouted on \(daemon.bus)")
                out.appendText("Route")
                out.appendText("  outputs: \(DaemonText.routeSide(route.outputs))")
                out.appendText("  inputs:  \(DaemonText.routeSide(route.inputs))")
                for input in route.inputs {
                    guard let reply = dataSources[input.uid], let selected = reply.selected else { continue }
                    out.appendText("  data source of \(input.uid): \(selected) (\(reply.reason))")
                }
                out.appendText("Ports")
                if ports.isEmpty { out.appendText("   (none)") }
                for port in ports { out.appendText(DaemonText.portLine(port, inRoute: inRoute.contains(port.uid))) }
                out.appendText("Sessions")
                if sessions.isEmpty { out.appendText("   (none)") }
                for s in sessions {
                    let options = s.options.isEmpty ? "" : " [\(s.options.joined(separator: ","))]"
                    out.appendText("   \(s.path.split(separator: "/").last ?? "")  \(s.app.isEmpty ? "(no app name)" : s.app)  \(s.category)/\(s.mode)\(options)  \(s.isActive ? "active" : "inactive")  owner=\(s.owner)")
                }
                out.appendText("Silent mode: \(silent ? "on" : "off")")
                out.appendText("Screen: \(locked.map { $0 ? "locked" : "unlocked" } ?? "lock state not reported by this daemon")")
                out.appendText("Sound server: \(engine.map(\.summary) ?? "not reported by this daemon")")
                out.appendText("Server defaults: \(serverDefaults ?? "not reported by this daemon")")
            }
            out.flush()
        }
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
