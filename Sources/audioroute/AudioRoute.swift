import ArgumentParser

/// `audioroute`: query, monitor and simulate audio routes.
@main
struct AudioRoute: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audioroute",
        abstract: "Query, monitor and simulate audio routes.",
        subcommands: [Simulate.self, Ports.self, Monitor.self]
    )
}
