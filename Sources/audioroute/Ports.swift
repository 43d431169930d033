import ArgumentParser
import AudioRouteALSAInfo
import AudioRouteCore
import AudioRouteWatchers
import AudioSession
import Logging

/// `audioroute ports [--direct | --alsa-info FILE] [--explain] [--json]`: the ports present now (from
/// audiorouted, or read in-process), or the ports an alsa-info.sh report's machine would get.
struct Ports: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the audio ports present now, or those of an alsa-info.sh report.",
        discussion: """
            With --json: an array of objects with uid, type, direction, device, name, priority, sequence and alsa.
            With --direct --explain: each sound card, how it was classified and which udev signal decided each \
            port and its availability (with --json: an array of cards with their decisions and ports).
            With --alsa-info FILE: the ports the daemon would make on the machine an alsa-info.sh report \
            describes, classified by the same rules (docs/alsa-info.md); --explain as with --direct.
            """
    )

    @OptionGroup var options: HardwareOptions
    @OptionGroup var daemon: BusOptions

    @Flag(help: "With --direct or --alsa-info: show which signal decided each sound card's ports.")
    var explain = false

    @Option(name: .customLong("alsa-info"), help: "Read an alsa-info.sh report instead of this machine's hardware.")
    var alsaInfo: String?

    @Option(
        name: .customLong("ucm-root"),
        help: "With --alsa-info: the ALSA UCM2 tree read for earpieces (default /usr/share/alsa/ucm2). UCM ports: not yet.")
    var ucmRoot: String?

    func validate() throws {
        if alsaInfo != nil && options.direct { throw ValidationError("--alsa-info reads a report, --direct this machine: use one of them") }
        if explain && !options.direct && alsaInfo == nil { throw ValidationError("--explain reads the hardware in this process: use it with --direct or --alsa-info") }
        if ucmRoot != nil && alsaInfo == nil { throw ValidationError("--ucm-root goes with --alsa-info") }
    }

    func run() async throws {
        options.bootstrapLogging()
        if let alsaInfo { return try reportPorts(alsaInfo) }
        if explain { return try explainCards() }
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

extension Ports {
    /// `--direct --explain`: the udev watcher's classification of every card, with its signals.
    func explainCards() throws {
        let cards = try UdevWatcher(logger: Logger(label: "audioroute.udev")).currentExplanations()
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

extension Ports {
    /// `--alsa-info FILE`: the report's cards through the classifier, as `--direct` shows them.
    func reportPorts(_ path: String) throws {
        let report: ALSAInfoReport
        do {
            report = try ALSAInfoReport.read(path: path)
        } catch {
            Terminal.error("\(path): \(error)")
            throw ExitCode(1)
        }
        for warning in report.warnings { Terminal.warning("\(path): \(warning)") }
        for codec in report.unplacedCodecs { Terminal.warning("\(path): codec \"\(codec.name)\" (line \(codec.line)) belongs to no card the report names") }
        let probe = UCMProbe(root: ucmRoot ?? UCMProbe.defaultRoot)
        let cards = report.hardware().map { card in (card, card.classify { probe.hasEarpiece($0) }) }
        var out = OutputBuffer()
        if explain {
            if options.json {
                out.append(JSON.array(cards.map { ExplainText.json(card: $0.0.record, jacks: $0.0.jacks, classification: $0.1, report: $0.0.provenance) }).text)
            } else if cards.isEmpty {
                out.append("no sound cards")
            } else {
                if let machine = report.machine { out.append("machine: \(machine)") }
                for (card, result) in cards {
                    ExplainText.lines(card: card.record, jacks: card.jacks, classification: result, report: card.provenance).forEach { out.append($0) }
                    if !card.hasControls { out.append("  report: no saved controls for the card (no \"Alsactl output\"): its jacks are unknown") }
                }
            }
        } else {
            var ports = cards.flatMap(\.1.ports)
            for index in ports.indices { ports[index].sequence = UInt64(index + 1) }
            if options.json {
                out.append(JSON.array(ports.map(\.json)).text)
            } else if ports.isEmpty {
                out.append("no ports")
            } else {
                for port in ports { out.append(PortText.line(port)) }
            }
        }
        out.flush()
    }
}

/// How `ports --direct --explain` (and `--alsa-info --explain`) shows a card's classification.
enum ExplainText {
    static func lines(_ explanation: CardExplanation) -> [String] {
        lines(card: explanation.card, jacks: explanation.jacks, classification: explanation.classification)
    }

    static func json(_ explanation: CardExplanation) -> JSON {
        json(card: explanation.card, jacks: explanation.jacks, classification: explanation.classification)
    }

    /// - Parameter report: for a card read from a report, which section gave which field.
    static func lines(card: CardRecord, jacks: [JackRecord], classification: CardClassification, report: [ALSAInfoProvenance] = []) -> [String] {
        let id = card.attributes["id"].map { " id=\($0)" } ?? ""
        var lines = ["\(card.sysname)\(id) \(card.syspath)"]
        for item in report { lines.append("  report: \(item.field)  <- \(item.source)") }
        for jack in jacks {
            let state = jack.stateKnown ? "\(jack.state)" : "unknown"
            let source = jack.source == .evdev ? "" : " source=\(jack.source.rawValue)"
            lines.append("  jack \"\(jack.name)\" switches=\(jack.supported) state=\(state)\(source)")
        }
        for decision in classification.decisions {
            lines.append("  \(decision.subject): \(decision.outcome)  <- \(decision.signal)")
        }
        if classification.ports.isEmpty { lines.append("  (no ports)") }
        return lines
    }

    static func json(card: CardRecord, jacks: [JackRecord], classification result: CardClassification, report: [ALSAInfoProvenance]? = nil) -> JSON {
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
        let jackList = jacks.map { jack in
            JSON.object([
                JSON.Member("name", .string(jack.name)), JSON.Member("stateKnown", .bool(jack.stateKnown)),
                JSON.Member("switches", .string("\(jack.supported)")), JSON.Member("state", .string("\(jack.state)")),
                JSON.Member("source", .string(jack.source.rawValue)),
            ])
        }
        var members = [
            JSON.Member("card", .string(card.sysname)), JSON.Member("syspath", .string(card.syspath)),
            JSON.Member("id", card.attributes["id"].map(JSON.string) ?? .null), JSON.Member("jacks", .array(jackList)),
            JSON.Member("decisions", .array(decisions)), JSON.Member("ports", .array(ports)),
        ]
        if let report {
            members.append(JSON.Member("report", .array(report.map { .object([JSON.Member("field", .string($0.field)), JSON.Member("source", .string($0.source))]) })))
        }
        return .object(members)
    }
}

enum PortText {
    static func line(_ port: Port) -> String {
        let alsa = port.alsa.map { " alsa=\($0)" } ?? ""
        return "\(port.uid)  \(port.type.rawValue) \(port.direction.rawValue) \"\(port.name)\" priority=\(port.priority) device=\(port.device)\(alsa)"
    }
}
