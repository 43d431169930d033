import ArgumentParser

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
            tried and exit with status 1.
            """,
        subcommands: [
            Status.self, Ports.self, Monitor.self, Explain.self, Override.self, PreferInput.self, DataSourceCommand.self, Priority.self, Silent.self,
            SessionCommand.self, Play.self, Hardware.self, Simulate.self, Demo.self, DemoSinkCommand.self,
        ]
    )
}
