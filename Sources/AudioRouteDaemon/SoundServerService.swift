// The sound server the user runs (PipeWire, PulseAudio, or none), as the watcher finds it, kept
// by the route service for `status` (the D-Bus `SoundServer` property). Nothing is applied
// through the server yet: with or without one, the routing is as it was.
import AudioRouteCore
import AudioRouteSystem
import AudioRouteWatchers
import Logging
import ServiceLifecycle

/// Runs a `SoundServerWatcher` and hands each engine to a `RouteService`.
public struct SoundServerService: Service {
    public let watcher: SoundServerWatcher
    public let routes: RouteService
    /// After a change, the sockets are looked at again this much later: PipeWire alone says
    /// nothing on the bus when it stops, and on a desktop it stops just after pipewire-pulse.
    public let settle: Duration
    public let sleep: @Sendable (Duration) async throws -> Void
    public let logger: Logger

    public init(
        watcher: SoundServerWatcher, routes: RouteService, settle: Duration = .seconds(2),
        sleep: @escaping @Sendable (Duration) async throws -> Void, logger: Logger
    ) {
        self.watcher = watcher
        self.routes = routes
        self.settle = settle
        self.sleep = sleep
        self.logger = logger
    }

    public func run() async throws {
        let routes = self.routes
        do throws(Errno) {
            let watch = try watcher.start()
            let (settle, sleep) = (self.settle, self.sleep)
            await cancelWhenGracefulShutdown {
                await withTaskGroup(of: Void.self) { tasks in
                    for await engine in watch.engines {
                        await routes.setSoundEngine(engine)
                        // One look later per change, never a periodic one: no wake-up while idle.
                        tasks.addTask {
                            try? await sleep(settle)
                            watch.lookAgain()
                        }
                    }
                    tasks.cancelAll()
                }
            }
        } catch {
            logger.notice("sound server watcher unavailable", metadata: ["error": "\(error)"])
        }
        try? await gracefulShutdown()
    }
}
