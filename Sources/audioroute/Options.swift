import ArgumentParser
import AudioRouteCore
import AudioRouteSystem
import AudioRouteWatchers
import AudioSession
import Logging
import AudioRouteUCMHelper

/// Options shared by the commands that read hardware.
struct HardwareOptions: ParsableArguments {
    @Flag(help: "Run the hardware watchers in this process instead of asking the daemon.")
    var direct = false

    @Flag(help: "Print JSON (one document, or one object per line for streams).")
    var json = false

    @Option(name: .long, help: "Log level on standard error: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "warning"

    @Option(name: .customLong("ucm-helper"), help: ArgumentHelp(
        "With --direct or --alsa-info: the UCM helper that reads each card's ALSA UCM profile, or none for the classification only.",
        discussion: "Default: audioroute-ucm beside this program, else from PATH, as audiorouted does.", valueName: "path"))
    var ucmHelper: String?

    @Option(name: .customLong("ucm-root"), help: ArgumentHelp(
        "With --direct or --alsa-info: the ALSA UCM2 configurations to look up (ALSA_CONFIG_UCM2).", valueName: "dir"))
    var ucmRoot: String?

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown log level \"\(logLevel)\"") }
        if ucmHelper?.isEmpty == true { throw ValidationError("--ucm-helper needs a path, or none") }
    }

    /// The UCM helper's path, as the daemon finds its own (docs/ucm.md): `--ucm-helper`, else
    /// `audioroute-ucm` beside this program, else from PATH; nil with `--ucm-helper none`.
    func ucmHelperPath() -> String? {
        UCMHelpers.executable(option: ucmHelper, beside: CurrentProcess.executableDirectory())
    }

    /// The UCM helper for `--direct`; nil with `--ucm-helper none`.
    func ucmHelpers() -> UCMHelpers? {
        ucmHelperPath().map { UCMHelpers(executable: $0, ucmRoot: ucmRoot, logger: Logger(label: "audioroute.ucm")) }
    }

    /// Sends swift-log output to standard error at the chosen level.
    func bootstrapLogging() { LogOptions.bootstrap(level: Logger.Level(rawValue: logLevel) ?? .warning) }
}

/// Where the daemon is: shared by every command that talks to audiorouted.
struct BusOptions: ParsableArguments {
    @Flag(help: "Talk to a daemon on the system bus (audiorouted --system) instead of the session bus (the default unless AUDIOROUTE_BUS=system).")
    var system = false

    @Option(name: .customLong("bus-address"), help: "Talk to the daemon on this D-Bus address (unix:path=...).")
    var busAddress: String?

    /// `AUDIOROUTE_BUS`: the bus used without --system or --bus-address, for a machine whose
    /// daemon is the system instance (a kiosk, a car): `system` or `session`.
    static let environmentVariable = "AUDIOROUTE_BUS"

    /// The bus `AUDIOROUTE_BUS` names, or the fault of its value (nil: unset or empty).
    static func environmentBus(_ environment: [String: String]) -> Result<AudioSession.Bus, ValidationError>? {
        guard let value = environment[environmentVariable], !value.isEmpty else { return nil }
        switch value {
        case "system": return .success(.system)
        case "session": return .success(.session)
        default: return .failure(ValidationError(Suggestion.unknown("bus in \(environmentVariable)", value, among: ["system", "session"])))
        }
    }

    func validate() throws {
        if case .failure(let fault)? = Self.environmentBus(Environment.variables) { throw fault }
    }

    var bus: AudioSession.Bus {
        if let busAddress { return .address(busAddress) }
        if system { return .system }
        if case .success(let bus)? = Self.environmentBus(Environment.variables) { return bus }
        return .session
    }

    /// How to start the daemon this command talks to: the unit of the bus's instance.
    var startHint: String {
        switch bus {
        case .system: "start the system instance (systemctl start audiorouted-system)"
        case .session: "start audiorouted (systemctl --user start audiorouted)"
        default: "start audiorouted on that bus"
        }
    }

    /// A session object on the chosen bus (nothing is opened until it is used).
    func session(app: String = "audioroute") -> AudioSession { AudioSession(bus: bus, appName: app) }
}

/// swift-log's output for the CLI: standard error, at one level. (Not named `Logging`: that
/// would shadow swift-log's module.)
enum LogOptions {
    static func bootstrap(level: Logger.Level) {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}

/// Runs a daemon command; a refused or failed call becomes a message and exit status 1, an
/// unreachable daemon 69 (EX_UNAVAILABLE).
/// `direct`: the command that has a --direct form, named in the message when the daemon is unreachable.
func withDaemon(_ daemon: BusOptions, direct: String? = nil, _ body: () async throws(AudioSessionError) -> Void) async throws {
    do {
        try await body()
    } catch {
        switch error {
        case .daemonUnavailable:
            let hint = "; " + daemon.startHint + (direct.map { ", or use `audioroute \($0) --direct` to read the hardware in this process" } ?? "")
            Terminal.error("\(error)\(hint)")
            throw ExitCode(ExitStatus.unavailable)
        default:
            Terminal.error("\(error)")
        }
        throw ExitCode(1)
    }
}

/// Checks a session's category, mode and options given as text on the command
/// line, by name, and returns the options.
func checkedSessionRequest(category: String, mode: String, options: String) throws -> CategoryOptions {
    guard Category(rawValue: category) != nil else { throw ValidationError(Suggestion.unknown("category", category, among: Category.allCases.map(\.rawValue))) }
    guard Mode(rawValue: mode) != nil else { throw ValidationError(Suggestion.unknown("mode", mode, among: Mode.allCases.map(\.rawValue))) }
    var result: CategoryOptions = []
    for name in options.split(separator: ",") {
        let trimmed = String(name).filter { $0 != " " }
        guard let option = CategoryOptions(name: trimmed) else {
            throw ValidationError(Suggestion.unknown("category option", trimmed, among: CategoryOptions.named.map(\.name)))
        }
        result.formUnion(option)
    }
    return result
}

/// What the shell completes for the session's names (`--generate-completion-script`).
enum Completions {
    static let categories = CompletionKind.list(Category.allCases.map(\.rawValue))
    static let modes = CompletionKind.list(Mode.allCases.map(\.rawValue))
    static let options = CompletionKind.list(CategoryOptions.named.map(\.name))
    /// The running daemon's ports (nothing when it cannot be reached: the shell then offers none).
    static let portUIDs = CompletionKind.shellCommand("audioroute ports --uids 2>/dev/null")
}
