// Putting the tower's choice into effect, apart from choosing it (WirePlumber's split of policy
// and action): the route service decides, and hands each outcome to its appliers, in order. The
// route file is always one (clients read it); the UCM helper's requests are another, where cards
// have profiles; a sound server's would be a third.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteSystem
import AudioRouteUCMHelper
import Logging

/// What the route service hands its appliers.
public struct AppliedRoute: Sendable {
    /// When: the daemon's start (before it is ready), or an outcome of the tower.
    public enum Moment: Sendable, Equatable {
        case start
        /// An outcome of the tower; `ports` says whether the route itself changed (a call on the
        /// same speaker changes only the controlling session's configuration).
        case outcome
    }

    public var moment: Moment
    public var route: Route
    /// The route's ports as the tower describes them (their ALSA names, for the route file), at
    /// the start and when the route changed; nil when it did not (nothing to describe again).
    public var ports: RoutePorts?
    /// The configuration of the session that controls the route, if any.
    public var configuration: SessionConfiguration?
    /// The selected data source of each route port that has data sources, by port uid.
    public var dataSources: [String: String] = [:]
}

/// One way of putting a route into effect. Called on the route service's actor, never concurrently.
public protocol RouteApplier: Sendable {
    mutating func apply(_ applied: AppliedRoute)
}

/// The route file (`asound.conf`, docs/alsa.md): written at the start, then when the route
/// changes, and only when its text would change.
public struct RouteFileApplier: RouteApplier {
    public let writer: AlsaRouteConfigWriter
    let logger: Logger
    private var written: AlsaRouteConfig?
    /// The route's ports last given, to write them again when the server changes.
    private var ports: RoutePorts?
    /// The server the cards' ports play through (`ServerPCM`), nil: the cards directly.
    private var server: ServerPCM?

    public init(writer: AlsaRouteConfigWriter, logger: Logger) {
        self.writer = writer
        self.logger = logger
    }

    public mutating func apply(_ applied: AppliedRoute) {
        let force = applied.moment == .start
        guard let ports = applied.ports else { return }
        self.ports = ports
        write(force: force)
    }

    /// The sound engine changed: the cards' ports play through its server from now on (or
    /// directly again), and the file is written again if that changes it.
    public mutating func engineChanged(_ engine: SoundEngine) {
        let server = ServerPCM.forEngine(engine)
        guard server != self.server else { return }
        self.server = server
        logger.notice(
            "the route file's cards play \(server.map { "through \($0.serverName) (\($0.pcm))" } ?? "directly")",
            metadata: ["engine": "\(engine.summary)"])
        write(force: false)
    }

    private mutating func write(force: Bool) {
        guard let ports else { return }
        let config = AlsaRouteConfig(route: ports, server: server)
        guard force || config != written else { return }
        for problem in config.problems { logger.warning("\(problem)") }
        do throws(Errno) {
            try writer.write(config)
            written = config
        } catch {
            logger.error("cannot write the ALSA route file", metadata: ["path": "\(writer.path)", "error": "\(error)"])
        }
    }
}

/// The UCM helper's requests (docs/ucm.md): after every outcome, each card with a profile is
/// told the verb and devices the route and the controlling session's configuration need (a call
/// on the speaker changes the verb, not the route); a card already in that state is not asked.
public struct UCMApplier: RouteApplier {
    public let helpers: UCMHelpers

    public init(helpers: UCMHelpers) { self.helpers = helpers }

    public func apply(_ applied: AppliedRoute) {
        guard case .outcome = applied.moment else { return }
        helpers.apply(route: applied.route, configuration: applied.configuration, dataSources: applied.dataSources)
    }
}
