import ArgumentParser
import AudioRouteCore
import AudioRouteWatchers
import AudioSession
import Logging

/// `audioroute ports [--direct] [--json]`: the ports present now (from audiorouted, or read in-process).
struct Ports: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the audio ports present now.",
        discussion: """
            With --json: an array of objects with uid, type, direction, device, name, priority, sequence and alsa.
            With --direct --explain: each sound card, how it was classified and which udev signal decided each \
            port and its availability (with --json: an array of cards with their decisions and ports).
            """
    )

    @OptionGroup var options: HardwareOptions
    @OptionGroup var daemon: BusOptions

    @Flag(help: "With --direct: show which udev signal decided each sound card's ports.")
    var explain = false

    func validate() throws {
        if explain && !options.direct { throw ValidationError("--explain reads the hardware in this process: use it with --direct") }
    }

    func run() async throws {
        options.bootstrapLogging()
        if explain { return try explainCards() }
        guard options.direct else { return try await fromDaemon() }
        var ports = await DirectWatchers.currentPorts(DirectWatchers.all(options))
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

extension Ports {
    /// `--direct --explain`: the udev watcher's classification of every card, with its signals.
    func explainCards() throws {
        let cards = try UdevWatcher(logger: Logger(label: "audioroute.udev"), ucmHelpers: options.ucmHelpers()).currentExplanations()
        var out = OutputBuffer()
        if options.json {
            out.append(JSON.array(cards.map(ExplainText.json)).text)
        } else if cards.isEmpty {
            out.append("no sound cards")
        } else {
            for card in cards { ExplainText.lines(card).forEach { out.append($0) } }
        }
        out.flush()
    }
}

/// How `ports --direct --explain` shows a card's classification.
enum ExplainText {
    static func lines(_ explanation: CardExplanation) -> [String] {
        let card = explanation.card
        let id = card.attributes["id"].map { " id=\($0)" } ?? ""
        var lines = ["\(card.sysname)\(id) \(card.syspath)"]
        if let info = card.info {
            lines.append("  info driver=\"\(info.driver)\" name=\"\(info.name)\" longname=\"\(info.longName)\" mixer=\"\(info.mixerName)\" components=\"\(info.components)\"")
        }
        for pcm in card.pcms where pcm.id != nil || pcm.name != nil {
            lines.append("  pcm \(pcm.device)\(pcm.playback ? "p" : "c") id=\"\(pcm.id ?? "")\" name=\"\(pcm.name ?? "")\"")
        }
        if !card.hdaPins.isEmpty { lines.append("  hda pins: \(card.hdaPins.map(\.label).joined(separator: ", "))") }
        for jack in explanation.jacks {
            let state = jack.stateKnown ? "\(jack.state)" : "unknown"
            let source = jack.source == .evdev ? "" : " source=\(jack.source.rawValue)"
            lines.append("  jack \"\(jack.name)\" switches=\(jack.supported) state=\(state)\(source)")
        }
        for decision in explanation.classification.decisions {
            lines.append("  \(decision.subject): \(decision.outcome)  <- \(decision.signal)")
        }
        if explanation.classification.ports.isEmpty { lines.append("  (no ports)") }
        return lines
    }

    static func json(_ explanation: CardExplanation) -> JSON {
        let card = explanation.card
        let result = explanation.classification
        let decisions = result.decisions.map { decision in
            JSON.object([
                JSON.Member("subject", .string(decision.subject)), JSON.Member("outcome", .string(decision.outcome)),
                JSON.Member("signal", .string(decision.signal)),
            ])
        }
        let ports = result.ports.map { port -> JSON in
            guard case .object(var members) = port.json else { return port.json }
            members.append(JSON.Member("availability", .string(result.availability[port.uid]?.rawValue ?? "present")))
            let signal = result.decisions.last { $0.subject == port.uid }?.signal
            members.append(JSON.Member("signal", signal.map(JSON.string) ?? .null))
            return .object(members)
        }
        let jacks = explanation.jacks.map { jack in
            JSON.object([
                JSON.Member("name", .string(jack.name)), JSON.Member("stateKnown", .bool(jack.stateKnown)),
                JSON.Member("switches", .string("\(jack.supported)")), JSON.Member("state", .string("\(jack.state)")),
                JSON.Member("source", .string(jack.source.rawValue)),
            ])
        }
        // What the control device said of the card and its PCMs (null / absent when it could not be read).
        let info = card.info.map { info in
            JSON.object([
                JSON.Member("id", .string(info.id)), JSON.Member("driver", .string(info.driver)), JSON.Member("name", .string(info.name)),
                JSON.Member("longName", .string(info.longName)), JSON.Member("mixerName", .string(info.mixerName)),
                JSON.Member("components", .string(info.components)),
            ])
        } ?? .null
        let pcms = card.pcms.map { pcm in
            JSON.object([
                JSON.Member("device", .integer(Int64(pcm.device))), JSON.Member("stream", .string(pcm.playback ? "playback" : "capture")),
                JSON.Member("id", pcm.id.map(JSON.string) ?? .null), JSON.Member("name", pcm.name.map(JSON.string) ?? .null),
            ])
        }
        let pins = card.hdaPins.map { pin in
            JSON.object([
                JSON.Member("codec", .integer(Int64(pin.codec))), JSON.Member("node", .integer(Int64(pin.node))),
                JSON.Member("defaultConfig", .integer(Int64(pin.defaultConfig))),
                JSON.Member("capabilities", pin.capabilities.map { .integer(Int64($0)) } ?? .null), JSON.Member("label", .string(pin.label)),
            ])
        }
        return .object([
            JSON.Member("card", .string(card.sysname)), JSON.Member("syspath", .string(card.syspath)),
            JSON.Member("id", card.attributes["id"].map(JSON.string) ?? .null), JSON.Member("info", info), JSON.Member("pcms", .array(pcms)),
            JSON.Member("hdaPins", .array(pins)), JSON.Member("jacks", .array(jacks)),
            JSON.Member("decisions", .array(decisions)), JSON.Member("ports", .array(ports)),
        ])
    }
}

enum PortText {
    static func line(_ port: Port) -> String {
        let alsa = port.alsa.map { " alsa=\($0)" } ?? ""
        return "\(port.uid)  \(port.type.rawValue) \(port.direction.rawValue) \"\(port.name)\" priority=\(port.priority) device=\(port.device)\(alsa)"
    }
}
