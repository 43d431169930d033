// logind's events (sleep, wake, the screen lock) reach the route service through this
// Service, as the hardware watchers' ports do through WatcherService: the watcher watches,
// the route service decides.
import AudioRouteWatchers
import Logging
import ServiceLifecycle

/// Runs a `LogindWatcher` and hands its events to a `RouteService`. No logind is a normal
/// state: the watcher says so once, and the service parks until shutdown.
public struct SystemEventService: Service {
    public let watcher: LogindWatcher
    public let routes: RouteService
    public let logger: Logger

    public init(watcher: LogindWatcher, routes: RouteService, logger: Logger) {
        self.watcher = watcher
        self.routes = routes
        self.logger = logger
    }

    public func run() async throws {
        let routes = self.routes
        do {
            let events = try watcher.events()
            await cancelWhenGracefulShutdown {
                for await event in events { await routes.apply(event) }
            }
        } catch {
            logger.notice("logind watcher unavailable", metadata: ["error": "\(error)"])
        }
        try? await gracefulShutdown()
    }
}
