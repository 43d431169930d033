import ArgumentParser
import AudioRouteALSAInfo
import AudioRouteCore
import AudioRouteSystem
import AudioRouteWatchers
import AudioSession
import Logging

/// `audioroute ports [--direct | --alsa-info FILE] [--explain] [--json]`: the ports present now (from
/// audiorouted, or read in-process), or the ports an alsa-info.sh report's machine would get.
struct Ports: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the audio ports present now, or those of an alsa-info.sh report.",
        discussion: """
            Every known port, each with its availability: available, unknown (usable, but whether anything is \
            behind it cannot be told) or unavailable (a jack with nothing plugged in: never routed).
            With --json: an array of objects with uid, type, direction, device, name, priority, sequence, alsa and \
            availability.
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

    @Option(name: .customLong("alsa-info"), help: "Read an alsa-info.sh report instead of this machine's hardware.", completion: .file())
    var alsaInfo: String?

    @Flag(help: "Only the ports' uids, one per line (what the shell completes a port's uid from).")
    var uids = false

    func validate() throws {
        if alsaInfo != nil && options.direct { throw ValidationError("--alsa-info reads a report, --direct this machine: use one of them") }
        if explain && !options.direct && alsaInfo == nil { throw ValidationError("--explain reads the hardware in this process: use it with --direct or --alsa-info") }
        if uids && (explain || alsaInfo != nil || options.json) { throw ValidationError("--uids lists the ports' uids alone: not with --explain, --alsa-info or --json") }
        if (options.ucmRoot != nil || options.ucmHelper != nil) && alsaInfo == nil && !options.direct {
            throw ValidationError("--ucm-root and --ucm-helper go with --direct or --alsa-info")
        }
    }

    func run() async throws {
        options.bootstrapLogging()
        if let alsaInfo { return try reportPorts(alsaInfo) }
        if explain { return try explainCards() }
        guard options.direct else { return try await fromDaemon() }
        // Read in this process, where no session prefers a data source: each port uses its first.
        let ports = Self.numbered(await DirectWatchers.currentPorts(DirectWatchers.all(options)))
        if uids { return Self.printUIDs(ports.map(\.port)) }
        PortText.list(ports, selected: PortText.firstDataSources(ports.map(\.port)), json: options.json)
    }

    /// `--uids`: one uid a line, escaped as any text from elsewhere.
    static func printUIDs(_ ports: [Port]) {
        var out = OutputBuffer()
        for port in ports { out.appendText(port.uid) }
        out.flush()
    }

    /// A snapshot's ports for the listing. Sequence is connection order: a snapshot numbers the
    /// usable ports in the order found (an unavailable one is connected to nothing: 0).
    static func numbered(_ ports: [Port]) -> [(port: Port, availability: Port.Availability?)] {
        var number: UInt64 = 0
        return ports.map { port in
            var port = port
            if port.availability.isUsable {
                number += 1
                port.sequence = number
            }
            return (port, port.availability)
        }
    }
}

extension Ports {
    /// The daemon's ports, with the sequence and priority it keeps.
    func fromDaemon() async throws {
        let session = daemon.session()
        try await withDaemon(daemon, direct: "ports") { () throws(AudioSessionError) in
            // Every known port with its availability (a daemon before Version 2 does not say it).
            var ports = try await session.allPorts.map { ($0.port, $0.availability) }
            if uids { return Self.printUIDs(ports.map(\.0)) }
            var selected: [String: String] = [:]
            if try await session.daemonVersion >= 4 {
                // Each input's data sources and the one in use (Version 4).
                for index in ports.indices where ports[index].0.direction.isInput {
                    let reply = try await session.dataSources(uid: ports[index].0.uid)
                    ports[index].0.dataSources = reply.sources
                    if let id = reply.selected { selected[ports[index].0.uid] = id }
                }
            }
            PortText.list(ports, selected: selected, json: options.json)
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
            for card in cards { ExplainText.lines(card).forEach { out.appendText($0) } }
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
            // A report that is no report: its data is wrong; a file that cannot be opened: no input.
            throw ExitCode(error is ALSAInfoError ? ExitStatus.dataError : ExitStatus.noInput)
        }
        for warning in report.warnings { Terminal.warning("\(path): \(warning)") }
        for codec in report.unplacedCodecs { Terminal.warning("\(path): codec \"\(codec.name)\" (line \(codec.line)) belongs to no card the report names") }
        // The report's cards' UCM profiles, as the daemon would find them (docs/alsa-info.md).
        var ucm: ReportUCM?
        if let helper = options.ucmHelperPath() {
            if let plugin = Self.fakeCardPlugin() {
                ucm = ReportUCM(helper: helper, ucmRoot: options.ucmRoot, plugin: plugin)
            } else {
                Terminal.warning("the fake card plugin (libasound_module_ctl_audioroute_fakecard.so, scripts/build-alsa-plugin) is not installed: no card's UCM profile is read")
            }
        }
        let machine: ReportMachine
        do {
            machine = try ReportMachine(report, ucm: ucm)
        } catch {
            Terminal.error("\(path): the UCM helper: \(error)")
            throw ExitCode(1)
        }
        var out = OutputBuffer()
        if explain {
            let provenance = { (card: CardRecord) in machine.cards[card.syspath]?.provenance ?? [] }
            if options.json {
                out.append(JSON.array(machine.explanations.map {
                    ExplainText.json(card: $0.card, jacks: $0.jacks, classification: $0.classification, report: provenance($0.card))
                }).text)
            } else if machine.explanations.isEmpty {
                out.append("no sound cards")
            } else {
                if let name = report.machine { out.append("machine: \(name)") }
                for card in machine.explanations {
                    ExplainText.lines(card: card.card, jacks: card.jacks, classification: card.classification, report: provenance(card.card)).forEach { out.append($0) }
                    if machine.cards[card.card.syspath]?.hasControls == false {
                        out.append("  report: no saved controls for the card (no \"Alsactl output\"): its jacks are unknown")
                    }
                }
            }
        } else {
            // As `ports --direct` lists them: the same lines and JSON, availability included.
            let ports = Self.numbered(machine.ports)
            for line in PortText.listing(ports, selected: PortText.firstDataSources(ports.map(\.port)), json: options.json) {
                if options.json { out.append(line) } else { out.appendText(line) }
            }
        }
        out.flush()
    }
}

extension Ports {
    /// The fake card's plugin for `--alsa-info`: where scripts/build-alsa-plugin puts it beside this
    /// program's build (`.build/alsa-plugin`), else where it is installed, in libasound's plugin
    /// directory; nil when neither has it.
    static func fakeCardPlugin() -> String? {
        let name = "/libasound_module_ctl_audioroute_fakecard.so"
        var places: [String] = []
        if let directory = CurrentProcess.executableDirectory() {
            // .build/debug/audioroute is .build/<triple>/debug/audioroute: .build is one or two up.
            places += [directory + "/../alsa-plugin", directory + "/../../alsa-plugin"]
        }
        places += ["/usr/lib/x86_64-linux-gnu/alsa-lib", "/usr/lib/aarch64-linux-gnu/alsa-lib", "/usr/lib/arm-linux-gnueabihf/alsa-lib",
                   "/usr/lib64/alsa-lib", "/usr/lib/alsa-lib"]
        return places.map { $0 + name }.first(where: FileInfo.isReadable)
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
        if let info = card.info {
            lines.append("  info driver=\"\(info.driver)\" name=\"\(info.name)\" longname=\"\(info.longName)\" mixer=\"\(info.mixerName)\" components=\"\(info.components)\"")
        }
        for pcm in card.pcms where pcm.id != nil || pcm.name != nil {
            lines.append("  pcm \(pcm.device)\(pcm.playback ? "p" : "c") id=\"\(pcm.id ?? "")\" name=\"\(pcm.name ?? "")\"")
        }
        if !card.hdaPins.isEmpty { lines.append("  hda pins: \(card.hdaPins.map(\.label).joined(separator: ", "))") }
        if !card.phantomJacks.isEmpty { lines.append("  phantom jacks: \(card.phantomJacks.map { "\"\($0)\"" }.joined(separator: ", "))") }
        for (device, format) in card.usbPlayback.sorted(by: { $0.key < $1.key }) { lines.append("  usb \(format.signal(device: device))") }
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
            // The classification's availability (present, connected, unknown, unavailable) says
            // more than the port's, which it decides: it is the one given, once.
            guard case .object(var members) = port.json(withAvailability: false) else { return port.json }
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
        // A USB card's widest playback format per PCM device (its stream files), as read.
        let usbPlayback: [JSON] = card.usbPlayback.sorted { $0.key < $1.key }.map { (device: Int, format: USBPlaybackFormat) -> JSON in
            let altset: JSON = format.altset.map { JSON.integer(Int64($0)) } ?? .null
            let map: JSON = format.channelMap.map(JSON.string) ?? .null
            return JSON.object([
                JSON.Member("device", .integer(Int64(device))), JSON.Member("channels", .integer(Int64(format.channels))),
                JSON.Member("altset", altset), JSON.Member("channelMap", map),
            ])
        }
        var members = [
            JSON.Member("card", .string(card.sysname)), JSON.Member("syspath", .string(card.syspath)),
            JSON.Member("id", card.attributes["id"].map(JSON.string) ?? .null), JSON.Member("info", info), JSON.Member("pcms", .array(pcms)),
            JSON.Member("hdaPins", .array(pins)), JSON.Member("phantomJacks", .array(card.phantomJacks.map(JSON.string))),
            JSON.Member("usbPlayback", .array(usbPlayback)), JSON.Member("jacks", .array(jackList)),
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

    /// Writes `ports`' listing (`listing`).
    static func list(_ ports: [(port: Port, availability: Port.Availability?)], selected: [String: String] = [:], json: Bool) {
        var out = OutputBuffer()
        for line in listing(ports, selected: selected, json: json) {
            if json { out.append(line) } else { out.appendText(line) }
        }
        out.flush()
    }

    /// Each port's first data source, by uid: what a port uses where no session prefers another.
    static func firstDataSources(_ ports: [Port]) -> [String: String] {
        var first: [String: String] = [:]
        for port in ports { if let source = port.dataSources.first { first[port.uid] = source.id } }
        return first
    }

    /// `ports`' listing: a line per port ending in its availability, then a line per data source
    /// (the one in use, from `selected` by port uid, marked `*`); or with `json` an array whose
    /// objects end in `availability` (and, for a port with data sources, `selectedDataSource`);
    /// nil where it is not known (null in JSON, left out of the line).
    static func listing(_ ports: [(port: Port, availability: Port.Availability?)], selected: [String: String] = [:], json: Bool) -> [String] {
        if json { return [JSON.array(ports.map { Self.json($0.port, availability: $0.availability, selected: selected[$0.port.uid]) }).text] }
        if ports.isEmpty { return ["no ports"] }
        return ports.flatMap { port, availability in
            [line(port) + (availability.map { " availability=\($0.rawValue)" } ?? "")]
                + port.dataSources.map { dataSourceLine($0, selected: $0.id == selected[port.uid]) }
        }
    }

    /// `  * data source Mic1 "Internal Mic" alsa=…`: `*` marks the one in use.
    static func dataSourceLine(_ source: DataSource, selected: Bool) -> String {
        let alsa = source.alsa.map { " alsa=\($0)" } ?? ""
        return "  \(selected ? "*" : " ") data source \(source.id) \"\(source.name)\"\(alsa)"
    }

    /// A port of the listing as JSON: `Port.json`'s members (`dataSources` for a port that has
    /// them), then `availability` (null: not known), then for a port with data sources
    /// `selectedDataSource` (its id, null when none is in use).
    static func json(_ port: Port, availability: Port.Availability?, selected: String? = nil) -> JSON {
        guard case .object(var members) = port.json(withAvailability: false) else { return port.json }
        members.append(JSON.Member("availability", availability.map { .string($0.rawValue) } ?? .null))
        if !port.dataSources.isEmpty { members.append(JSON.Member("selectedDataSource", selected.map(JSON.string) ?? .null)) }
        return .object(members)
    }
}
