// AudioSession: an app's audio session on audiorouted, shaped like AVAudioSession.
// Calls go over D-Bus (docs/dbus-api.md); notifications arrive as AsyncStreams.
// The session is opened on first use and re-opened when the daemon comes back.

import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteIPC
import Logging
import Synchronization

/// An app's audio session, kept by `audiorouted`.
///
/// Like AVAudioSession, it starts as `soloAmbient`, mode `default`, no options, inactive.
/// Every call is `async` because it is a D-Bus round trip; failures are `AudioSessionError`.
/// See docs/client.md.
public actor AudioSession {
    /// Which bus the daemon is on.
    public enum Bus: Sendable, Hashable, CustomStringConvertible {
        /// The user's session bus (`DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`).
        case session
        /// The system bus (a daemon started with `--system`).
        case system
        /// An explicit address (`unix:path=…`), for tests and integrators.
        case address(String)

        var client: ClientBus {
            switch self {
            case .session: return .session
            case .system: return .system
            case .address(let address): return .address(address)
            }
        }

        public var description: String { client.description }
    }

    /// The session of this process on the session bus.
    public static let shared = AudioSession()

    /// The bus this session talks on.
    public let bus: Bus
    /// The app's stable identity: the daemon remembers its preferred input under it.
    public let appName: String
    private let logger: Logger

    private var connection: DBusClientConnection?
    private var pump: Task<Void, Never>?
    /// The daemon's unique name while it is on the bus (mirrored for the connection's thread).
    private var daemonOwner: String? {
        didSet { delivery.owner = daemonOwner }
    }
    /// This session's object path while it is open.
    private var sessionPath: String?
    /// True once a session was opened: a returning daemon gets it back.
    private var wantsSession = false
    /// mediaServicesWereLost was posted and no reset yet.
    private var daemonWasLost = false
    /// The OpenSession in flight, if any.
    private var opening: Task<String, any Error>?
    /// The subscribers, and the fast way to them (see `NotificationDelivery`).
    private let delivery = NotificationDelivery()

    /// The category, mode and options last set (re-applied after the daemon restarts).
    public private(set) var category: Category = .soloAmbient
    public private(set) var mode: Mode = .default
    public private(set) var categoryOptions: CategoryOptions = []
    /// Whether a route disconnect interrupts this (playback) session, as last set. Default true.
    public private(set) var prefersInterruptionOnRouteDisconnect = true
    /// The hardware preferences and last values (SessionHardware.swift).
    var hardware = SessionHardware()

    /// - Parameters:
    ///   - bus: where `audiorouted` is (the session bus by default).
    ///   - appName: the app's stable identity; by default the program's name.
    public init(bus: Bus = .session, appName: String? = nil, logger: Logger = Logger(label: "audioroute.session")) {
        self.bus = bus
        self.appName = appName ?? Self.programName()
        self.logger = logger
    }

    private static func programName() -> String {
        String(Directory.currentExecutable()?.split(separator: "/").last ?? "")
    }

    // MARK: Notifications

    /// Every notification of this session from now on, in delivery order. Each call gives
    /// a new, independent sequence; it ends when the task iterating it is cancelled.
    /// Call `connect()` (or any other method) for broadcasts to start flowing.
    public var notifications: AsyncStream<AudioSessionNotification> {
        let (stream, continuation) = AsyncStream.makeStream(of: AudioSessionNotification.self, bufferingPolicy: .unbounded)
        let id = delivery.subscribe(continuation)
        continuation.onTermination = { [delivery] _ in delivery.unsubscribe(id) }
        return stream
    }

    /// Route changes (AVAudioSession.routeChangeNotification).
    public var routeChanges: AsyncCompactMapSequence<AsyncStream<AudioSessionNotification>, RouteChangeInfo> {
        notifications.compactMap { if case .routeChange(let info) = $0 { return info } else { return nil } }
    }

    /// Interruptions of this session (AVAudioSession.interruptionNotification).
    public var interruptions: AsyncCompactMapSequence<AsyncStream<AudioSessionNotification>, InterruptionInfo> {
        notifications.compactMap { if case .interruption(let info) = $0 { return info } else { return nil } }
    }

    /// AVAudioSession.silenceSecondaryAudioHintNotification.
    public var silenceSecondaryAudioHints: AsyncCompactMapSequence<AsyncStream<AudioSessionNotification>, SilenceSecondaryAudioHintType> {
        notifications.compactMap { if case .silenceSecondaryAudioHint(let type) = $0 { return type } else { return nil } }
    }

    /// `true` for mediaServicesWereLost, `false` for mediaServicesWereReset.
    public var mediaServicesEvents: AsyncCompactMapSequence<AsyncStream<AudioSessionNotification>, Bool> {
        notifications.compactMap {
            switch $0 {
            case .mediaServicesWereLost: return true
            case .mediaServicesWereReset: return false
            default: return nil
            }
        }
    }

    private func post(_ notification: AudioSessionNotification) {
        delivery.post(notification)
    }

    // MARK: Connection

    /// Connects to the bus and starts following the daemon (route changes, ports, its name).
    /// Other methods connect by themselves; this only makes broadcasts flow earlier.
    /// Throws `daemonUnavailable` when the bus cannot be reached (not when the daemon is absent:
    /// then `isDaemonRunning` is false and notifications start when it appears).
    public func connect() async throws(AudioSessionError) {
        _ = try await ensureConnection()
    }

    /// Also delivers every session's activity (`sessionActivity`: opened, closed, activated,
    /// interrupted, ducked, silenced), as monitors show it. Apps need not: their own session's
    /// events come anyway, and the broadcast of everyone's would wake them for nothing.
    public func followSessionActivity() async throws(AudioSessionError) {
        let client = try await ensureConnection()
        do {
            try await client.addMatch(DBusAPI.signalMatch(interface: DBusAPI.monitorInterface, path: DBusAPI.managerPath))
        } catch {
            throw Wire.error(error, bus: bus.description)
        }
    }

    /// Whether audiorouted is on the bus now (as far as this connection has seen).
    public var isDaemonRunning: Bool { daemonOwner != nil }

    private func ensureConnection() async throws(AudioSessionError) -> DBusClientConnection {
        if let connection { return connection }
        let client: DBusClientConnection
        // Broadcasts the connection's thread can turn into notifications by itself are posted
        // from there; the rest goes through this actor (`handle`), and while anything is on
        // that way, everything is, so that notifications keep the order of the signals.
        let gate = SignalGate()
        let delivery = self.delivery
        let logger = self.logger
        do {
            client = try await DBusClientConnection.connect(bus.client) { signal in delivery.intercept(signal, gate: gate, logger: logger) }
        } catch {
            throw .daemonUnavailable(bus: bus.description, detail: "\(error)")
        }
        // Another task may have connected while this one waited.
        if let connection {
            client.close()
            return connection
        }
        connection = client
        let name = DBusAPI.busName
        do {
            try await client.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'")
            try await client.addMatch(DBusAPI.signalMatch(interface: DBusAPI.managerInterface, path: DBusAPI.managerPath))
            // The daemon sends session signals to their owner only; this match also takes them
            // if they are ever broadcast (the path check in `handle` keeps other sessions' out).
            try await client.addMatch(DBusAPI.signalMatch(interface: DBusAPI.sessionInterface))
            daemonOwner = try await client.nameOwner(name)
            gate.open()
        } catch {
            connection = nil
            client.close()
            throw Wire.error(error, bus: bus.description)
        }
        let signals = client.signals
        pump = Task { [weak self] in
            for await signal in signals {
                guard let self else { return }
                await self.handle(signal)
                gate.handled()
            }
            await self?.connectionEnded(client)
        }
        return client
    }

    private func connectionEnded(_ client: DBusClientConnection) {
        guard connection === client else { return }
        connection = nil
        pump = nil
        let hadDaemon = daemonOwner != nil || sessionPath != nil
        daemonOwner = nil
        sessionPath = nil
        if hadDaemon {
            daemonWasLost = true
            post(.mediaServicesWereLost)
        }
    }

    /// Closes the session (deactivating it with notifyOthersOnDeactivation) and the connection.
    public func close() async {
        if let connection, let sessionPath {
            _ = try? await connection.call(
                destination: DBusAPI.busName, path: sessionPath, interface: DBusAPI.sessionInterface, member: DBusAPI.Session.close.name)
        }
        sessionPath = nil
        wantsSession = false
        connection?.close()
        connection = nil
        pump?.cancel()
        pump = nil
        delivery.finishAll()
    }

    private func handle(_ signal: DBusSignal) async {
        switch (signal.interface, signal.member) {
        case ("org.freedesktop.DBus", "NameOwnerChanged"):
            guard signal.sender == "org.freedesktop.DBus", signal.arguments.count == 3,
                case .string(let name) = signal.arguments[0], name == DBusAPI.busName,
                case .string(let newOwner) = signal.arguments[2]
            else { return }
            await ownerChanged(to: newOwner.isEmpty ? nil : newOwner)
        case (DBusAPI.managerInterface, _), (DBusAPI.monitorInterface, _):
            guard signal.sender != nil, signal.sender == daemonOwner else { return }
            if let notification = NotificationDelivery.broadcast(signal, logger: logger) { post(notification) }
        case (DBusAPI.sessionInterface, _):
            guard signal.sender != nil, signal.sender == daemonOwner, signal.path == sessionPath else { return }
            do throws(AudioSessionError) {
                if let notification = try Wire.sessionNotification(member: signal.member, signal.arguments) { post(notification) }
            } catch {
                logger.warning("audioroute: ignoring \(signal.member) from the daemon: \(error)")
            }
        default:
            return
        }
    }

    /// The daemon left or came back (or was replaced by a new process).
    private func ownerChanged(to newOwner: String?) async {
        let previous = daemonOwner
        daemonOwner = newOwner
        if previous != nil {
            // Everything the old daemon knew about us is gone.
            sessionPath = nil
            daemonWasLost = true
            post(.mediaServicesWereLost)
        }
        guard newOwner != nil else { return }
        if wantsSession {
            do {
                try await reopen()
            } catch {
                logger.warning("audioroute: could not re-open the session after the daemon came back: \(error)")
            }
        }
        // A reset answers a loss (or a session that must be back): not a daemon's first appearance.
        if daemonWasLost || wantsSession {
            daemonWasLost = false
            post(.mediaServicesWereReset)
        }
    }

    /// Opens a session on the new daemon and re-applies category, mode and options.
    /// The session stays inactive: as on iOS, the app reactivates it after the reset.
    private func reopen() async throws(AudioSessionError) {
        sessionPath = nil
        _ = try await ensureSession()
    }

    // MARK: Calls

    private func ensureSession() async throws(AudioSessionError) -> String {
        if let sessionPath { return sessionPath }
        // Calls from several tasks interleave at awaits: they share one OpenSession.
        if let opening {
            do { return try await opening.value } catch { throw error as? AudioSessionError ?? .badReply("\(error)") }
        }
        let task = Task { () async throws -> String in try await self.openSession() }
        opening = task
        defer { opening = nil }
        do { return try await task.value } catch { throw error as? AudioSessionError ?? .badReply("\(error)") }
    }

    private func openSession() async throws(AudioSessionError) -> String {
        let client = try await ensureConnection()
        let reply = try await managerCall(client, DBusAPI.Manager.openSession, [.string(appName)])
        guard case .objectPath(let path)? = reply.first else { throw .badReply("OpenSession did not return an object path") }
        sessionPath = path
        wantsSession = true
        if category != .soloAmbient || mode != .default || !categoryOptions.isEmpty {
            _ = try await sessionCall(
                client, path, DBusAPI.Session.setCategory, DBusAPI.setCategoryArguments(category, mode: mode, options: categoryOptions))
        }
        if !prefersInterruptionOnRouteDisconnect {
            _ = try await sessionCall(client, path, DBusAPI.Session.setPrefersInterruptionOnRouteDisconnect, [.bool(false)])
        }
        return path
    }

    /// Calls `method` on the manager object.
    private func managerCall(
        _ client: DBusClientConnection, _ method: BusMethod, _ arguments: [DBusValue] = []
    ) async throws(AudioSessionError) -> [DBusValue] {
        try await call(client, DBusAPI.managerPath, method, arguments)
    }

    /// Calls `method` on the session at `path`.
    private func sessionCall(
        _ client: DBusClientConnection, _ path: String, _ method: BusMethod, _ arguments: [DBusValue] = []
    ) async throws(AudioSessionError) -> [DBusValue] {
        try await call(client, path, method, arguments)
    }

    private func call(
        _ client: DBusClientConnection, _ path: String, _ method: BusMethod, _ arguments: [DBusValue]
    ) async throws(AudioSessionError) -> [DBusValue] {
        do {
            return try await client.call(
                destination: DBusAPI.busName, path: path, interface: method.interface, member: method.name, signature: method.input,
                arguments: arguments)
        } catch {
            throw Wire.error(error, bus: bus.description)
        }
    }

    private func managerProperty(_ property: BusProperty) async throws(AudioSessionError) -> DBusValue {
        let client = try await ensureConnection()
        return try await self.property(client, DBusAPI.managerPath, property)
    }

    private func sessionProperty(_ property: BusProperty) async throws(AudioSessionError) -> DBusValue {
        let path = try await ensureSession()
        let client = try await ensureConnection()
        return try await self.property(client, path, property)
    }

    private func property(_ client: DBusClientConnection, _ path: String, _ property: BusProperty) async throws(AudioSessionError) -> DBusValue {
        do {
            return try await client.property(destination: DBusAPI.busName, path: path, interface: property.interface, name: property.name)
        } catch {
            throw Wire.error(error, bus: bus.description)
        }
    }

    // MARK: AVAudioSession API

    /// Sets the category, mode and options (options are not sticky). A refused change
    /// (`invalidOption`, `unknownName`) leaves the session as it was.
    public func setCategory(_ category: Category, mode: Mode = .default, options: CategoryOptions = []) async throws(AudioSessionError) {
        let path = try await ensureSession()
        let client = try await ensureConnection()
        _ = try await sessionCall(client, path, DBusAPI.Session.setCategory, DBusAPI.setCategoryArguments(category, mode: mode, options: options))
        self.category = category
        self.mode = mode
        self.categoryOptions = options
    }

    /// Options of `setActive(false, options:)` (AVAudioSession.SetActiveOptions).
    public struct SetActiveOptions: OptionSet, Sendable, Hashable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Sessions this one interrupted get `ended` with `shouldResume`.
        public static let notifyOthersOnDeactivation = SetActiveOptions(rawValue: 1)
    }

    /// Activates or deactivates the session. Activating a non-mixable session interrupts
    /// the other non-mixable sessions.
    public func setActive(_ active: Bool, options: SetActiveOptions = []) async throws(AudioSessionError) {
        let path = try await ensureSession()
        let client = try await ensureConnection()
        _ = try await sessionCall(client, path, DBusAPI.Session.setActive, [.bool(active), .bool(options.contains(.notifyOthersOnDeactivation))])
    }

    /// Whether the daemon considers this session active (false after an interruption began).
    public var isActive: Bool {
        get async throws(AudioSessionError) { try Wire.bool(try await sessionProperty(DBusAPI.Session.activeProperty), "Active") }
    }

    /// The current route, with whole port descriptions.
    public var currentRoute: RouteDescription {
        get async throws(AudioSessionError) { try Wire.route(try await managerProperty(DBusAPI.Manager.routeProperty)) }
    }

    /// Every port present now: those a route may use (available, or of unknown availability),
    /// as AVAudioSession lists only ports that are there. Their `availability` is not said.
    public var availablePorts: [PortDescription] {
        get async throws(AudioSessionError) { try Wire.ports(try await managerProperty(DBusAPI.Manager.portsProperty)) }
    }

    /// Every port the daemon knows, each with its `availability`: `availablePorts` and the
    /// unavailable ones (a headphone jack with nothing plugged in), which no route uses.
    /// A daemon older than Version 2 knows only `availablePorts`: they are returned, with
    /// `availability` nil.
    public var allPorts: [PortDescription] {
        get async throws(AudioSessionError) {
            do throws(AudioSessionError) {
                return try Wire.portsWithAvailability(try await managerProperty(DBusAPI.Manager.allPortsProperty))
            } catch {
                // Only an older daemon lacks the property; anything else is the error it is.
                guard case .remote = error, try await daemonVersion < 2 else { throw error }
                return try await availablePorts
            }
        }
    }

    /// Whether the screen is locked, as the daemon heard from logind (a lock silences ambient
    /// and soloAmbient sessions); nil from a daemon older than Version 3, which does not say.
    public var screenLocked: Bool? {
        get async throws(AudioSessionError) {
            do throws(AudioSessionError) {
                return try Wire.bool(try await managerProperty(DBusAPI.Manager.screenLockedProperty), "ScreenLocked")
            } catch {
                // Only an older daemon lacks the property; anything else is the error it is.
                guard case .remote = error, try await daemonVersion < 3 else { throw error }
                return nil
            }
        }
    }

    /// The sound server the daemon found for the user (PipeWire, PulseAudio, or none, with the
    /// cards it holds); nil from a daemon older than Version 4, which does not say.
    public var soundServer: SoundEngine? {
        get async throws(AudioSessionError) {
            do throws(AudioSessionError) {
                return try Wire.soundEngine(try await managerProperty(DBusAPI.Manager.soundServerProperty))
            } catch {
                guard case .remote = error, try await daemonVersion < 4 else { throw error }
                return nil
            }
        }
    }

    /// Whether the sound server's default sink and source follow the route (which nodes, by which
    /// rule), or why not; nil from a daemon older than Version 5, which does not say.
    public var soundServerDefaults: String? {
        get async throws(AudioSessionError) {
            do throws(AudioSessionError) {
                return try Wire.string(try await managerProperty(DBusAPI.Manager.soundServerDefaultsProperty), "SoundServerDefaults")
            } catch {
                guard case .remote = error, try await daemonVersion < 5 else { throw error }
                return nil
            }
        }
    }

    /// Each session's process, program and state (active, inactive, interrupted; whether it
    /// controls the route, is ducked or silenced), in the order of `sessions`; nil from a daemon
    /// older than Version 7, which does not say.
    public var sessionStates: [SessionState]? {
        get async throws(AudioSessionError) {
            do throws(AudioSessionError) {
                return try Wire.sessionStates(try await managerProperty(DBusAPI.Manager.sessionStatesProperty))
            } catch {
                guard case .remote = error, try await daemonVersion < 7 else { throw error }
                return nil
            }
        }
    }

    /// The revision of the daemon's API (its `Version` property): 2 and later have `allPorts`,
    /// 3 and later `screenLocked`, 4 and later `soundServer`, 5 and later `soundServerDefaults`,
    /// 7 and later `sessionStates`.
    public var daemonVersion: UInt32 {
        get async throws(AudioSessionError) { try Wire.uint32(try await managerProperty(DBusAPI.Manager.versionProperty), "Version") }
    }

    /// The input ports present now (AVAudioSession.availableInputs), each with its data
    /// sources, the selected one and this session's preferred one (from a daemon of Version 4
    /// or later).
    public var availableInputs: [PortDescription] {
        get async throws(AudioSessionError) {
            let inputs = try await availablePorts.filter { $0.direction.isInput }
            guard try await daemonVersion >= 4 else { return inputs }
            var described: [PortDescription] = []
            for input in inputs { described.append(try await dataSources(of: input)) }
            return described
        }
    }

    /// `port` with its `dataSources`, `selectedDataSource` and `preferredDataSource` read from
    /// the daemon (Version 4 or later; an older one gives `unknownMethod` as `.remote`). A port
    /// without data sources gets nil, as iOS gives.
    public func dataSources(of port: PortDescription) async throws(AudioSessionError) -> PortDescription {
        let reply = try await dataSources(uid: port.uid)
        let client = try await ensureConnection()
        var described = port
        let sources = reply.sources.map(DataSourceDescription.init)
        described.dataSources = sources.isEmpty ? nil : sources
        described.selectedDataSource = sources.first { $0.dataSourceID == reply.selected }
        let path = try await ensureSession()
        let preferred = try Wire.string(
            try await sessionCall(client, path, DBusAPI.Session.preferredDataSource, [.string(port.uid)]).first ?? .string(""),
            "PreferredDataSource")
        described.preferredDataSource = sources.first { $0.dataSourceID == preferred }
        return described
    }

    /// The daemon's word on port `uid`'s data sources (`DataSources`, Version 4): the list, the
    /// one in use and why. Opens no session.
    public func dataSources(uid: String) async throws(AudioSessionError) -> DataSourcesReply {
        let client = try await ensureConnection()
        return try Wire.dataSources(try await managerCall(client, DBusAPI.Manager.dataSources, [.string(uid)]))
    }

    /// Sets (or with nil clears) this session's preferred data source of `port`
    /// (AVAudioSessionPortDescription.setPreferredDataSource). While this session controls the
    /// route, the card records from it. Not remembered: it lasts as long as the session, and is
    /// forgotten when the port goes. `unknownPort` / `unknownDataSource` name a bad one.
    public func setPreferredDataSource(_ source: DataSourceDescription?, of port: PortDescription) async throws(AudioSessionError) {
        try await setPreferredDataSource(id: source?.dataSourceID, port: port.uid)
    }

    /// `setPreferredDataSource(_:of:)` by the port's uid and the data source's id.
    public func setPreferredDataSource(id: String?, port uid: String) async throws(AudioSessionError) {
        let path = try await ensureSession()
        let client = try await ensureConnection()
        _ = try await sessionCall(client, path, DBusAPI.Session.setPreferredDataSource, [.string(uid), .string(id ?? "")])
    }

    /// The current route's input port, with its data sources read (nil: the route records nothing).
    private var describedInput: PortDescription? {
        get async throws(AudioSessionError) {
            guard let input = try await currentRoute.inputs.first else { return nil }
            return try await dataSources(of: input)
        }
    }

    /// The data sources of the current route's input port (AVAudioSession.inputDataSources);
    /// nil when it has none or the route records nothing.
    public var inputDataSources: [DataSourceDescription]? {
        get async throws(AudioSessionError) { try await describedInput?.dataSources }
    }

    /// The data source the current route's input uses (AVAudioSession.inputDataSource); nil
    /// when it has none.
    public var inputDataSource: DataSourceDescription? {
        get async throws(AudioSessionError) { try await describedInput?.selectedDataSource }
    }

    /// Prefers `source` for the current route's input port (AVAudioSession.setInputDataSource);
    /// nil clears the preference. `unknownPort` when the route records nothing.
    public func setInputDataSource(_ source: DataSourceDescription?) async throws(AudioSessionError) {
        guard let input = try await currentRoute.inputs.first else { throw .unknownPort("the current route has no input") }
        try await setPreferredDataSource(id: source?.dataSourceID, port: input.uid)
    }

    /// The data sources of the current route's output (AVAudioSession.outputDataSources): nil.
    /// No output port has data sources on Linux (a UCM profile's outputs are ports of their own).
    public var outputDataSources: [DataSourceDescription]? { nil }

    /// The output's data source (AVAudioSession.outputDataSource): nil, as `outputDataSources`.
    public var outputDataSource: DataSourceDescription? { nil }

    /// The preferred input, if one is set and present.
    public var preferredInput: PortDescription? {
        get async throws(AudioSessionError) {
            let uid = try Wire.string(try await sessionProperty(DBusAPI.Session.preferredInputProperty), "PreferredInput")
            guard !uid.isEmpty else { return nil }
            return try await availablePorts.first { $0.uid == uid }
        }
    }

    /// Sets (or with nil clears) the preferred input. Remembered under `appName`.
    public func setPreferredInput(_ input: PortDescription?) async throws(AudioSessionError) {
        try await setPreferredInput(uid: input?.uid)
    }

    /// Sets (or with nil clears) the preferred input by uid.
    public func setPreferredInput(uid: String?) async throws(AudioSessionError) {
        let path = try await ensureSession()
        let client = try await ensureConnection()
        _ = try await sessionCall(client, path, DBusAPI.Session.setPreferredInput, [.string(uid ?? "")])
    }

    /// Overrides the output to the built-in speaker (playAndRecord only), or removes the override.
    /// A port arrival or removal clears it.
    public func overrideOutputAudioPort(_ override: OutputOverride) async throws(AudioSessionError) {
        let path = try await ensureSession()
        let client = try await ensureConnection()
        _ = try await sessionCall(client, path, DBusAPI.Session.overrideOutput, [.string(override.rawValue)])
    }

    /// Whether a route disconnect interrupts this (playback) session. Default true.
    public func setPrefersInterruptionOnRouteDisconnect(_ value: Bool) async throws(AudioSessionError) {
        let path = try await ensureSession()
        let client = try await ensureConnection()
        _ = try await sessionCall(client, path, DBusAPI.Session.setPrefersInterruptionOnRouteDisconnect, [.bool(value)])
        prefersInterruptionOnRouteDisconnect = value
    }

    /// True while another app's non-mixable session is active.
    public var secondaryAudioShouldBeSilencedHint: Bool {
        get async throws(AudioSessionError) {
            try Wire.bool(
                try await sessionProperty(DBusAPI.Session.secondaryAudioShouldBeSilencedHintProperty), "SecondaryAudioShouldBeSilencedHint")
        }
    }

    /// True while any other session is active.
    public var isOtherAudioPlaying: Bool {
        get async throws(AudioSessionError) { try Wire.bool(try await sessionProperty(DBusAPI.Session.otherAudioPlayingProperty), "OtherAudioPlaying") }
    }

    // MARK: The route manager (not per session)

    /// Sets a port's priority (-1000…1000), saved by the daemon.
    public func setPriority(_ priority: Int, forPort uid: String) async throws(AudioSessionError) {
        guard let value = Int32(exactly: priority) else { throw .invalidArguments("priority \(priority) is out of range") }
        let client = try await ensureConnection()
        _ = try await managerCall(client, DBusAPI.Manager.setPortPriority, [.string(uid), .int32(value)])
    }

    /// The ring/silent switch: silences ambient and soloAmbient sessions.
    public var silentMode: Bool {
        get async throws(AudioSessionError) { try Wire.bool(try await managerProperty(DBusAPI.Manager.silentModeProperty), "SilentMode") }
    }

    public func setSilentMode(_ on: Bool) async throws(AudioSessionError) {
        let client = try await ensureConnection()
        _ = try await managerCall(client, DBusAPI.Manager.setSilentMode, [.bool(on)])
    }

    /// Every session the daemon holds.
    public var sessions: [SessionSummary] {
        get async throws(AudioSessionError) { try Wire.sessions(try await managerProperty(DBusAPI.Manager.sessionsProperty)) }
    }

    /// Which rule chose the current route, and why each other port lost.
    public func explain() async throws(AudioSessionError) -> ExplainReply {
        let client = try await ensureConnection()
        return try Wire.explanation(try await managerCall(client, DBusAPI.Manager.explain))
    }

    /// The object path of this session while open (nil before first use and while the daemon is away).
    public var objectPath: String? { sessionPath }
}
