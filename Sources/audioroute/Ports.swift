import ArgumentParser
import AudioRouteCore
import AudioSession

/// `audioroute ports [--direct] [--json]`: the ports present now (from audiorouted, or read in-process).
struct Ports: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the audio ports present now.",
        discussion: "With --json: an array of objects with uid, type, direction, device, name, priority, sequence and alsa."
    )

    @OptionGroup var options: HardwareOptions
    @OptionGroup var daemon: BusOptions

    func run() async throws {
        options.bootstrapLogging()
        guard options.direct else { return try await fromDaemon() }
        var ports = await DirectWatchers.currentPorts(DirectWatchers.all())
        // Sequence is connection order; a snapshot numbers ports in the order found.
        for index in ports.indices { ports[index].sequence = UInt64(index + 1) }
        var out = OutputBuffer()
        if options.json {
            out.append(JSON.array(ports.map(\.json)).text)
        } else if ports.isEmpty {
            out.append("no ports")
        } else {
            for port in ports { out.append(PortText.line(port)) }
        }
        out.flush()
    }
}

extension Ports {
    /// The daemon's ports, with the sequence and priority it keeps.
    func fromDaemon() async throws {
        let session = daemon.session()
        try await withDaemon(direct: "ports") { () throws(AudioSessionError) in
            let ports = try await session.availablePorts.map(\.port)
            var out = OutputBuffer()
            if options.json {
                out.append(JSON.array(ports.map(\.json)).text)
            } else if ports.isEmpty {
                out.append("no ports")
            } else {
                for port in ports { out.append(PortText.line(port)) }
            }
            out.flush()
        }
    }
}

enum PortText {
    static func line(_ port: Port) -> String {
        let alsa = port.alsa.map { " alsa=\($0)" } ?? ""
        return "\(port.uid)  \(port.type.rawValue) \(port.direction.rawValue) \"\(port.name)\" priority=\(port.priority) device=\(port.device)\(alsa)"
    }
}
