import ArgumentParser
import AudioRouteCore
import AudioRouteSystem
import AudioRouteVersion

/// `audioroute`: query, monitor and simulate audio routes.
@main
struct AudioRoute: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audioroute",
        abstract: "Query, monitor and simulate audio routes.",
        discussion: """
            Commands other than simulate talk to audiorouted on the session bus (--system: the system \
            bus; --bus-address: any address). `ports` and `monitor` can also read the hardware in \
            this process with --direct. If the daemon cannot be reached, they say which bus they \
            tried and exit with status 69 (EX_UNAVAILABLE); a request the daemon refuses exits 1, a \
            usage error 64 (docs/client.md, "Exit statuses").
            """,
        version: "audioroute " + AudioRouteVersion.text,
        subcommands: [
            Status.self, Ports.self, Monitor.self, Explain.self, Override.self, PreferInput.self, DataSourceCommand.self, Priority.self, Silent.self,
            SessionCommand.self, Play.self, Hardware.self, Simulate.self, Demo.self, DemoSinkCommand.self,
        ]
    )

    /// A mistyped command gets its nearest name ("did you mean") and the list, before the
    /// parser's own "Unexpected argument"; everything else is the parser's.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let names = configuration.subcommands.filter { $0.configuration.shouldDisplay }.map { $0._commandName }
        let all = configuration.subcommands.map { $0._commandName }
        if let first = arguments.first, !first.hasPrefix("-"), first != "help", !all.contains(first) {
            let message = Suggestion.unknown("command", first, among: names)
            StandardStream.error.write("Error: \(message)\nUsage: audioroute <subcommand>\n  See 'audioroute --help' for more information.\n")
            CurrentProcess.exit(ExitCode.validationFailure.rawValue)
        }
        await main(arguments)
    }
}
