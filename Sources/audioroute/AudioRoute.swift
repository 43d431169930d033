import ArgumentParser

/// `audioroute`: query, monitor and simulate audio routes.
@main
struct AudioRoute: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audioroute",
        abstract: "Query, monitor and simulate audio routes.",
        subcommands: [Simulate.self]
    )
}
