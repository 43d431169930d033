import ArgumentParser
import AudioRouteCore
import AudioRouteSystem
import AudioSession
import Synchronization

/// Category, mode and options of a session held by the CLI.
struct SessionOptions: ParsableArguments {
    @Option(help: "The session's category (ambient, soloAmbient, playback, record, playAndRecord, multiRoute).", completion: Completions.categories)
    var category: String

    @Option(help: "The session's mode.", completion: Completions.modes)
    var mode: String = "default"

    @Option(name: .customLong("options"), help: "Category options, comma-separated (e.g. mixWithOthers,duckOthers).", completion: Completions.options)
    var categoryOptions: String = ""

    @Option(help: "The app name the session is opened under (its remembered preferred input comes back).")
    var app: String = "audioroute-session"

    func validate() throws { _ = try parsedOptions() }

    func parsedOptions() throws -> CategoryOptions {
        try checkedSessionRequest(category: category, mode: mode, options: categoryOptions)
    }
}

/// `audioroute session --category C [--mode M] [--options ...] [--activate] -- CMD...`
struct SessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Hold an audio session while a command runs, so shell scripts take part in arbitration.",
        discussion: """
            Opens a session on audiorouted with the category, mode and options, activates it with \
            --activate, runs CMD, then deactivates it with notifyOthersOnDeactivation and closes it. \
            SIGINT and SIGTERM are passed on to CMD. The exit status is CMD's (128+N if a signal N \
            ended it); 1 if the daemon refused or could not be reached (CMD is then not run). \
            Interruptions and other session events are reported on standard error.
            """
    )

    @OptionGroup var daemon: BusOptions
    @OptionGroup var session: SessionOptions

    @Flag(help: "Activate the session before running the command.")
    var activate = false

    @Option(name: .customLong("prefer-input"), help: "Prefer this input uid while the session runs.")
    var preferInput: String?

    @Argument(parsing: .postTerminator, help: "The command to run, after --.")
    var command: [String] = []

    func validate() throws {
        guard !command.isEmpty else { throw ValidationError("no command given: audioroute session --category C -- CMD...") }
    }

    func run() async throws {
        LogOptions.bootstrap(level: .warning)
        let audio = daemon.session(app: session.app)
        let category = Category(rawValue: session.category)!
        let mode = Mode(rawValue: session.mode)!
        let options = try session.parsedOptions()
        try await withDaemon(daemon) { () throws(AudioSessionError) in
            try await audio.setCategory(category, mode: mode, options: options)
            if let preferInput { try await audio.setPreferredInput(uid: preferInput) }
            if activate { try await audio.setActive(true) }
        }
        let status = await HeldSession.run(audio, command: command, reactivate: activate)
        throw ExitCode(status)
    }
}

/// `audioroute override speaker|none [--category ...] [-- CMD...]`
struct Override: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Override the output to the built-in speaker, for as long as this command runs.",
        discussion: """
            An output override belongs to a session (AVAudioSession.overrideOutputAudioPort) and ends \
            with it. So this opens a session (playAndRecord by default: the only category that accepts \
            the speaker override), activates it so that it controls the route, applies the override, \
            prints the route, and holds the session until CMD exits or, without CMD, until SIGINT or \
            SIGTERM. A port arrival or removal clears the override, as on iOS.
            """
    )

    enum Choice: String, ExpressibleByArgument, CaseIterable { case speaker, none }

    @OptionGroup var daemon: BusOptions

    @Argument(help: "speaker or none.")
    var choice: Choice

    @Option(help: "The session's category.", completion: Completions.categories)
    var category: String = "playAndRecord"

    @Option(help: "The session's mode.", completion: Completions.modes)
    var mode: String = "default"

    @Argument(parsing: .postTerminator, help: "A command to run while the override holds, after --.")
    var command: [String] = []

    func validate() throws {
        guard Category(rawValue: category) != nil else { throw ValidationError(Suggestion.unknown("category", category, among: Category.allCases.map(\.rawValue))) }
        guard Mode(rawValue: mode) != nil else { throw ValidationError(Suggestion.unknown("mode", mode, among: Mode.allCases.map(\.rawValue))) }
    }

    func run() async throws {
        LogOptions.bootstrap(level: .warning)
        let audio = daemon.session(app: "audioroute-override")
        try await withDaemon(daemon) { () throws(AudioSessionError) in
            try await audio.setCategory(Category(rawValue: category)!, mode: Mode(rawValue: mode)!)
            try await audio.setActive(true)
            try await audio.overrideOutputAudioPort(choice == .speaker ? .speaker : .none)
            let route = try await audio.currentRoute
            var out = OutputBuffer()
            out.append("route: outputs \(DaemonText.routeSide(route.outputs)); inputs \(DaemonText.routeSide(route.inputs))")
            out.flush()
        }
        let status = await HeldSession.run(audio, command: command, reactivate: true, override: choice == .speaker ? .speaker : .none)
        throw ExitCode(status)
    }
}

/// Runs a command (or waits for a signal) while a session is held, then releases it.
enum HeldSession {
    /// `reactivate`: after the daemon restarts (mediaServicesWereReset, the library has re-opened
    /// the session with its category), activate it again and re-apply `override` and the
    /// preferred `dataSource` (a port's uid and a data source's id), as an app would.
    static func run(
        _ audio: AudioSession, command: [String], reactivate: Bool, override: OutputOverride = .none,
        dataSource: (port: String, id: String?)? = nil
    ) async -> Int32 {
        let notifications = await audio.notifications
        let events = Task {
            for await event in notifications {
                report(event)
                guard reactivate, event == .mediaServicesWereReset else { continue }
                do {
                    if let dataSource { try await audio.setPreferredDataSource(id: dataSource.id, port: dataSource.port) }
                    try await audio.setActive(true)
                    if override != .none { try await audio.overrideOutputAudioPort(override) }
                } catch {
                    Terminal.warning("could not reactivate the session after audiorouted came back: \(error)")
                }
            }
        }
        defer { events.cancel() }
        let status: Int32
        if command.isEmpty {
            status = await waitForSignal()
        } else {
            status = await runChild(command)
        }
        do {
            try await audio.setActive(false, options: .notifyOthersOnDeactivation)
        } catch {
            if case .daemonUnavailable = error {} else { Terminal.warning("deactivating the session: \(error)") }
        }
        await audio.close()
        return status
    }

    static func report(_ event: AudioSessionNotification) {
        switch event {
        case .interruption(let info):
            var text = "interruption \(info.type.rawValue)"
            if let reason = info.reason { text += " (\(reason.rawValue))" }
            if info.options.contains(.shouldResume) { text += " shouldResume" }
            Terminal.note(text)
        case .ducked: Terminal.note("ducked")
        case .unducked: Terminal.note("unducked")
        case .mediaServicesWereLost: Terminal.note("audiorouted went away (mediaServicesWereLost)")
        case .mediaServicesWereReset: Terminal.note("audiorouted is back; the session was re-opened inactive (mediaServicesWereReset)")
        default: break
        }
    }

    /// Waits for SIGINT or SIGTERM; 128+N.
    static func waitForSignal() async -> Int32 {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let once = Once(continuation)
            let watch = SignalForward([.interrupt, .terminate]) { number in once.resume(128 + number) }
            once.keep(watch)
        }
    }

    /// Spawns `command` (searched in PATH) with our standard streams and descriptors, passes
    /// SIGINT/SIGTERM on, and returns its exit status (128+N for a signal).
    static func runChild(_ command: [String]) async -> Int32 {
        // Signals we ignore or catch must reach the child as defaults.
        var options = SpawnOptions()
        options.defaultSignals = [.interrupt, .terminate]
        // The command is the user's: it inherits what our caller gave us.
        options.closeOtherDescriptors = false
        // Caught from before the spawn, so that a Ctrl-C in between cannot kill us and leave the
        // child running with the session gone; one that comes before the child exists is passed
        // on as soon as it does. (Ignoring them in that window lost a SIGTERM under load: the
        // child slept on and DaemonHotplugTests' `twoClientsSeeTheHeadsetArrive` waited in vain.)
        let target = Mutex<ForwardTarget>(ForwardTarget())
        let forward = SignalForward([.interrupt, .terminate]) { number in
            let child = target.withLock { state -> SpawnedProcess? in
                if state.child == nil { state.pending.append(number) }
                return state.child
            }
            child?.send(ProcessSignal(rawValue: number))
        }
        defer { forward.cancel() }
        let child: SpawnedProcess
        do throws(Errno) {
            child = try SpawnedProcess.spawn(command, options)
        } catch {
            Terminal.error("cannot run \(command[0]): \(error.code)")
            return 127
        }
        let pending = target.withLock { state -> [Int32] in
            state.child = child
            defer { state.pending = [] }
            return state.pending
        }
        for number in pending { child.send(ProcessSignal(rawValue: number)) }
        return (try? await child.termination().shellStatus) ?? 1
    }

    /// Where `runChild`'s forwarder sends a signal: the child once it exists, else kept for it.
    struct ForwardTarget: Sendable {
        var child: SpawnedProcess?
        var pending: [Int32] = []
    }
}

/// Resumes a continuation once, keeping what must live until then (the signal forward).
final class Once: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Int32, Never>?
        var kept: SignalForward?
    }

    private let state: Mutex<State>

    init(_ continuation: CheckedContinuation<Int32, Never>) { state = Mutex(State(continuation: continuation)) }

    func keep(_ forward: SignalForward) { state.withLock { $0.kept = forward } }

    func resume(_ value: Int32) {
        state.withLock { state in
            state.continuation?.resume(returning: value)
            state.continuation = nil
            state.kept?.cancel()
            state.kept = nil
        }
    }
}
