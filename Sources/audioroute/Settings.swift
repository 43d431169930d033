import ArgumentParser
import AudioRouteCore
import AudioSession

/// `audioroute priority UID N`: a user's priority for a port, saved by the daemon.
struct Priority: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set a port's priority (-1000...1000); the daemon saves it.",
        usage: "audioroute priority [--system] [--bus-address <bus-address>] <uid> <priority>",
        discussion: "A negative priority is written as it is: audioroute priority usb-1/output -1000.")

    @OptionGroup var daemon: BusOptions

    @Argument(help: "The port's uid (see `audioroute status`).", completion: Completions.portUIDs)
    var uid: String

    // The priority is taken from the inputs no option claims, so that a negative one
    // (`priority UID -5`) is not read as an option and needs no `--`.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The priority, -1000...1000: higher wins.", valueName: "priority"))
    var priorityText: [String] = []

    /// The priority, once `validate()` passed.
    var priority: Int { Int(priorityText.first ?? "") ?? 0 }

    func validate() throws {
        guard let text = priorityText.first else { throw ValidationError("Missing expected argument '<priority>'") }
        guard priorityText.count == 1 else { throw ValidationError("one priority is expected after the uid, not \(priorityText.joined(separator: " "))") }
        guard let value = Int(text) else { throw ValidationError("the priority is a whole number from -1000 to 1000, not \"\(text)\"") }
        guard (-1000...1000).contains(value) else { throw ValidationError("priority \(value) is outside -1000...1000") }
    }

    func run() async throws {
        LogOptions.bootstrap(level: .warning)
        let session = daemon.session()
        try await withDaemon(daemon) { () throws(AudioSessionError) in try await session.setPriority(priority, forPort: uid) }
    }
}

/// `audioroute silent on|off`: the ring/silent switch.
struct Silent: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Turn silent mode on or off (silences ambient and soloAmbient sessions).")

    enum State: String, ExpressibleByArgument, CaseIterable { case on, off }

    @OptionGroup var daemon: BusOptions

    @Argument(help: "on or off.")
    var state: State

    func run() async throws {
        LogOptions.bootstrap(level: .warning)
        let session = daemon.session()
        try await withDaemon(daemon) { () throws(AudioSessionError) in try await session.setSilentMode(state == .on) }
    }
}

/// `audioroute prefer-input UID|none [--app NAME]`: the preferred input of an app.
struct PreferInput: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefer-input",
        abstract: "Set the preferred input of an app's sessions.",
        discussion: """
            The daemon remembers a preferred input under the app name of the session that set it, \
            and gives it back to every later session of that app. This command opens a session \
            with --app (default "audioroute"), sets the preference and exits; `none` clears it. \
            To prefer an input only while a command runs, use `audioroute session --prefer-input`.
            """
    )

    @OptionGroup var daemon: BusOptions

    @Argument(help: "The input port's uid, or none.", completion: Completions.portUIDs)
    var uid: String

    @Option(help: "The app whose preference this is.")
    var app: String = "audioroute"

    func run() async throws {
        LogOptions.bootstrap(level: .warning)
        let session = daemon.session(app: app)
        try await withDaemon(daemon) { () throws(AudioSessionError) in
            try await session.setPreferredInput(uid: uid == "none" ? nil : uid)
            await session.close()
        }
    }
}
