// The sound server the user runs (PipeWire, PulseAudio, or none), as the watcher finds it, kept
// by the route service for `status` (the D-Bus `SoundServer` property). Where it is PipeWire,
// the PipeWire helper runs and the server's defaults follow the route; the routing is as it was.
import AudioRouteCore
import AudioRouteSystem
import AudioRouteWatchers
import Logging
import ServiceLifecycle

/// Runs a `SoundServerWatcher` and hands each engine to a `RouteService`.
public struct SoundServerService: Service {
    public let watcher: SoundServerWatcher
    public let routes: RouteService
    /// Started while the engine is PipeWire, to apply the route's defaults there.
    public let pipewire: PipeWireHelper?
    /// After a bus event or a change, the sockets are looked at again this much later: a
    /// stopping server may accept for a moment after its name went, and PipeWire alone says
    /// nothing on the bus when it stops (on a desktop, just after pipewire-pulse).
    public let settle: Duration
    public let sleep: @Sendable (Duration) async throws -> Void
    public let logger: Logger

    public init(
        watcher: SoundServerWatcher, routes: RouteService, pipewire: PipeWireHelper? = nil, settle: Duration = .seconds(2),
        sleep: @escaping @Sendable (Duration) async throws -> Void, logger: Logger
    ) {
        self.watcher = watcher
        self.routes = routes
        self.pipewire = pipewire
        self.settle = settle
        self.sleep = sleep
        self.logger = logger
    }

    public func run() async throws {
        let routes = self.routes
        let pipewire = self.pipewire
        defer { pipewire?.stop() }
        do throws(Errno) {
            let watch = try watcher.start()
            let (settle, sleep) = (self.settle, self.sleep)
            await cancelWhenGracefulShutdown {
                await withTaskGroup(of: Void.self) { tasks in
                    var first = true
                    for await engine in watch.engines {
                        await routes.setSoundEngine(engine)
                        pipewire?.engineChanged(engine)
                        // One look later per event or change (not for the first finding), never
                        // a periodic one: an idle daemon does not wake.
                        if !first {
                            tasks.addTask {
                                try? await sleep(settle)
                                watch.lookAgain()
                            }
                        }
                        first = false
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
