import ArgumentParser
import AudioRouteCore

/// `audioroute ports --direct [--json]`: the ports present now.
struct Ports: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the audio ports present now.",
        discussion: "With --json: an array of objects with uid, type, direction, device, name, priority, sequence and alsa."
    )

    @OptionGroup var options: HardwareOptions

    func run() async throws {
        try options.requireDirect("ports")
        options.bootstrapLogging()
        var ports = await DirectWatchers.currentPorts(DirectWatchers.all())
        // Sequence is connection order; a snapshot numbers ports in the order found.
        for index in ports.indices { ports[index].sequence = UInt64(index + 1) }
        var out = OutputBuffer(fd: 1)
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

enum PortText {
    static func line(_ port: Port) -> String {
        let alsa = port.alsa.map { " alsa=\($0)" } ?? ""
        return "\(port.uid)  \(port.type.rawValue) \(port.direction.rawValue) \"\(port.name)\" priority=\(port.priority) device=\(port.device)\(alsa)"
    }
}
