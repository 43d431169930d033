import ArgumentParser
import Logging

/// Options shared by the commands that read hardware.
struct HardwareOptions: ParsableArguments {
    @Flag(help: "Run the hardware watchers in this process instead of asking the daemon.")
    var direct = false

    @Flag(help: "Print JSON (one document, or one object per line for streams).")
    var json = false

    @Option(name: .long, help: "Log level on standard error: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "warning"

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown log level \"\(logLevel)\"") }
    }

    /// Refuses to go on without --direct: there is no daemon to ask yet.
    func requireDirect(_ command: String) throws {
        guard direct else {
            Terminal.error("audiorouted is not available yet: use `audioroute \(command) --direct` to read the hardware in this process")
            throw ExitCode(2)
        }
    }

    /// Sends swift-log output to standard error at the chosen level.
    func bootstrapLogging() {
        let level = Logger.Level(rawValue: logLevel) ?? .warning
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
