import AudioRouteCore
import AudioSession

/// Text and JSON forms of what the daemon reports.
enum DaemonText {
    static func portJSON(_ port: PortDescription) -> JSON { port.port.json }

    static func routeJSON(_ route: RouteDescription) -> JSON {
        .object([.init("inputs", .array(route.inputs.map(portJSON))), .init("outputs", .array(route.outputs.map(portJSON)))])
    }

    /// `routeJSON`, each input that has data sources with `dataSources` and `selectedDataSource`
    /// (`dataSources`: the daemon's replies by port uid).
    static func routeJSON(_ route: RouteDescription, dataSources: [String: DataSourcesReply]) -> JSON {
        let inputs = route.inputs.map { input -> JSON in
            guard let reply = dataSources[input.uid], !reply.sources.isEmpty else { return portJSON(input) }
            var port = input.port
            port.dataSources = reply.sources
            guard case .object(var members) = port.json else { return port.json }
            members.append(JSON.Member("selectedDataSource", reply.selected.map(JSON.string) ?? .null))
            return .object(members)
        }
        return .object([.init("inputs", .array(inputs)), .init("outputs", .array(route.outputs.map(portJSON)))])
    }

    static func sessionJSON(_ session: SessionSummary) -> JSON {
        .object([
            .init("path", .string(session.path)), .init("owner", .string(session.owner)), .init("app", .string(session.app)),
            .init("category", .string(session.category)), .init("mode", .string(session.mode)),
            .init("options", .array(session.options.map(JSON.string))), .init("active", .bool(session.isActive)),
        ])
    }

    static func portLine(_ port: PortDescription, inRoute: Bool) -> String {
        let mark = inRoute ? "*" : " "
        let alsa = port.alsa.map { "  alsa=\($0)" } ?? ""
        return " \(mark) \(port.uid)  \(port.portType.rawValue)  \(port.direction.rawValue)  \"\(port.portName)\"  priority=\(port.priority)  sequence=\(port.sequence)\(alsa)"
    }

    static func routeSide(_ ports: [PortDescription]) -> String {
        ports.isEmpty ? "(none)" : ports.map { "\($0.uid) (\($0.portType.rawValue)\($0.alsa.map { ", \($0)" } ?? ""))" }.joined(separator: ", ")
    }
}

/// The `--json` output's schema (docs/cli-json.md).
enum CLIJSON {
    /// The schema's version: `status` and `explain` documents and `monitor`'s first line carry it
    /// as `schemaVersion`. Raised when a member is removed, renamed or changes its type; members
    /// may be added within a version.
    static let schemaVersion: Int64 = 1
}
