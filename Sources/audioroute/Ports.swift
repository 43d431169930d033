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
            Every known port, each with its availability: available, unknown (usable, but whether anything is \
            behind it cannot be told) or unavailable (a jack with nothing plugged in: never routed).
            With --json: an array of objects with uid, type, direction, device, name, priority, sequence, alsa and \
            availability.
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
        // Sequence is connection order; a snapshot numbers the usable ports in the order found
        // (an unavailable one is connected to nothing: 0).
        var number: UInt64 = 0
        for index in ports.indices where ports[index].availability.isUsable {
            number += 1
            ports[index].sequence = number
        }
        PortText.list(ports.map { ($0, $0.availability) }, json: options.json)
    }
}

extension Ports {
    /// The daemon's ports, with the sequence and priority it keeps.
    func fromDaemon() async throws {
        let session = daemon.session()
        try await withDaemon(direct: "ports") { () throws(AudioSessionError) in
            // Every known port with its availability (a daemon before Version 2 does not say it).
            PortText.list(try await session.allPorts.map { ($0.port, $0.availability) }, json: options.json)
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
        return .object([
            JSON.Member("card", .string(card.sysname)), JSON.Member("syspath", .string(card.syspath)),
            JSON.Member("id", card.attributes["id"].map(JSON.string) ?? .null), JSON.Member("jacks", .array(jacks)),
            JSON.Member("decisions", .array(decisions)), JSON.Member("ports", .array(ports)),
        ])
    }
}

enum PortText {
    static func line(_ port: Port) -> String {
        let alsa = port.alsa.map { " alsa=\($0)" } ?? ""
        return "\(port.uid)  \(port.type.rawValue) \(port.direction.rawValue) \"\(port.name)\" priority=\(port.priority) device=\(port.device)\(alsa)"
    }

    /// Writes `ports`' listing (`listing`).
    static func list(_ ports: [(port: Port, availability: Port.Availability?)], json: Bool) {
        var out = OutputBuffer()
        for line in listing(ports, json: json) { out.append(line) }
        out.flush()
    }

    /// `ports`' listing: a line per port ending in its availability, or with `json` an array
    /// whose objects end in `availability`; nil where it is not known (null in JSON, left out of
    /// the line).
    static func listing(_ ports: [(port: Port, availability: Port.Availability?)], json: Bool) -> [String] {
        if json { return [JSON.array(ports.map { Self.json($0.port, availability: $0.availability) }).text] }
        if ports.isEmpty { return ["no ports"] }
        return ports.map { port, availability in line(port) + (availability.map { " availability=\($0.rawValue)" } ?? "") }
    }

    /// A port of the listing as JSON: `Port.json`'s members, then `availability` (null: not known).
    static func json(_ port: Port, availability: Port.Availability?) -> JSON {
        guard case .object(var members) = port.json(withAvailability: false) else { return port.json }
        members.append(JSON.Member("availability", availability.map { .string($0.rawValue) } ?? .null))
        return .object(members)
    }
}
