// audioroute-pipewire: the PipeWire helper (docs/daemon.md, "The PipeWire helper"). audiorouted
// starts it while the user's sound server is PipeWire, so that the daemon never links
// libpipewire (about 4 MiB of RSS: docs/decisions.md, "Sound servers"). It says hello and every
// audio node and ALSA card (with its profiles) added, changed and removed, and sets the server's
// default sink and source and a card's profile when asked, and pauses, starts and sets the volume of a client's stream; one JSON object per line on stdin/stdout. It exits 0 when stdin ends, 69 (EX_UNAVAILABLE) when the
// server goes or cannot be reached (after an error line), 74 (EX_IOERR) when stdin or poll fails, 64 on a
// usage error. One thread, one poll(2) on stdin and
// the client's loop.
import AudioRouteCore
import AudioRoutePipeWire
import AudioRouteSystem
import AudioRouteVersion
import Logging

let usage = """
    usage: audioroute-pipewire [--log-level LEVEL] | --version
      connects to the user's PipeWire (PIPEWIRE_REMOTE, else pipewire-0 in XDG_RUNTIME_DIR) and
      serves the lines on stdin (docs/daemon.md, "The PipeWire helper")
      --log-level LEVEL  trace, debug, info, notice, warning (default), error, critical
    """

func send(_ json: JSON) {
    var line = json.bytes
    line.append(UInt8(ascii: "\n"))
    StandardStream.output.write(line)
}

/// The log level from the command line, or the usage fault (empty for --help).
func parse(_ arguments: [String]) -> Result<Logger.Level, UsageFault> {
    var level = Logger.Level.warning
    var rest = arguments[...]
    while let argument = rest.popFirst() {
        let equals = argument.firstIndex(of: "=")
        let name = equals.map { String(argument[..<$0]) } ?? argument
        guard name == "--log-level" else { return .failure(UsageFault(argument == "--help" || argument == "-h" ? "" : "unknown argument \"\(argument)\"")) }
        guard let value = equals.map({ String(argument[argument.index(after: $0)...]) }) ?? rest.popFirst() else { return .failure(UsageFault("--log-level needs a value")) }
        guard let parsed = Logger.Level(rawValue: value) else { return .failure(UsageFault("unknown log level \"\(value)\"")) }
        level = parsed
    }
    return .success(level)
}

struct UsageFault: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// One line from the daemon: a request carried out, or its fault named.
func handle(_ line: UCMLineSplitter.Line, client: PipeWireClient, logger: Logger) {
    guard case .line(let bytes) = line else {
        send(PipeWireHelperProtocol.line(.error("line over \(UCMLineSplitter.maximumLineLength) bytes, discarded")))
        return
    }
    switch PipeWireHelperProtocol.request(bytes) {
    case .failure(let error):
        logger.warning("refused", metadata: ["error": "\(error)"])
        send(PipeWireHelperProtocol.line(.error(error.description)))
    case .success(.defaults(let defaults)):
        logger.info("setting the defaults", metadata: ["defaults": "\(defaults)"])
        client.setDefaults(defaults)
    case .success(.stream(let control)):
        logger.info("controlling a stream", metadata: ["node": "\(control.id)", "control": "\(control)"])
        client.control(control)
    case .success(.profile(let request)):
        logger.info("setting a card's profile", metadata: ["request": "\(request)"])
        client.setProfile(request)
    }
}

/// Connects, then serves stdin and the server until either ends; the exit status.
func serve(logger: Logger) -> Int32 {
    let client = PipeWireClient()
    client.onEvent = { send(PipeWireHelperProtocol.line($0)) }
    client.onNotice = { logger.notice("\($0)") }
    do throws(PipeWireError) {
        try client.connect()
    } catch {
        send(PipeWireHelperProtocol.line(.error("cannot connect to PipeWire: \(error)")))
        return ExitStatus.unavailable
    }
    defer { client.close() }
    var lines = UCMLineSplitter()
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        if let reason = client.disconnected {
            send(PipeWireHelperProtocol.line(.error("disconnected: \(reason)")))
            return ExitStatus.unavailable
        }
        var descriptors = [PollDescriptor(fd: StandardStream.input.rawValue, events: .readable), PollDescriptor(fd: client.descriptor, events: .readable)]
        do throws(Errno) {
            try Poll.wait(&descriptors, timeoutMilliseconds: -1)
        } catch {
            logger.critical("poll failed", metadata: ["error": "\(error)"])
            return ExitStatus.ioError
        }
        if !descriptors[1].returned.isEmpty { client.dispatch() }
        guard !descriptors[0].returned.isEmpty else { continue }
        let read = chunk.withUnsafeMutableBytes { buffer in
            StandardStream.input.withDescriptor { input in Result { () throws(Errno) in try input.read(into: buffer) } }
        }
        guard case .success(let count) = read else {
            logger.error("stdin failed", metadata: ["error": "\(read)"])
            return ExitStatus.ioError
        }
        if count == 0 {
            if let last = lines.finish() { handle(last, client: client, logger: logger) }
            // What was asked is answered before leaving: the server's round trip, 2 s at most.
            let deadline = MonotonicClock.milliseconds() + 2000
            while client.waiting && client.disconnected == nil && MonotonicClock.milliseconds() < deadline {
                var server = [PollDescriptor(fd: client.descriptor, events: .readable)]
                if (try? Poll.wait(&server, timeoutMilliseconds: 100)) ?? 0 > 0 { client.dispatch() }
            }
            return 0
        }
        for line in lines.feed(chunk[..<count]) { handle(line, client: client, logger: logger) }
    }
}

// --version alone: the version and the git commit it was built from.
if CommandLine.arguments.dropFirst() == ["--version"] {
    print("audioroute-pipewire " + AudioRouteVersion.text)
    CurrentProcess.exit(0)
}
// A daemon gone makes writes fail (EPIPE) instead of killing the helper; stdin's end follows.
ProcessSignal.pipe.ignore()
switch parse(Array(CommandLine.arguments.dropFirst())) {
case .failure(let fault):
    StandardStream.error.write(fault.message.isEmpty ? usage + "\n" : "audioroute-pipewire: \(fault.message)\n\(usage)\n")
    CurrentProcess.exit(fault.message.isEmpty ? 0 : ExitStatus.usage)
case .success(let level):
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
    CurrentProcess.exit(serve(logger: Logger(label: "audioroute-pipewire")))
}
