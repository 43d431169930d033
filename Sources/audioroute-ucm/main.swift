// audioroute-ucm: one UCM card's helper (docs/ucm.md, "The helper's protocol"). audiorouted
// starts one per UCM card and speaks to it on stdin/stdout, one JSON object per line, so
// that the daemon never loads libasound. It says hello (the card's verbs, ports and jacks),
// then applies the verb and devices each request asks for and reports jack changes; it
// exits 0 when stdin ends. One thread, one poll(2) on stdin and the card's control.
import AudioRouteALSA
import AudioRouteCore
import AudioRouteSystem
import Logging

let usage = """
    usage: audioroute-ucm --card NAME [--log-level LEVEL]
      --card NAME        the card as snd_use_case_mgr_open takes it ("hw:PinePhone")
      --log-level LEVEL  trace, debug, info, notice, warning (default), error, critical
    """

/// A bad command line; empty for --help.
struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

struct Options {
    var card = ""
    var logLevel = Logger.Level.warning

    static func parse(_ arguments: [String]) -> Result<Options, UsageError> {
        var options = Options()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            let (name, inline) = argument.split(separator: "=", maxSplits: 1).map(String.init).splitFirst
            guard name == "--card" || name == "--log-level" else {
                return .failure(UsageError(argument == "--help" || argument == "-h" ? "" : "unknown argument \"\(argument)\""))
            }
            guard let value = inline ?? rest.popFirst() else { return .failure(UsageError("\(name) needs a value")) }
            if name == "--card" {
                options.card = value
            } else if let level = Logger.Level(rawValue: value) {
                options.logLevel = level
            } else {
                return .failure(UsageError("unknown log level \"\(value)\""))
            }
        }
        return options.card.isEmpty ? .failure(UsageError("--card is required")) : .success(options)
    }
}

extension Array where Element == String {
    fileprivate var splitFirst: (String, String?) { (self[0], count > 1 ? self[1] : nil) }
}

func send(_ json: JSON) {
    var line = json.bytes
    line.append(UInt8(ascii: "\n"))
    StandardStream.output.write(line)
}

/// The control device that holds the card's jacks: the card's own name when it names a
/// control ("hw:PinePhone"), else "hw:<name>".
func controlName(card: String) -> String { card.contains(":") ? card : "hw:" + card }

/// Says hello, then serves requests and jack events until stdin ends; the exit status.
func serve(card: String, logger: Logger) -> Int32 {
    var manager: UCMManager
    do throws(ALSAError) {
        manager = try UCMManager(card: card)
    } catch {
        send(UCMHelperProtocol.error("no UCM configuration for card \(card): \(error)"))
        return 1
    }
    let configuration: UCMConfiguration
    do throws(ALSAError) {
        configuration = try UCMReader.read(manager)
    } catch {
        send(UCMHelperProtocol.error("cannot read the UCM configuration of card \(card): \(error)"))
        return 1
    }
    let ports = UCMHelperProtocol.ports(configuration)
    let jackNames = UCMHelperProtocol.jackControls(ports)
    var jacks: UCMJackMonitor?
    if !jackNames.isEmpty {
        do throws(ALSAError) {
            jacks = try UCMJackMonitor(controlName: controlName(card: card), jacks: jackNames)
        } catch {
            logger.warning("jack controls not read", metadata: ["card": "\(card)", "error": "\(error)"])
        }
    }
    for (jack, error) in jacks?.failures ?? [:] {
        logger.warning("jack control not read", metadata: ["jack": "\(jack)", "error": "\(error)"])
    }
    send(UCMHelperProtocol.hello(configuration, ports: ports, jacks: jacks?.values ?? [:]))

    var descriptors = [PollDescriptor(fd: StandardStream.input.rawValue, events: .readable)]
    do throws(ALSAError) {
        descriptors += try jacks?.control.pollDescriptors() ?? []
    } catch {
        logger.warning("jack events not watched", metadata: ["error": "\(error)"])
    }
    var lines = UCMLineSplitter()
    var chunk = [UInt8](repeating: 0, count: 65536)
    func handle(_ line: UCMLineSplitter.Line) {
        switch line {
        case .tooLong:
            send(UCMHelperProtocol.failure("line over \(UCMLineSplitter.maximumLineLength) bytes, discarded", state: manager.state))
        case .line(let bytes):
            switch UCMHelperProtocol.request(bytes) {
            case .failure(let error):
                send(UCMHelperProtocol.failure(error.description, state: manager.state))
            case .success(let target):
                do throws(UCMApplyError) {
                    let steps = try manager.apply(target)
                    logger.info("applied", metadata: ["state": "\(manager.state)", "steps": "\(steps)"])
                    send(UCMHelperProtocol.reply(manager.state, steps: steps))
                } catch {
                    // A refused request is the daemon's fault; a failed step, the card's.
                    if case .stepFailed = error {
                        logger.error("not applied", metadata: ["target": "\(target)", "error": "\(error)"])
                    } else {
                        logger.warning("refused", metadata: ["target": "\(target)", "error": "\(error)"])
                    }
                    send(UCMHelperProtocol.failure(error.description, state: manager.state))
                }
            }
        }
    }
    while true {
        do throws(Errno) {
            try Poll.wait(&descriptors, timeoutMilliseconds: -1)
        } catch {
            logger.critical("poll failed", metadata: ["error": "\(error)"])
            return 1
        }
        if descriptors.dropFirst().contains(where: { !$0.returned.isEmpty }), jacks != nil {
            do throws(ALSAError) {
                for (jack, plugged) in try jacks!.changes() { send(UCMHelperProtocol.jack(jack, plugged: plugged)) }
            } catch {
                // A control that fails to read stays failing: stop watching it rather than spin.
                logger.error("jack events stopped", metadata: ["error": "\(error)"])
                descriptors.removeLast(descriptors.count - 1)
            }
        }
        guard !descriptors[0].returned.isEmpty else { continue }
        let read = chunk.withUnsafeMutableBytes { buffer in
            StandardStream.input.withDescriptor { input in Result { () throws(Errno) in try input.read(into: buffer) } }
        }
        guard case .success(let count) = read else {
            logger.error("stdin failed", metadata: ["error": "\(read)"])
            return 1
        }
        if count == 0 {
            if let last = lines.finish() { handle(last) }
            return 0
        }
        for line in lines.feed(chunk[..<count]) { handle(line) }
    }
}

// A daemon that went away closes our stdout: the write fails (EPIPE) instead of killing
// the helper, which then sees stdin end and exits 0.
ProcessSignal.pipe.ignore()
switch Options.parse(Array(CommandLine.arguments.dropFirst())) {
case .failure(let error):
    StandardStream.error.write(error.message.isEmpty ? usage + "\n" : "audioroute-ucm: \(error.message)\n\(usage)\n")
    CurrentProcess.exit(error.message.isEmpty ? 0 : 2)
case .success(let options):
    let level = options.logLevel
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
    CurrentProcess.exit(serve(card: options.card, logger: Logger(label: "audioroute-ucm")))
}
