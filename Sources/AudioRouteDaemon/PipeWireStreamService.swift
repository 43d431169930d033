// The sound server's client streams as tower sessions (docs/daemon.md, "The server's streams
// as sessions"), on PipeWire and on PulseAudio (whose helper reports sink inputs and source
// outputs as these nodes): each `Stream/Output/Audio` and `Stream/Input/Audio` node the helper reports opens
// a session `pipewire/<node id>`, its category from its `media.role` (StreamRoleTable), active at
// once; the tower's events for it become the helper's stream requests (Pause or Start, the node's
// volume; on PulseAudio a mute and the stream's volume). A node gone closes its session, which lets the sessions it interrupted resume.
import AudioRouteCore
import AudioRouteSystem
import Logging
import ServiceLifecycle

/// Runs the streams' sessions while the daemon runs.
public struct PipeWireStreamService: Service {
    public let helper: PipeWireHelper
    public let routes: RouteService
    public let roles: StreamRoleTable
    public let logger: Logger

    public init(helper: PipeWireHelper, routes: RouteService, roles: StreamRoleTable, logger: Logger) {
        self.helper = helper
        self.routes = routes
        self.roles = roles
        self.logger = logger
    }

    public func run() async throws {
        let sessions = PipeWireStreamSessions(helper: helper, routes: routes, roles: roles, logger: logger)
        // Subscribed before the current streams are read: a later snapshot is never older.
        let updates = helper.streamUpdates.subscribe()
        let events = routes.serverStreamEvents.subscribe()
        let helper = self.helper
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { tasks in
                tasks.addTask {
                    await sessions.streamsChanged(helper.streams)
                    for await streams in updates { await sessions.streamsChanged(streams) }
                }
                tasks.addTask {
                    for await event in events { await sessions.handle(event) }
                }
                await tasks.next()
                tasks.cancelAll()
            }
        }
        // The daemon stops: every stream plays again at its own volume, and the sessions close.
        await sessions.streamsChanged([:])
    }
}

/// The streams' sessions and what each was last told.
actor PipeWireStreamSessions {
    /// The session id prefix of a server's stream.
    static let prefix = "pipewire/"

    let helper: PipeWireHelper
    let routes: RouteService
    let roles: StreamRoleTable
    let logger: Logger

    struct Stream {
        var node: PipeWireNode
        var paused = false
        var ducked = false
        var silenced = false
        /// What the helper was last asked (a new stream plays, at its own volume).
        var sent: PipeWireStreamControl

        var control: PipeWireStreamControl {
            PipeWireStreamControl(id: node.id, paused: paused, volume: silenced ? 0 : ducked ? SessionEvent.duckedGain : 1)
        }
    }

    private var streams: [UInt32: Stream] = [:]
    /// Streams of AudioRoute's own clients, left alone until they go.
    private var leftAlone: Set<UInt32> = []

    init(helper: PipeWireHelper, routes: RouteService, roles: StreamRoleTable, logger: Logger) {
        self.helper = helper
        self.routes = routes
        self.roles = roles
        self.logger = logger
    }

    /// Whether a stream is a session: every output stream, and an input stream that says its
    /// role. A recorder without one is most often a level meter or a monitor (pavucontrol's
    /// peaks, parec of a sink's monitor), which must not interrupt what plays (docs/decisions.md).
    /// A stream of the server's own (PulseAudio's filter and loopback modules give theirs these
    /// roles: module-remap-source, -echo-cancel, -ladspa-sink, -loopback, …) is part of a device,
    /// not an application's: pausing it would silence the device (docs/decisions.md).
    static func isSession(_ node: PipeWireNode) -> Bool {
        let role = (node.properties["media.role"] ?? "").lowercased()
        if role == "filter" || role == "abstract" { return false }
        return node.mediaClass == "Stream/Output/Audio" || node.mediaClass == "Stream/Input/Audio" && !role.isEmpty
    }

    /// The helper's streams now: sessions for the new, the gone ones closed.
    func streamsChanged(_ all: [UInt32: PipeWireNode]) async {
        let current = all.filter { Self.isSession($0.value) }
        for id in streams.keys.sorted() where current[id] == nil {
            guard let stream = streams.removeValue(forKey: id) else { continue }
            // A stream left paused or lowered by us plays again (when the helper still has it).
            if stream.sent != PipeWireStreamControl(id: id, paused: false, volume: 1) {
                helper.control(PipeWireStreamControl(id: id, paused: false, volume: 1))
            }
            do throws(SessionError) {
                try await routes.closeSession(Self.prefix + "\(id)")
                logger.info("\(helper.serverName) stream's session closed", metadata: ["node": "\(id)"])
            } catch {
                logger.warning("\(helper.serverName) stream's session not closed", metadata: ["node": "\(id)", "error": "\(error)"])
            }
        }
        leftAlone = leftAlone.filter { current[$0] != nil }
        for (id, node) in current.sorted(by: { $0.key < $1.key }) where streams[id] == nil && !leftAlone.contains(id) {
            await open(node)
        }
        for (id, node) in current { streams[id]?.node = node }
    }

    private func open(_ node: PipeWireNode) async {
        let id = Self.prefix + "\(node.id)"
        // A stream of an AudioRoute client is that client's session already: not counted twice.
        let pid = node.properties["application.process.id"].flatMap { UInt32($0) }
        if let pid, await routes.hasSession(processID: pid) {
            logger.info("\(helper.serverName) stream of a client with a session: left alone", metadata: ["node": "\(node.id)", "pid": "\(pid)"])
            leftAlone.insert(node.id)
            return
        }
        let (configuration, entry) = roles.configuration(forRole: node.properties["media.role"])
        let name = node.properties["application.name"] ?? node.name
        streams[node.id] = Stream(node: node, sent: PipeWireStreamControl(id: node.id, paused: false, volume: 1))
        do throws(SessionError) {
            try await routes.openSession(id: id, name: name, streamProcess: pid)
            try await routes.setCategory(configuration.category, mode: configuration.mode, options: configuration.options, session: id)
            // An unplug's interruption has no end: a stream paused by it could not be resumed
            // (its application never learnt of the pause). The server moves it instead.
            try await routes.setPrefersInterruptionOnRouteDisconnect(false, session: id)
            // A stream that exists plays: its session is active from the start.
            try await routes.setActive(true, session: id)
            logger.info(
                "\(helper.serverName) stream is a session",
                metadata: [
                    "session": "\(id)", "app": "\(name ?? "")", "category": "\(configuration.category.rawValue)", "mode": "\(configuration.mode.rawValue)",
                    "options": "\(configuration.options.names)", "why": "\(entry)",
                ])
        } catch {
            logger.warning("\(helper.serverName) stream's session refused", metadata: ["session": "\(id)", "error": "\(error)"])
        }
    }

    /// A tower event: for a stream's session, what its node is asked.
    func handle(_ event: SessionEvent) async {
        guard event.session.hasPrefix(Self.prefix), let id = UInt32(event.session.dropFirst(Self.prefix.count)), var stream = streams[id] else { return }
        switch event.kind {
        case .interruptionBegan: stream.paused = true
        case .interruptionEnded:
            // Resumed whether or not the tower says it should: the stream's application was never
            // told of the pause and cannot resume it itself (docs/decisions.md).
            stream.paused = false
        case .ducked: stream.ducked = true
        case .unducked: stream.ducked = false
        case .silenced: stream.silenced = true
        case .unsilenced: stream.silenced = false
        case .silenceSecondaryAudioBegin, .silenceSecondaryAudioEnd: return
        }
        let control = stream.control
        if control != stream.sent {
            logger.info("\(helper.serverName) stream", metadata: ["session": "\(event.session)", "event": "\(event.kind.name)", "control": "\(control)"])
            if helper.control(control) { stream.sent = control }
        }
        streams[id] = stream
        if case .interruptionEnded = event.kind {
            do throws(SessionError) {
                try await routes.setActive(true, session: event.session)
            } catch {
                logger.warning("\(helper.serverName) stream's session not activated again", metadata: ["session": "\(event.session)", "error": "\(error)"])
            }
        }
    }
}

extension StreamRoleTable {
    /// The default roles file, read when it exists and no `--roles` is given.
    public static let defaultPath = "/etc/audioroute/roles.json"

    /// The table from `path` (`--roles`), else from `defaultPath` when it exists, else the built-in
    /// one; a file that cannot be read or is malformed is logged with its fault, and the built-in
    /// table stays.
    public static func load(path: String?, logger: Logger) -> StreamRoleTable {
        let file = path ?? defaultPath
        let bytes: [UInt8]
        do throws(FileReadError) {
            bytes = try AtomicFile.readRegularFile(file, limit: maximumFileSize)
        } catch {
            var missing = false
            if case .system(let errno) = error, errno.code == .noSuchFileOrDirectory { missing = true }
            if path != nil || !missing {
                logger.error("roles file not read: the built-in role table applies", metadata: ["file": "\(file)", "error": "\(error)"])
            }
            return .builtIn
        }
        switch parse(bytes) {
        case .success(let table):
            logger.notice("roles file read", metadata: ["file": "\(file)", "roles": "\(table.roles.count)"])
            return table
        case .failure(let fault):
            logger.error("roles file refused: the built-in role table applies", metadata: ["file": "\(file)", "error": "\(fault)"])
            return .builtIn
        }
    }
}
