// The daemon's heart: one actor owns the tower, takes port events from every
// watcher, keeps the ALSA route file current and announces what changed.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Logging
import ServiceLifecycle

/// What the daemon announces to its subscribers (the D-Bus layer, later).
public enum DaemonEvent: Sendable, Hashable {
    /// The route moved (spec §6), announced after the ALSA file points at the new route.
    case routeChanged(RouteChange)
    /// A port arrived, went away or changed (`portsChanged`), whether or not the route moved.
    /// Only ports a route may use: an unavailable one has gone, as if unplugged.
    case portChanged(PortChange)
    /// A change of `allPorts`, every known port with its availability: a port turning
    /// unavailable or available again is `updated` here.
    case allPortsChanged(PortChange)
    /// A notification to one session (spec §7).
    case session(SessionEvent)
    /// Silent mode was switched on or off.
    case silentModeChanged(Bool)
    /// The screen was locked or unlocked (logind's LockedHint of the user's session).
    case screenLockChanged(Bool)
    /// A session opened, closed, (de)activated, or had an event: for monitors, broadcast.
    case sessionActivity(SessionActivity)
}

/// One session as a client sees it.
public struct SessionSnapshot: Sendable, Hashable {
    public var session: Session
    /// The app name it was opened with.
    public var name: String?
    public var isOtherAudioPlaying: Bool
    public var secondaryAudioShouldBeSilencedHint: Bool
    /// Its process and that process's command name when it opened (`SessionStates`), if known.
    public var process: SessionProcess?
    /// Whether the route follows it.
    public var controlsRoute = false
}

/// The process behind a session: a D-Bus client's (the bus's credentials) or a sound server
/// stream's (its `application.process.id`), and its command name read when the session opened
/// (the pid may be reused later).
public struct SessionProcess: Sendable, Hashable {
    public var id: UInt32
    public var program: String?

    public init(id: UInt32, program: String?) {
        self.id = id
        self.program = program
    }

    /// Process `id` as /proc shows it now.
    public static func reading(_ id: UInt32) -> SessionProcess { SessionProcess(id: id, program: ProcessTable.command(of: id)) }
}

/// A request the daemon refused, or applied but could not save.
public enum RequestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The tower refused it; nothing changed.
    case refused(SessionError)
    /// The setting would take the saved state beyond its limits (`DaemonState.settingsProblem`,
    /// which the message quotes); nothing changed.
    case limitExceeded(String)
    /// It took effect but was not written to disk; a later save retries.
    case notSaved(Errno)

    public var description: String {
        switch self {
        case .refused(let error): return error.description
        case .limitExceeded(let problem): return "not kept: \(problem)"
        case .notSaved(let error): return "applied but not saved: \(error)"
        }
    }
}

/// Owns the `Tower`, applies the events of any number of `PortWatcher`s, and
/// publishes the outcomes through `events`.
public actor RouteService: Service {
    private var tower: Tower
    /// Every port the watchers announced, with its availability; the tower gets the usable ones.
    private var known = AvailabilityFilter()
    /// `allPorts` as last announced, to announce what changed.
    private var announcedPorts: [Port] = []
    private var state: DaemonState
    private var stateVersion: UInt64 = 0
    private let stateService: StateService
    /// What puts each outcome into effect: the route file first, then the others given (the UCM
    /// helper's requests). The service decides; they act (Appliers.swift).
    private var routeFile: RouteFileApplier
    private var appliers: [any RouteApplier]
    /// Watchers whose ports present at start are still arriving: those ports are
    /// restored (they keep their remembered sequence), later ones are new plugs.
    private var enumerating: Set<String>
    private let readyTimeout: Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    /// run() waiting for the enumerations before READY.
    private var enumerationWaiter: CheckedContinuation<Void, Never>?
    private let logger: Logger
    private let onReady: @Sendable () -> Void
    private let onStopping: @Sendable () -> Void
    /// The session name each open session registered with.
    private var sessionNames: [String: String] = [:]
    /// The process of each D-Bus client's session, as the bus said: its streams through a sound
    /// server are that session already (PipeWireStreamService leaves them alone).
    private var sessionProcesses: [String: UInt32] = [:]
    /// Every session's process where known (a client's, a stream's), for `SessionStates`.
    private var processes: [String: SessionProcess] = [:]
    /// Whether each open session was active when last announced (`sessionActivity`).
    private var announcedActivity: [String: Bool] = [:]
    /// After a wake, the first route move a port causes is announced as `wakeFromSleep`.
    private var wakeWindow = WakeWindow()
    /// After a wake, a display output that goes away stays in the route for a moment.
    private var displayGrace: DisplayGrace

    /// Every outcome, to every subscriber.
    public nonisolated let events = Broadcast<DaemonEvent>()
    /// The session events of the sound server's streams (`pipewire/<node id>`) alone, for the
    /// service that applies them (PipeWireStreamService): a storm of port events sends it nothing
    /// to buffer (a subscriber of `events` that lags keeps up to 1024 of them, about 0.5 MiB).
    public nonisolated let serverStreamEvents = Broadcast<SessionEvent>(bufferSize: 256)

    /// - Parameters:
    ///   - initialState: the loaded state: sequences, user priorities, preferred inputs and silent mode are
    ///     restored from it.
    ///   - watchers: the names of the watchers that will deliver ports (`source` in
    ///     `apply`). Until a watcher's `enumerated(source:)`, its ports are the ones
    ///     present before the daemon (re)started: they keep their remembered sequence
    ///     instead of counting as new plugs.
    ///   - readyTimeout: how long `onReady` waits for those enumerations at most; a
    ///     watcher still enumerating then is logged, and its ports are still restored
    ///     until it finishes.
    ///   - sleep: how the ready timeout sleeps (audiorouted passes its executor's, which
    ///     starts no thread).
    ///   - onReady: called once the initial ALSA file is written and every watcher has
    ///     enumerated (or `readyTimeout` has passed).
    ///   - onStopping: called when graceful shutdown begins.
    public init(
        stateService: StateService, initialState: DaemonState, alsa: AlsaRouteConfigWriter,
        watchers: [String] = [], appliers: [any RouteApplier] = [], readyTimeout: Duration = .seconds(1),
        displayGrace: DisplayGrace = DisplayGrace(),
        sleep: @escaping @Sendable (Duration) async throws -> Void = StateService.taskSleep,
        logger: Logger,
        serverDefaults: @escaping @Sendable () -> String = { "the daemon runs no PipeWire helper" },
        onReady: @escaping @Sendable () -> Void = {}, onStopping: @escaping @Sendable () -> Void = {}
    ) {
        self.serverDefaults = serverDefaults
        self.stateService = stateService
        self.state = initialState
        var tower = Tower(sequences: initialState.sequences)
        // No session and no port yet: nothing to announce.
        if initialState.silentMode { _ = tower.setSilentMode(true) }
        self.tower = tower
        self.routeFile = RouteFileApplier(writer: alsa, logger: logger)
        self.appliers = appliers
        self.enumerating = Set(watchers)
        self.readyTimeout = readyTimeout
        self.displayGrace = displayGrace
        self.sleep = sleep
        self.logger = logger
        self.onReady = onReady
        self.onStopping = onStopping
    }

    // MARK: Queries

    public var route: Route { tower.route }
    /// The ports a route may use (available or of unknown availability), as the tower keeps them.
    public var ports: [Port] { tower.ports }
    /// Every known port with its availability, unavailable ones included, in the order they were
    /// first announced: a usable one as the tower keeps it (its sequence, its priority), an
    /// unavailable one as its watcher announced it, with the user's priority.
    public var allPorts: [Port] {
        let usable = Dictionary(tower.ports.map { ($0.uid, $0) }, uniquingKeysWith: { first, _ in first })
        return known.ports.map { usable[$0.uid] ?? withUserPriority($0) }
    }
    public var sessions: [Session] { tower.sessions }
    public var silentMode: Bool { tower.silentMode }
    /// Whether the screen is locked, as logind last said (not saved: logind says it again at start).
    public var screenLocked: Bool { tower.screenLocked }
    /// The sound server the user runs, as the watcher last said (none until it says).
    public private(set) var soundEngine: SoundEngine = .none
    private let serverDefaults: @Sendable () -> String
    /// Whether the sound server's defaults follow the route, and how, or why not (the PipeWire helper's word).
    public var soundServerDefaults: String { serverDefaults() }

    /// Keeps what the sound-server watcher found, for `status`; the route file's cards play
    /// through the server where one speaks the pulse protocol. The route itself does not change.
    public func setSoundEngine(_ engine: SoundEngine) {
        soundEngine = engine
        routeFile.engineChanged(engine)
    }
    /// Which rule chose the current route, and why each other port lost.
    public var explanation: RouteExplanation { tower.explain() }

    /// A session with its derived hints, or nil if there is no such session.
    public func snapshot(of id: String) -> SessionSnapshot? {
        guard let session = tower.session(id) else { return nil }
        return SessionSnapshot(
            session: session, name: sessionNames[id], isOtherAudioPlaying: tower.isOtherAudioPlaying(for: id),
            secondaryAudioShouldBeSilencedHint: tower.secondaryAudioShouldBeSilencedHint(for: id), process: processes[id],
            controlsRoute: tower.controllingSession?.id == id)
    }

    /// The sessions of the sound server's streams (`pipewire/<node id>`, PipeWireStreamService), in
    /// node order, with their application names.
    public var serverStreamSessions: [SessionSnapshot] {
        tower.sessions.filter { $0.id.hasPrefix("pipewire/") }
            .sorted { (UInt32($0.id.dropFirst(9)) ?? 0) < (UInt32($1.id.dropFirst(9)) ?? 0) }
            .compactMap { snapshot(of: $0.id) }
    }

    /// Whether process `pid` holds a session of its own (a D-Bus client's).
    public func hasSession(processID pid: UInt32) -> Bool { sessionProcesses.values.contains(pid) }

    /// The state as the service last recorded it.
    public var currentState: DaemonState { state }

    // MARK: Service

    public func run() async throws {
        routeFile.apply(AppliedRoute(moment: .start, route: tower.route, ports: RoutePorts(tower.route, describe: tower.routePort)))
        await waitForEnumerations()
        onReady()
        // Parked until SIGTERM/SIGINT: no timers, no wake-ups while idle. The
        // watchers are services of their own (WatcherService) that call `apply`.
        try? await gracefulShutdown()
        onStopping()
        events.finish()
        serverStreamEvents.finish()
        logger.debug("route service stopped")
    }

    // MARK: Port events

    /// Applies a watcher's event. A refused event (a duplicate or unknown
    /// port: garbage from a source) is logged and changes nothing. Unavailable ports
    /// are kept for `allPorts` only: the tower sees a port turning unavailable go, and
    /// one turning available again arrive, as an unplug and a plug.
    public func apply(_ event: PortEvent, source: String) async {
        let usable: PortEvent?
        let before = known
        do throws(SessionError) {
            switch event {
            case .added(let new): usable = try known.apply(.added(new.map(withUserPriority)))
            case .removed: usable = try known.apply(event)
            case .updated(let port): usable = try known.apply(.updated(withUserPriority(port)))
            case .inputMuted: usable = event
            }
        } catch {
            logger.warning("port event refused", metadata: ["watcher": "\(source)", "error": "\(error)"])
            return
        }
        do throws(SessionError) {
            switch usable {
            case .added(let ports)?:
                // A display output back within its grace never left the tower: at most its
                // configuration changed.
                let returned = Set(ports.filter { displayGrace.returned($0.uid) }.map(\.uid))
                for port in ports where returned.contains(port.uid) {
                    logger.info("display output back within its grace", metadata: ["port": "\(port.uid)"])
                    var same = port
                    same.sequence = tower.port(port.uid)?.sequence ?? port.sequence
                    if tower.port(port.uid) != same { publish(afterWake(try tower.updatePort(port))) }
                }
                let arriving = ports.filter { !returned.contains($0.uid) }
                if !arriving.isEmpty {
                    publish(afterWake(try tower.addPorts(arriving, restoring: enumerating.contains(source))))
                    reapplyPreferredInputs(arrived: Set(arriving.map(\.uid)))
                }
            case .removed(let uids)?:
                let split = displayGrace.remove(uids, ports: tower.ports, at: .now)
                if !split.now.isEmpty { publish(afterWake(try tower.removePorts(split.now))) }
                if !split.held.isEmpty { holdDisplays(split.held, until: split.until) }
            case .updated(let port)?:
                publish(afterWake(try tower.updatePort(port)))
            case .inputMuted(let device, let muted)?:
                let wasMuted = tower.builtInMicMuted
                publish(tower.setInputMuted(device: device, muted: muted))
                if tower.builtInMicMuted != wasMuted { logger.info("built-in mic \(muted ? "muted" : "unmuted") by the hardware", metadata: ["device": "\(device)"]) }
            case nil:
                break
            }
        } catch {
            // The filter refuses what the tower would; this would be a bug, not a watcher's garbage.
            // Should they disagree, nothing changes (as the simulator does), so that they stay one.
            known = before
            logger.error("port event refused by the tower", metadata: ["watcher": "\(source)", "error": "\(error)"])
        }
        // A change the tower does not see (an unavailable port arriving or changing) is listed too.
        announceAllPorts()
        if tower.sequences != state.sequences {
            state.sequences = tower.sequences
            await stateService.submit(state, version: nextVersion())
        }
    }

    /// A watcher has delivered the ports present at its start (or has ended or
    /// failed: it has nothing more to restore). Called once per watcher; later calls
    /// do nothing.
    public func enumerated(source: String) {
        guard enumerating.remove(source) != nil else { return }
        logger.debug("watcher enumerated", metadata: ["watcher": "\(source)"])
        if enumerating.isEmpty, let waiter = enumerationWaiter {
            enumerationWaiter = nil
            waiter.resume()
        }
    }

    /// Returns when every watcher has enumerated, or after `readyTimeout`.
    private func waitForEnumerations() async {
        guard !enumerating.isEmpty else { return }
        let timeout = readyTimeout
        let sleep = self.sleep
        let timer = Task { [weak self] in
            guard (try? await sleep(timeout)) != nil else { return }
            await self?.enumerationTimedOut()
        }
        await withCheckedContinuation { enumerationWaiter = $0 }
        timer.cancel()
    }

    private func enumerationTimedOut() {
        guard let waiter = enumerationWaiter else { return }
        enumerationWaiter = nil
        logger.notice(
            "ready before every watcher enumerated",
            metadata: ["watchers": "\(enumerating.sorted().joined(separator: ","))", "timeout": "\(readyTimeout)"])
        waiter.resume()
    }

    private func withUserPriority(_ port: Port) -> Port {
        var port = port
        if let priority = state.priorities[port.uid] { port.priority = priority }
        return port
    }

    /// A remembered preferred input applies again when its port returns.
    private func reapplyPreferredInputs(arrived: Set<String>) {
        for session in tower.sessions {
            guard let name = sessionNames[session.id], let uid = state.preferredInputs[name], arrived.contains(uid),
                session.preferredInput != uid, let outcome = try? tower.setPreferredInput(uid, session: session.id)
            else { continue }
            publish(outcome)
        }
    }

    /// A port's outcome with its route change's reason as the wake window decides.
    private func afterWake(_ outcome: TowerOutcome) -> TowerOutcome {
        guard var change = outcome.change else { return outcome }
        change.reason = wakeWindow.reason(for: change.reason, at: .now)
        var outcome = outcome
        outcome.change = change
        return outcome
    }

    /// Keeps display outputs that went away after a wake in the tower until their grace ends.
    private func holdDisplays(_ uids: [String], until: ContinuousClock.Instant) {
        logger.info("display output gone after a wake: held", metadata: ["ports": "\(uids)", "grace": "\(displayGrace.hold)"])
        let hold = displayGrace.hold
        let sleep = self.sleep
        Task { [weak self] in
            guard (try? await sleep(hold)) != nil else { return }
            await self?.displayGraceEnded(uids, heldUntil: until)
        }
    }

    private func displayGraceEnded(_ uids: [String], heldUntil until: ContinuousClock.Instant) {
        let due = displayGrace.release(uids, heldUntil: until).filter { tower.port($0) != nil }
        guard !due.isEmpty else { return }
        do throws(SessionError) {
            publish(afterWake(try tower.removePorts(due)))
        } catch {
            logger.error("held display output refused by the tower", metadata: ["error": "\(error)"])
        }
    }

    // MARK: System events

    /// Applies what logind said: a lock silences ambient and soloAmbient sessions (as silent
    /// mode does) until the unlock; a wake re-evaluates the route (a move is `wakeFromSleep`)
    /// and opens the window in which the first route move a port causes is the wake's.
    public func apply(_ event: SystemEvent) {
        switch event {
        case .screenLocked(let locked):
            guard tower.screenLocked != locked else { return }
            let outcome = tower.setScreenLocked(locked)
            logger.info("screen \(locked ? "locked" : "unlocked")")
            events.send(.screenLockChanged(locked))
            publish(outcome)
        case .sleeping:
            wakeWindow.sleeping()
            displayGrace.sleeping()
        case .woke:
            wakeWindow.woke(at: .now)
            displayGrace.woke(at: .now)
            publish(tower.wake())
        }
    }

    // MARK: Requests (the D-Bus layer calls these)

    /// Opens a session. `name` is the app's stable identity; a preferred input
    /// remembered under it is applied when its port is present. `processID`: the client's
    /// process, when the bus says it. `streamProcess`: a sound server stream's process, shown
    /// in `SessionStates` only (its other streams are sessions of their own).
    public func openSession(id: String, name: String? = nil, processID: UInt32? = nil, streamProcess: UInt32? = nil) throws(SessionError) {
        let outcome = try tower.openSession(Session(id: id))
        // Named before the outcome is announced: monitors see the app's name on `opened`.
        sessionNames[id] = name
        sessionProcesses[id] = processID
        processes[id] = (processID ?? streamProcess).map(SessionProcess.reading)
        publish(outcome)
        if let name, let uid = state.preferredInputs[name], tower.port(uid)?.direction.isInput == true,
            let outcome = try? tower.setPreferredInput(uid, session: id)
        {
            publish(outcome)
        }
    }

    /// A client closed or died: deactivated with notifyOthers, then forgotten.
    public func closeSession(_ id: String) throws(SessionError) {
        publish(try tower.closeSession(id))
        sessionNames[id] = nil
        sessionProcesses[id] = nil
        processes[id] = nil
    }

    public func setCategory(_ category: Category, mode: Mode = .default, options: CategoryOptions = [], session id: String) throws(SessionError) {
        publish(try tower.setCategory(category, mode: mode, options: options, session: id))
    }

    public func setActive(_ active: Bool, session id: String, notifyOthers: Bool = false) throws(SessionError) {
        publish(try tower.setActive(active, session: id, notifyOthers: notifyOthers))
    }

    /// Port `uid`'s data sources, the one it uses now and why. An unavailable port lists its
    /// data sources and uses none. Refused for a port nobody announced.
    public func dataSources(of uid: String) throws(SessionError) -> DataSourcesReply {
        if let port = tower.port(uid) {
            guard let selection = tower.selectedDataSource(uid) else {
                return DataSourcesReply(sources: [], selected: nil, reason: "\(port.type.rawValue) port \(uid) has no data sources")
            }
            return DataSourcesReply(sources: port.dataSources, selected: selection.source.id, reason: selection.reason)
        }
        guard let port = known.port(uid) else { throw .unknownPort(uid) }
        return DataSourcesReply(sources: port.dataSources, selected: nil, reason: "port \(uid) is unavailable: no data source is in use")
    }

    /// Sets (or clears, with nil) a session's preferred data source of port `uid`. Not saved:
    /// it lasts as long as the session, and is forgotten when the port goes (docs/decisions.md).
    public func setPreferredDataSource(_ source: String?, port uid: String, session id: String) throws(SessionError) {
        publish(try tower.setPreferredDataSource(source, port: uid, session: id))
    }

    /// A session's preferred data source of port `uid`, nil for none.
    public func preferredDataSource(port uid: String, session id: String) throws(SessionError) -> String? {
        guard let session = tower.session(id) else { throw .unknownSession(id) }
        guard tower.port(uid) != nil || known.port(uid) != nil else { throw .unknownPort(uid) }
        return session.preferredDataSources[uid]
    }

    public func overrideOutput(_ override: OutputOverride, session id: String) throws(SessionError) {
        publish(try tower.overrideOutput(override, session: id))
    }

    /// Sets (or clears, with nil) a session's preferred input, and remembers it
    /// under the session's name, saved before this returns.
    public func setPreferredInput(_ uid: String?, session id: String) async throws(RequestError) {
        if let version = try await applyPreferredInput(uid, session: id) { try await saved(version) }
    }

    /// `setPreferredInput` without waiting for the save: the snapshot to wait for with
    /// `saved`, nil if nothing is saved (a session without a name).
    public func applyPreferredInput(_ uid: String?, session id: String) async throws(RequestError) -> UInt64? {
        if let name = sessionNames[id] {
            var candidate = state
            candidate.preferredInputs[name] = uid
            if let problem = candidate.settingsProblem { throw .limitExceeded(problem) }
        }
        do throws(SessionError) {
            publish(try tower.setPreferredInput(uid, session: id))
        } catch {
            throw .refused(error)
        }
        guard let name = sessionNames[id] else { return nil }
        state.preferredInputs[name] = uid
        return await record()
    }

    /// A user's priority for a known port, saved before this returns; it applies
    /// again whenever the port is present. An unavailable port's applies when it
    /// becomes available.
    public func setPriority(_ priority: Int, for uid: String) async throws(RequestError) {
        try await saved(try await applyPriority(priority, for: uid))
    }

    /// `setPriority` without waiting for the save: the snapshot to wait for with `saved`.
    public func applyPriority(_ priority: Int, for uid: String) async throws(RequestError) -> UInt64 {
        var candidate = state
        candidate.priorities[uid] = priority
        if let problem = candidate.settingsProblem { throw .limitExceeded(problem) }
        if tower.port(uid) == nil, known.port(uid) != nil {
            state.priorities[uid] = priority
            announceAllPorts()
        } else {
            do throws(SessionError) {
                publish(try tower.setPriority(priority, for: uid))
            } catch {
                throw .refused(error)
            }
            state.priorities[uid] = priority
        }
        return await record()
    }

    public func setPrefersInterruptionOnRouteDisconnect(_ value: Bool, session id: String) throws(SessionError) {
        try tower.setPrefersInterruptionOnRouteDisconnect(value, session: id)
    }

    /// Switches silent mode, saved before this returns (it applies again after a
    /// restart); announces `silentModeChanged` when it changed.
    public func setSilentMode(_ on: Bool) async throws(RequestError) {
        try await saved(await applySilentMode(on))
    }

    /// `setSilentMode` without waiting for the save: the snapshot to wait for with `saved`.
    public func applySilentMode(_ on: Bool) async -> UInt64 {
        if tower.silentMode != on {
            let outcome = tower.setSilentMode(on)
            events.send(.silentModeChanged(on))
            publish(outcome)
        }
        // Saved even when unchanged: a repeated request retries a save that failed.
        state.silentMode = on
        return await record()
    }

    /// Hands the state to the state service, to be written; its snapshot number.
    private func record() async -> UInt64 {
        let version = nextVersion()
        await stateService.recordNow(state, version: version)
        return version
    }

    /// Returns once the state is written as of snapshot `version` (the `apply…` requests':
    /// the change is acknowledged only then).
    public func saved(_ version: UInt64) async throws(RequestError) {
        if case .failure(let error) = await stateService.saved(version) { throw .notSaved(error) }
    }

    private func nextVersion() -> UInt64 {
        stateVersion += 1
        return stateVersion
    }

    // MARK: Output

    private func publish(_ outcome: TowerOutcome) {
        for change in outcome.portChanges { events.send(.portChanged(change)) }
        if !outcome.portChanges.isEmpty { announceAllPorts() }
        // The sessions' events before the route change that caused them: a stream told of an
        // unplug's routeDisconnected interruption holds before it hears of the new route, so it
        // never plays a frame on the speaker (the ALSA plugin moves on RouteChanged).
        // For monitors, the sessions' new states first (a call activated, the music it interrupts
        // deactivated), then the events that tell them why.
        announceSessionActivity()
        for event in outcome.events {
            events.send(.session(event))
            if event.session.hasPrefix(PipeWireStreamSessions.prefix) { serverStreamEvents.send(event) }
            events.send(.sessionActivity(SessionActivity(path: DBusAPI.sessionObjectPath(event.session), app: sessionNames[event.session] ?? "", event: event.kind)))
        }
        // The appliers (the UCM devices: a request for each card with a profile, which the helper
        // switches at once), after every outcome: a call on the speaker changes the verb, not the
        // route. Then the route file, before the announcement: a client that reacts to it opens
        // the new route.
        let applied = AppliedRoute(
            moment: .outcome, route: tower.route,
            ports: outcome.change?.currentPorts,
            configuration: tower.controllingSession?.configuration, dataSources: tower.routeDataSources)
        for index in appliers.indices { appliers[index].apply(applied) }
        routeFile.apply(applied)
        if let change = outcome.change {
            logger.info("route changed", metadata: ["reason": "\(change.reason.rawValue)", "route": "\(change.current)"])
            events.send(.routeChanged(change))
        }
        for warning in outcome.warnings { logger.warning("\(warning)") }
    }

    /// Announces how `allPorts` differs from what was last announced: removals, then
    /// updates and arrivals in listing order.
    /// Opened, closed, activated and deactivated sessions since the last outcome, for monitors:
    /// found by comparing the tower's sessions with the last announced (every request that can
    /// change them ends in `publish`). Openings and activations come before deactivations and
    /// closings: a call is activated, then the music it interrupts is deactivated.
    private func announceSessionActivity() {
        var rising: [SessionActivity] = []
        var falling: [SessionActivity] = []
        var seen = Set<String>()
        for session in tower.sessions {
            seen.insert(session.id)
            let known = announcedActivity[session.id]
            guard known != session.isActive else { continue }
            announcedActivity[session.id] = session.isActive
            let path = DBusAPI.sessionObjectPath(session.id)
            let app = sessionNames[session.id] ?? ""
            let detail = SessionActivity.detail(of: session.configuration)
            if known == nil { rising.append(SessionActivity(path: path, app: app, change: .opened, detail: detail)) }
            if session.isActive {
                rising.append(SessionActivity(path: path, app: app, change: .activated, detail: detail))
            } else if known != nil {
                falling.append(SessionActivity(path: path, app: app, change: .deactivated))
            }
        }
        if seen.count != announcedActivity.count {
            for id in announcedActivity.keys.sorted() where !seen.contains(id) {
                announcedActivity[id] = nil
                falling.append(SessionActivity(path: DBusAPI.sessionObjectPath(id), app: sessionNames[id] ?? "", change: .closed))
            }
        }
        for activity in rising + falling { events.send(.sessionActivity(activity)) }
    }

    private func announceAllPorts() {
        let now = allPorts
        guard now != announcedPorts else { return }
        let before = Dictionary(announcedPorts.map { ($0.uid, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Set(now.map(\.uid))
        for port in announcedPorts where !after.contains(port.uid) {
            events.send(.allPortsChanged(PortChange(kind: .removed, port: port)))
        }
        for port in now {
            guard let previous = before[port.uid] else {
                events.send(.allPortsChanged(PortChange(kind: .added, port: port)))
                continue
            }
            if previous != port { events.send(.allPortsChanged(PortChange(kind: .updated, port: port))) }
        }
        announcedPorts = now
    }

}
