// Each hardware watcher is a Service of its own in the daemon's ServiceGroup,
// feeding the route service. The group stops them in reverse order on SIGTERM:
// the D-Bus API first, then the watchers, then the route and state services.
import AudioRouteCore
import Logging
import ServiceLifecycle

/// Runs one `PortWatcher` and hands its events to a `RouteService`.
///
/// A watcher whose source is missing (no system bus, no udev) or that ends is
/// logged and the service parks until shutdown: a machine without Bluetooth is a
/// normal machine, and one source going must not stop the daemon.
public struct WatcherService: Service {
    public let watcher: any PortWatcher
    public let routes: RouteService
    public let logger: Logger

    public init(watcher: any PortWatcher, routes: RouteService, logger: Logger) {
        self.watcher = watcher
        self.routes = routes
        self.logger = logger
    }

    public func run() async throws {
        let watcher = self.watcher
        let routes = self.routes
        logger.info("watcher started", metadata: ["watcher": "\(watcher.name)"])
        do {
            try await cancelWhenGracefulShutdown {
                try await watcher.run(
                    deliver: { event in await routes.apply(event, source: watcher.name) },
                    enumerated: { await routes.enumerated(source: watcher.name) })
            }
            if !Task.isShuttingDownGracefully { logger.warning("watcher ended", metadata: ["watcher": "\(watcher.name)"]) }
        } catch {
            // A missing source is a normal state: said plainly, the rest goes on.
            if !Task.isShuttingDownGracefully {
                logger.notice("watcher unavailable", metadata: ["watcher": "\(watcher.name)", "error": "\(error)"])
            }
        }
        // A watcher that ended or failed has nothing more to restore: it counts as enumerated.
        await routes.enumerated(source: watcher.name)
        try? await gracefulShutdown()
    }
}
