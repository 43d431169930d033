import AudioRouteCore
import AudioSession

/// Text and JSON forms of what the daemon reports.
enum DaemonText {
    static func portJSON(_ port: PortDescription) -> JSON { port.port.json }

    static func routeJSON(_ route: RouteDescription) -> JSON {
        .object([.init("inputs", .array(route.inputs.map(portJSON))), .init("outputs", .array(route.outputs.map(portJSON)))])
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
