// audioroute-ucm: the UCM helper (docs/ucm.md, "The helper's protocol"). audiorouted starts
// one for every card it asks about, and speaks to it on stdin/stdout, one JSON object per
// line, so that the daemon never loads libasound. For each card it is asked to open it says
// hello (the card's verbs, ports and jacks) or why not, then applies the verb and devices each
// request asks for and reports jack changes; it exits 0 when stdin ends. One thread, one
// poll(2) on stdin and the open cards' controls.
import AudioRouteALSA
import AudioRouteCore
import AudioRouteSystem
import AudioRouteVersion
import Logging

let usage = """
    usage: audioroute-ucm [--card NAME]... [--log-level LEVEL] | --version
      --card NAME        open this card at start, as an {"open": NAME} line would ("hw:PinePhone",
                         as snd_use_case_mgr_open takes it); then serves the lines on stdin
      --log-level LEVEL  trace, debug, info, notice, warning (default), error, critical
    """

/// A bad command line; empty for --help.
struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

struct Options {
    var cards: [String] = []
    var logLevel = Logger.Level.warning

    static func parse(_ arguments: [String]) -> Result<Options, UsageError> {
        var options = Options()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            // "--card=hw:0" or "--card hw:0"; an empty argument or a bare "=" is simply unknown.
            let equals = argument.firstIndex(of: "=")
            let name = equals.map { String(argument[..<$0]) } ?? argument
            let inline = equals.map { String(argument[argument.index(after: $0)...]) }
            guard name == "--card" || name == "--log-level" else {
                return .failure(UsageError(argument == "--help" || argument == "-h" ? "" : "unknown argument \"\(argument)\""))
            }
            guard let value = inline ?? rest.popFirst() else { return .failure(UsageError("\(name) needs a value")) }
            if name == "--card" {
                guard !value.isEmpty else { return .failure(UsageError("--card needs a card name")) }
                options.cards.append(value)
            } else if let level = Logger.Level(rawValue: value) {
                options.logLevel = level
            } else {
                return .failure(UsageError("unknown log level \"\(value)\""))
            }
        }
        return .success(options)
    }
}

func send(_ json: JSON) {
    var line = json.bytes
    line.append(UInt8(ascii: "\n"))
    StandardStream.output.write(line)
}

/// The control device that holds the card's jacks: the card's own name when it names a
/// control ("hw:PinePhone"), else "hw:<name>".
func controlName(card: String) -> String { card.contains(":") ? card : "hw:" + card }

/// One card the helper has open: its UCM manager, kept for the card's life (alsa-lib's idea
/// of which devices are on lives in it), and its jacks.
final class OpenCard {
    let name: String
    var manager: UCMManager
    var jacks: UCMJackMonitor?
    /// The jack control's poll descriptors (none when the jacks are not watched).
    var descriptors: [PollDescriptor] = []
    /// The switches that could not be turned on, logged once each: the same device fails the
    /// same way at every route to it.
    var loggedUnmuteFailures: Set<String> = []

    init(name: String, manager: consuming UCMManager) {
        self.name = name
        self.manager = manager
    }
}

/// The cards, by the name the daemon opened them with.
final class Cards {
    var open: [String: OpenCard] = [:]
    let logger: Logger

    init(logger: Logger) { self.logger = logger }

    /// Opens `card` and says its hello, or why not.
    func openCard(_ card: String) {
        if open[card] != nil {
            logger.notice("opened twice: its hello again", metadata: ["card": "\(card)"])
            open[card] = nil
        }
        var manager: UCMManager
        do throws(ALSAError) {
            manager = try UCMManager(card: card)
        } catch {
            // ENOENT: no profile for this card; ENXIO: its profile refuses it (an Error line). A
            // card that cannot be opened at all (gone half-way) fails with ENOENT too: it says
            // nothing of cards like it.
            let noProfile = [Errno.Code.noSuchFileOrDirectory, .noSuchDeviceOrAddress].contains { error.code == -$0.rawValue }
                && (try? ALSACardControl(name: controlName(card: card)).cardInfo()) != nil
            send(UCMHelperProtocol.notOpen(card: card, Self.noProfile(card, error, libasound: ALSALibraryMessages.take()), noProfile: noProfile))
            return
        }
        let configuration: UCMConfiguration
        do throws(ALSAError) {
            configuration = try UCMReader.read(manager)
        } catch {
            send(UCMHelperProtocol.notOpen(card: card, "cannot read the UCM configuration of card \(card): \(error)"))
            return
        }
        var notes: [String] = []
        let ports = UCMHelperProtocol.ports(configuration, notes: &notes)
        for note in notes { logger.notice("\(note)", metadata: ["card": "\(card)"]) }
        let entry = OpenCard(name: card, manager: manager)
        let jackNames = UCMHelperProtocol.jackControls(ports)
        if !jackNames.isEmpty {
            do throws(ALSAError) {
                entry.jacks = try UCMJackMonitor(controlName: controlName(card: card), jacks: jackNames)
                entry.descriptors = try entry.jacks?.control.pollDescriptors() ?? []
            } catch {
                logger.warning("jack controls not read", metadata: ["card": "\(card)", "error": "\(error)"])
            }
        }
        for (jack, error) in entry.jacks?.failures ?? [:] {
            logger.warning("jack control not read", metadata: ["card": "\(card)", "jack": "\(jack)", "error": "\(error)"])
        }
        open[card] = entry
        send(UCMHelperProtocol.hello(configuration, ports: ports, jacks: entry.jacks?.values ?? [:], notes: notes))
    }

    /// Why `card` has no profile, with where the stock top-level ucm.conf looks for one: the
    /// user who wants to add a profile (or a link to one) needs the card's driver and long name.
    static func noProfile(_ card: String, _ error: ALSAError, libasound: [String]) -> String {
        var message = "no UCM configuration for card \(card)"
        if let info = try? ALSACardControl(name: controlName(card: card)).cardInfo() {
            let root = Environment.variables["ALSA_CONFIG_UCM2"] ?? "/usr/share/alsa/ucm2"
            message += " (driver \"\(info.driver)\", long name \"\(info.longName)\"): "
            // alsa-lib's answers: ENOENT, no file at the lookup's paths; ENXIO, a profile that says
            // by an Error line that this card is not supported (HDA-Intel.conf, USB-Audio.conf).
            if error.code == -Errno.Code.noSuchDeviceOrAddress.rawValue {
                // The profile's own Error line says why: libasound's message before its "failed to import".
                let reason = libasound.last { !$0.contains(text: "failed to import") }.map { " (\($0))" } ?? ""
                message += "the profile at \(root)/conf.d/\(info.driver)/ does not support this card\(reason)"
            } else {
                message += "the stock lookup reads \(root)/conf.d/\(info.driver)/\(info.longName).conf, then \(root)/conf.d/\(info.driver)/\(info.driver).conf"
            }
        }
        return message + ": \(error)"
    }

    /// libasound's messages since the last look, at debug level: an open or request's own
    /// answer says what failed; these say how, for whoever asks (`--log-level debug`).
    func logLibraryMessages() {
        for message in ALSALibraryMessages.take() { logger.debug("libasound: \(message)") }
    }

    func handle(_ line: UCMLineSplitter.Line) {
        guard case .line(let bytes) = line else {
            send(UCMHelperProtocol.error("line over \(UCMLineSplitter.maximumLineLength) bytes, discarded"))
            return
        }
        switch UCMHelperProtocol.message(bytes) {
        case .failure(let error):
            logger.warning("refused", metadata: ["error": "\(error)"])
            if let card = UCMHelperProtocol.card(of: bytes), let entry = open[card] {
                send(UCMHelperProtocol.failure(card: card, error.description, state: entry.manager.state))
            } else {
                send(UCMHelperProtocol.error(error.description))
            }
        case .success(.open(let card)):
            openCard(card)
        case .success(.close(let card)):
            // Its manager closes: no sequence runs (the card is gone, or no longer ours).
            open[card] = nil
            send(UCMHelperProtocol.closed(card: card))
        case .success(.request(let card, let target)):
            guard let entry = open[card] else {
                send(UCMHelperProtocol.failure(card: card, "card \(card) is not open"))
                return
            }
            do throws(UCMApplyError) {
                let steps = try entry.manager.apply(target)
                logger.info("applied", metadata: ["card": "\(card)", "state": "\(entry.manager.state)", "steps": "\(steps)"])
                for failure in entry.manager.unmuteFailures where entry.loggedUnmuteFailures.insert(failure).inserted {
                    logger.warning("a device's switch could not be turned on", metadata: ["card": "\(card)", "error": "\(failure)"])
                }
                send(UCMHelperProtocol.reply(card: card, entry.manager.state, steps: steps))
            } catch {
                // A refused request is the daemon's fault; a failed step, the card's.
                if case .stepFailed = error {
                    logger.error("not applied", metadata: ["card": "\(card)", "target": "\(target)", "error": "\(error)"])
                } else {
                    logger.warning("refused", metadata: ["card": "\(card)", "target": "\(target)", "error": "\(error)"])
                }
                send(UCMHelperProtocol.failure(card: card, error.description, state: entry.manager.state))
            }
        }
    }

    /// Reports the jack changes of the cards whose descriptors are ready.
    func readJacks(ready: Set<String>) {
        for name in ready.sorted() {
            guard let entry = open[name], entry.jacks != nil else { continue }
            do throws(ALSAError) {
                for (jack, plugged) in try entry.jacks!.changes() { send(UCMHelperProtocol.jack(card: name, jack, plugged: plugged)) }
            } catch {
                // A control that fails to read stays failing: stop watching it rather than spin.
                logger.error("jack events stopped", metadata: ["card": "\(name)", "error": "\(error)"])
                entry.descriptors = []
            }
        }
    }
}

/// Opens the cards given on the command line, then serves stdin until it ends; the exit status.
func serve(cards initial: [String], logger: Logger) -> Int32 {
    let cards = Cards(logger: logger)
    ALSALibraryMessages.capture()
    for card in initial {
        cards.openCard(card)
        cards.logLibraryMessages()
    }
    var lines = UCMLineSplitter()
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        // stdin first, then each open card's control descriptors, in a fixed order.
        var descriptors = [PollDescriptor(fd: StandardStream.input.rawValue, events: .readable)]
        var owners: [String] = []
        for name in cards.open.keys.sorted() {
            for descriptor in cards.open[name]!.descriptors {
                descriptors.append(descriptor)
                owners.append(name)
            }
        }
        do throws(Errno) {
            try Poll.wait(&descriptors, timeoutMilliseconds: -1)
        } catch {
            logger.critical("poll failed", metadata: ["error": "\(error)"])
            return ExitStatus.ioError
        }
        let ready = Set(descriptors.dropFirst().enumerated().filter { !$0.element.returned.isEmpty }.map { owners[$0.offset] })
        if !ready.isEmpty { cards.readJacks(ready: ready) }
        guard !descriptors[0].returned.isEmpty else { continue }
        let read = chunk.withUnsafeMutableBytes { buffer in
            StandardStream.input.withDescriptor { input in Result { () throws(Errno) in try input.read(into: buffer) } }
        }
        guard case .success(let count) = read else {
            logger.error("stdin failed", metadata: ["error": "\(read)"])
            return ExitStatus.ioError
        }
        if count == 0 {
            if let last = lines.finish() { cards.handle(last) }
            return 0
        }
        for line in lines.feed(chunk[..<count]) {
            cards.handle(line)
            cards.logLibraryMessages()
        }
    }
}

// --version alone: the version and the git commit it was built from.
if CommandLine.arguments.dropFirst() == ["--version"] {
    print("audioroute-ucm " + AudioRouteVersion.text)
    CurrentProcess.exit(0)
}
// A daemon that went away closes our stdout: the write fails (EPIPE) instead of killing
// the helper, which then sees stdin end and exits 0.
ProcessSignal.pipe.ignore()
switch Options.parse(Array(CommandLine.arguments.dropFirst())) {
case .failure(let error):
    StandardStream.error.write(error.message.isEmpty ? usage + "\n" : "audioroute-ucm: \(error.message)\n\(usage)\n")
    CurrentProcess.exit(error.message.isEmpty ? 0 : ExitStatus.usage)
case .success(let options):
    let level = options.logLevel
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
    CurrentProcess.exit(serve(cards: options.cards, logger: Logger(label: "audioroute-ucm")))
}
