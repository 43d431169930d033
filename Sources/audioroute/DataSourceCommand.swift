import ArgumentParser
import AudioRouteCore
import AudioSession

/// `audioroute data-source PORT [SOURCE] [--category ...] [-- CMD...]`
struct DataSourceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "data-source",
        abstract: "Prefer a data source of a port (one of a card's built-in mics) for as long as this command runs.",
        discussion: """
            A preferred data source belongs to a session (AVAudioSessionPortDescription.setPreferredDataSource) \
            and counts while that session controls the route. So this opens a session (playAndRecord by default: \
            it records; without mixWithOthers it interrupts a non-mixable session, as `audioroute override` does, \
            and takes the route; a mixable one controls only where no non-mixable session is active), prefers \
            SOURCE for PORT (without SOURCE, or with "", none: the profile's highest priority; a port or data \
            source the daemon does not know fails here, before anyone is interrupted), activates it, prints the port's data sources with the one in use marked *, and holds the session until \
            CMD exits or, without CMD, until SIGINT or SIGTERM. Then the route goes back to the session before it, \
            and with it that session's data source. If audiorouted restarts meanwhile, the preference is set again \
            and the session activated again. `audioroute ports` lists each port's data sources.
            """
    )

    @OptionGroup var daemon: BusOptions

    @Argument(help: "The port's uid (see audioroute ports).", completion: Completions.portUIDs)
    var port: String

    @Argument(help: "The data source's id (a UCM device: Mic1, DMIC…); none or \"\" for no preference.")
    var source: String = ""

    @Option(help: "The session's category.", completion: Completions.categories)
    var category: String = "playAndRecord"

    @Option(help: "The session's mode (voiceChat keeps a call's UCM verb).", completion: Completions.modes)
    var mode: String = "default"

    @Option(name: .customLong("options"), help: "Category options, comma-separated.", completion: Completions.options)
    var categoryOptions: String = ""

    @Argument(parsing: .postTerminator, help: "A command to run while the preference holds, after --.")
    var command: [String] = []

    func validate() throws {
        _ = try checkedSessionRequest(category: category, mode: mode, options: categoryOptions)
    }

    func run() async throws {
        LogOptions.bootstrap(level: .warning)
        let audio = daemon.session(app: "audioroute-data-source")
        let options = try checkedSessionRequest(category: category, mode: mode, options: categoryOptions)
        let id = source == "none" || source.isEmpty ? nil : source
        try await withDaemon(daemon) { () throws(AudioSessionError) in
            try await audio.setCategory(Category(rawValue: category)!, mode: Mode(rawValue: mode)!, options: options)
            // Preferred before the activation: a bad port or data source interrupts nobody.
            try await audio.setPreferredDataSource(id: id, port: port)
            try await audio.setActive(true)
            let reply = try await audio.dataSources(uid: port)
            var out = OutputBuffer()
            out.append("\(port): \(reply.reason)")
            for source in reply.sources { out.append(PortText.dataSourceLine(source, selected: source.id == reply.selected)) }
            out.flush()
        }
        let status = await HeldSession.run(audio, command: command, reactivate: true, dataSource: (port, id))
        throw ExitCode(status)
    }
}
