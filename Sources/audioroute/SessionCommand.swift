import ArgumentParser
import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import AudioSession
import Dispatch
import Glibc

/// Category, mode and options of a session held by the CLI.
struct SessionOptions: ParsableArguments {
    @Option(help: "The session's category (ambient, soloAmbient, playback, record, playAndRecord, multiRoute).")
    var category: String

    @Option(help: "The session's mode.")
    var mode: String = "default"

    @Option(name: .customLong("options"), help: "Category options, comma-separated (e.g. mixWithOthers,duckOthers).")
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

    @OptionGroup var daemon: DaemonOptions
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
        Logging.bootstrap(level: .warning)
        let audio = daemon.session(app: session.app)
        let category = Category(rawValue: session.category)!
        let mode = Mode(rawValue: session.mode)!
        let options = try session.parsedOptions()
        try await withDaemon { () throws(AudioSessionError) in
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

    @OptionGroup var daemon: DaemonOptions

    @Argument(help: "speaker or none.")
    var choice: Choice

    @Option(help: "The session's category.")
    var category: String = "playAndRecord"

    @Option(help: "The session's mode.")
    var mode: String = "default"

    @Argument(parsing: .postTerminator, help: "A command to run while the override holds, after --.")
    var command: [String] = []

    func validate() throws {
        guard Category(rawValue: category) != nil else { throw ValidationError("unknown category \"\(category)\"") }
        guard Mode(rawValue: mode) != nil else { throw ValidationError("unknown mode \"\(mode)\"") }
    }

    func run() async throws {
        Logging.bootstrap(level: .warning)
        let audio = daemon.session(app: "audioroute-override")
        try await withDaemon { () throws(AudioSessionError) in
            try await audio.setCategory(Category(rawValue: category)!, mode: Mode(rawValue: mode)!)
            try await audio.setActive(true)
            try await audio.overrideOutputAudioPort(choice == .speaker ? .speaker : .none)
            let route = try await audio.currentRoute
            var out = OutputBuffer(fd: 1)
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
    /// the session with its category), activate it again and re-apply `override`, as an app would.
    static func run(_ audio: AudioSession, command: [String], reactivate: Bool, override: OutputOverride = .none) async -> Int32 {
        let notifications = await audio.notifications
        let events = Task {
            for await event in notifications {
                report(event)
                guard reactivate, event == .mediaServicesWereReset else { continue }
                do {
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
            let watch = SignalForward(signals: [SIGINT, SIGTERM]) { number in once.resume(128 + number) }
            once.keep(watch)
        }
    }

    /// Spawns `command` (searched in PATH) with our standard streams, passes SIGINT/SIGTERM
    /// on, and returns its exit status (128+N for a signal).
    static func runChild(_ command: [String]) async -> Int32 {
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        // Signals we ignore or catch must reach the child as defaults.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // The child starts with no signal blocked, whatever the spawning thread blocks.
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        // Ignored from before the spawn until the forwarder takes over, so that a Ctrl-C in
        // between cannot kill us and leave the child running with the session gone.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let spawned = posix_spawnp(&pid, command[0], nil, &attributes, argv, environ)
        guard spawned == 0 else {
            Terminal.error("cannot run \(command[0]): \(String(cString: strerror(spawned)))")
            return 127
        }
        let child = pid
        let forward = SignalForward(signals: [SIGINT, SIGTERM]) { number in kill(child, number) }
        let status = await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            DispatchQueue.global().async {
                var raw: Int32 = 0
                while waitpid(child, &raw, 0) < 0 && errno == EINTR {}
                continuation.resume(returning: (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f))
            }
        }
        forward.cancel()
        return status
    }
}

/// SIGINT/SIGTERM as calls with the signal number (dispatch sources, not handlers).
/// Resumes a continuation once, keeping what must live until then.
final class Once: @unchecked Sendable {
    private var continuation: CheckedContinuation<Int32, Never>?
    private var kept: AnyObject?
    private let lock = PthreadLock()

    init(_ continuation: CheckedContinuation<Int32, Never>) { self.continuation = continuation }

    func keep(_ object: AnyObject) { lock.locked { kept = object } }

    func resume(_ value: Int32) {
        lock.locked {
            continuation?.resume(returning: value)
            continuation = nil
            (kept as? SignalForward)?.cancel()
            kept = nil
        }
    }
}

/// A pthread mutex.
final class PthreadLock: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }
    func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body()
    }
}
