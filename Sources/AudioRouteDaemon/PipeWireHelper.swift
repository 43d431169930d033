// The daemon's side of the PipeWire helper (docs/daemon.md, "The PipeWire helper"): while the
// user's sound server is PipeWire, one `audioroute-pipewire` process reports the server's audio
// nodes and ALSA cards, and after every route change the daemon tells it the route's default sink
// and source (the nodes of the route's first output and input: AudioRouteCore's
// PipeWireNodeMapping), and first each card's profile where the route needs another (its port has
// no node under the active one: AudioRouteCore's CardProfiles). The
// daemon links no libpipewire (its 4 MiB do not fit the daemon's budget); an idle helper wakes
// no one. A helper that ends while the server still runs is started again, a few times.
// While the server is PulseAudio, `audioroute-pulse` takes the PipeWire helper's place: the same
// protocol, the same mapping (docs/daemon.md, "The PulseAudio helper").
import AudioRouteCore
import AudioRouteSystem
import AudioRouteUCMHelper
import Logging
import Synchronization

/// The PipeWire helper and what it reported: started when the engine becomes PipeWire, stopped
/// when it stops being PipeWire, told the route's defaults; the PulseAudio helper likewise.
public final class PipeWireHelper: Sendable {
    /// The helper's path (`audioroute-pipewire`), started while the server is PipeWire; nil: none.
    public let executable: String?
    /// The PulseAudio helper's path (`audioroute-pulse`), started instead while the server is PulseAudio; nil: none.
    public let pulseExecutable: String?
    let runtimeDirectory: String
    let loop: any PollLoop
    let logger: Logger
    /// The cards' indices by id (`Intel` → 0): a port names its card by id, a PipeWire node by index.
    let readCards: @Sendable () -> [String: Int]
    private let state = Mutex(State())

    /// The server's client streams (`Stream/Output/Audio`, `Stream/Input/Audio` nodes) by node id,
    /// after every change of them: empty when the helper stops or ends (PipeWireStreamService).
    public let streamUpdates = Broadcast<[UInt32: PipeWireNode]>()

    /// Starts after the helper ended without a hello this many times in a row are not tried.
    public static let maximumRestarts = 3

    private struct State {
        var process: HelperProcess?
        /// Which start this is: a line or an end from an older process is not this one's.
        var generation: UInt64 = 0
        /// Whether the engine is PipeWire or PulseAudio with its helper (a helper should run).
        var wanted = false
        /// The server the helper is for.
        var server: SoundServerKind?
        var ready = false
        var serverVersion: String?
        var nodes: [UInt32: PipeWireNode] = [:]
        /// The server's ALSA cards with their profiles, by device id.
        var devices: [UInt32: PipeWireDevice] = [:]
        /// What was asked of each card's profile (asked once; not again when the server keeps setting it back).
        var profiles = CardProfileFollower()
        var route = RoutePorts()
        /// The last defaults sent, and what status says of them.
        var sent: PipeWireDefaults?
        var follows = "the sound server is not PipeWire"
        var failuresInARow = 0
    }

    /// - Parameters:
    ///   - runtimeDirectory: the user's XDG_RUNTIME_DIR, where the sound-server watcher found `pipewire-0`.
    ///   - loop: where the helper's lines are read (the daemon's executor).
    public init(
        executable: String?, pulseExecutable: String? = nil, runtimeDirectory: String, loop: any PollLoop, logger: Logger,
        readCards: @escaping @Sendable () -> [String: Int] = ALSACardIndices.read
    ) {
        self.executable = executable
        self.pulseExecutable = pulseExecutable
        self.runtimeDirectory = runtimeDirectory
        self.loop = loop
        self.logger = logger
        self.readCards = readCards
    }

    /// `audioroute-pipewire` as given (`--pipewire-helper`; "none": no helper), else beside the
    /// daemon's executable, else from PATH.
    public static func executable(option: String?, beside directory: String?) -> String? {
        if let option { return option == "none" ? nil : option }
        if let directory, CurrentProcess.isExecutable(directory + "/audioroute-pipewire") { return directory + "/audioroute-pipewire" }
        return "audioroute-pipewire"
    }

    /// What `status` says: whether the server's default follows the route, and if not, why.
    public var follows: String { state.withLock { $0.follows } }

    /// The engine the sound-server watcher found: PipeWire starts `executable`, PulseAudio
    /// `pulseExecutable` (each when given), anything else stops the helper.
    public func engineChanged(_ engine: SoundEngine) {
        let server = engine.server.flatMap { helperPath(for: $0) == nil ? nil : $0 }
        let (changed, stopping): (Bool, HelperProcess?) = state.withLock { state in
            guard server != state.server else { return (false, nil) }
            state.server = server
            state.wanted = server != nil
            state.failuresInARow = 0
            if server == nil {
                state.follows = engine.server.map { "the daemon runs no \($0.displayName) helper" } ?? "the sound server is neither PipeWire nor PulseAudio"
            }
            return (true, take(&state))
        }
        stopping?.stop()
        // The old server's streams' sessions close; the new helper's hello reports its own.
        if changed { streamUpdates.send([:]) }
        if server != nil { start() }
    }

    private func helperPath(for server: SoundServerKind) -> String? { server == .pulseaudio ? pulseExecutable : executable }

    /// "PipeWire helper" or "PulseAudio helper", for the log and `status`.
    private static func name(_ state: State) -> String { "\((state.server ?? .pipewire).displayName) helper" }

    /// The route changed: its defaults are sent once the helper has said hello.
    public func routeChanged(_ ports: RoutePorts) {
        let lines = state.withLock { state in
            state.route = ports
            return update(&state)
        }
        for line in lines { send(line) }
    }

    /// Stops the helper (the daemon is stopping).
    public func stop() {
        state.withLock { state in
            state.wanted = false
            state.server = nil
            return take(&state)
        }?.stop()
        streamUpdates.send([:])
    }

    /// The server's client streams as the helper last reported them (none before its hello).
    public var streams: [UInt32: PipeWireNode] { state.withLock { Self.streams(of: $0) } }

    /// Asks the helper to pause or start a client's stream and set its volume; false when no
    /// helper reads (the control is lost with the helper, whose streams are closed anyway).
    @discardableResult
    public func control(_ control: PipeWireStreamControl) -> Bool {
        let process = state.withLock { $0.ready ? $0.process : nil }
        return process?.send(PipeWireHelperProtocol.line(.stream(control))) == true
    }

    /// The clients' streams that become sessions, on PipeWire and on PulseAudio (whose helper
    /// mutes a stream for a pause: docs/daemon.md).
    private static func streams(of state: State) -> [UInt32: PipeWireNode] {
        guard state.server != nil else { return [:] }
        return state.nodes.filter { $0.value.mediaClass?.hasPrefix("Stream/") == true }
    }

    /// "PipeWire" or "PulseAudio": the server whose streams are sessions, for the log.
    public var serverName: String { state.withLock { ($0.server ?? .pipewire).displayName } }

    // MARK: -

    /// Forgets the running process, for the caller to stop outside the lock.
    private func take(_ state: inout State) -> HelperProcess? {
        let process = state.process
        state.process = nil
        state.generation += 1
        state.ready = false
        state.nodes = [:]
        state.devices = [:]
        state.profiles = CardProfileFollower()
        state.sent = nil
        return process
    }

    private func start() {
        let started: (generation: UInt64, server: SoundServerKind, name: String)? = state.withLock { state in
            guard state.wanted, state.process == nil, let server = state.server else { return nil }
            return (state.generation, server, Self.name(state))
        }
        guard let (generation, server, name) = started, let executable = helperPath(for: server) else { return }
        let process: HelperProcess
        do throws(Errno) {
            process = try HelperProcess.start(name: name, executable: executable, environment: ["XDG_RUNTIME_DIR": runtimeDirectory], logger: logger)
        } catch {
            logger.error("\(name) not started: the server's default does not follow the route", metadata: ["helper": "\(executable)", "error": "\(error)"])
            state.withLock { $0.follows = "the \(name) could not be started (\(executable): \(error))" }
            return
        }
        let kept = state.withLock { state in
            guard state.wanted, state.generation == generation, state.process == nil else { return false }
            state.process = process
            state.follows = "waiting for the \(name)'s hello"
            return true
        }
        guard kept else { return process.stop() }
        process.read(on: loop) { [self] line in
            guard let line else { return ended(generation) }
            handle(line, generation: generation)
        }
    }

    private func ended(_ generation: UInt64) {
        let restart: Bool = state.withLock { state in
            guard state.generation == generation else { return false }
            let hadHello = state.ready
            _ = take(&state)
            state.failuresInARow = hadHello ? 0 : state.failuresInARow + 1
            guard state.wanted else { return false }
            guard state.failuresInARow < Self.maximumRestarts else {
                state.follows = "the \(Self.name(state)) ended \(Self.maximumRestarts) times without a hello: not started again until the server changes"
                return false
            }
            state.follows = "the \(Self.name(state)) ended; started again"
            return true
        }
        // Its streams' sessions close; the new helper's hello reports them again.
        streamUpdates.send([:])
        if restart { start() }
    }

    private func handle(_ bytes: [UInt8], generation: UInt64) {
        let event: PipeWireHelperEvent
        switch PipeWireHelperProtocol.event(bytes) {
        case .failure(let error):
            logger.warning("\(state.withLock { Self.name($0) }): a line not understood", metadata: ["error": "\(error)"])
            return
        case .success(let value): event = value
        }
        var lines: [JSON] = []
        var streams: [UInt32: PipeWireNode]?
        state.withLock { state in
            guard state.generation == generation else { return }
            switch event {
            case .hello(let version):
                state.ready = true
                state.serverVersion = version
                state.failuresInARow = 0
                logger.notice("\(Self.name(state)) connected", metadata: ["server": "\(version)"])
                lines = update(&state)
                streams = Self.streams(of: state)
            case .node(let node, _):
                let before = state.nodes.updateValue(node, forKey: node.id)
                // A client's stream does not change which node a port is.
                if node.mediaClass?.hasPrefix("Stream/") != true { lines = update(&state) }
                if state.ready, node.mediaClass?.hasPrefix("Stream/") == true || before?.mediaClass?.hasPrefix("Stream/") == true {
                    streams = Self.streams(of: state)
                }
            case .removed(let id):
                let node = state.nodes.removeValue(forKey: id)
                if node?.mediaClass?.hasPrefix("Stream/") != true { lines = update(&state) } else if state.ready { streams = Self.streams(of: state) }
            case .device(let device, _):
                state.devices[device.id] = device
                state.profiles.deviceChanged(device)
                lines = update(&state)
            case .deviceRemoved(let id):
                state.devices[id] = nil
                state.profiles.deviceRemoved(id)
                lines = update(&state)
            case .profileSet(let request):
                logger.info("card profile set", metadata: ["request": "\(request)"])
            case .profileFailed(let request, let message):
                logger.warning("card profile not set", metadata: ["request": "\(request)", "error": "\(message)"])
                state.profiles.requestFailed(device: request.device)
                lines = update(&state)
            case .streamSet(let id):
                logger.info("\((state.server ?? .pipewire).displayName) stream controlled", metadata: ["node": "\(id)"])
            case .streamFailed(let id, let message):
                logger.warning("\((state.server ?? .pipewire).displayName) stream not controlled", metadata: ["node": "\(id)", "error": "\(message)"])
            case .defaultsSet(let defaults):
                logger.notice("the server's defaults follow the route", metadata: ["sink": "\(defaults.sink ?? "unchanged")", "source": "\(defaults.source ?? "unchanged")"])
            case .defaultsFailed(let defaults, let message):
                logger.error("the server's defaults not set", metadata: ["defaults": "\(defaults)", "error": "\(message)"])
                state.follows = "the server refused the route's defaults (\(defaults)): \(message)"
                state.sent = nil
            case .error(let message):
                logger.warning("\(Self.name(state))", metadata: ["error": "\(message)"])
            }
        }
        for line in lines { send(line) }
        if let streams { streamUpdates.send(streams) }
    }

    /// The lines for the current route, nodes and cards: each card's profile where the route
    /// needs another (asked once), then the defaults if they differ from the last sent; `follows`
    /// says what was chosen and why.
    private func update(_ state: inout State) -> [JSON] {
        guard state.ready else { return [] }
        let cards = readCards()
        let nodes = state.nodes.values.sorted { $0.id < $1.id }
        var lines = profiles(&state, nodes: nodes, cards: cards)
        if let line = defaults(&state, nodes: nodes, cards: cards) { lines.append(line) }
        return lines
    }

    /// The profile requests the route needs (CardProfiles' rules), each asked once (CardProfileFollower).
    private func profiles(_ state: inout State, nodes: [PipeWireNode], cards: [String: Int]) -> [JSON] {
        var lines: [JSON] = []
        for device in state.devices.values.sorted(by: { $0.id < $1.id }) {
            let on = CardProfiles.routePorts(on: device, route: state.route, cards: cards)
            let present =
                on.outputs.allSatisfy { PipeWireNodeMapping.node(for: $0, direction: .output, among: nodes, cards: cards).node != nil }
                && on.inputs.allSatisfy { PipeWireNodeMapping.node(for: $0, direction: .input, among: nodes, cards: cards).node != nil }
            let choice = CardProfiles.choose(for: device, route: state.route, cards: cards, nodesPresent: present)
            guard let profile = choice.profile else {
                state.profiles.settled(device)
                continue
            }
            switch state.profiles.ask(choice, device: device) {
            case .wait: continue
            case .gaveUp(let setBacks):
                logger.warning(
                    "the server set the card's profile back \(setBacks) times: AudioRoute stops asking for it",
                    metadata: ["device": "\(device.id) \(device.name ?? "")", "profile": "\(profile.summary)", "active": "\(device.activeProfile?.summary ?? "none")"])
                continue
            case .ask: break
            }
            logger.notice("setting the card's profile for the route", metadata: ["device": "\(device.id) \(device.name ?? "")", "choice": "\(choice)"])
            lines.append(PipeWireHelperProtocol.line(.profile(PipeWireProfileRequest(device: device.id, index: profile.index))))
        }
        return lines
    }

    /// The defaults line for the current route and nodes, if it differs from the last sent.
    private func defaults(_ state: inout State, nodes: [PipeWireNode], cards: [String: Int]) -> JSON? {
        let mapped = PipeWireNodeMapping.defaults(output: state.route.outputs.first, input: state.route.inputs.first, among: nodes, cards: cards)
        var said: [String] = []
        let server = (state.server ?? .pipewire).displayName
        for (what, port, choice) in [("sink", state.route.outputs.first, mapped.output), ("source", state.route.inputs.first, mapped.input)] {
            guard let port, let choice else { continue }
            if let node = choice.node {
                said.append("\(server)'s default \(what) follows the route: \(port.uid) is node \(node.id) \"\(node.name ?? "")\" (\(choice.rule): \(choice.reason))")
            } else {
                said.append("\(server)'s default \(what) does not follow the route: no node for \(port.uid) (\(choice.reason))")
            }
        }
        state.follows = said.isEmpty ? "the route has no port" : said.joined(separator: "; ")
        guard mapped.defaults != state.sent, mapped.defaults.sink != nil || mapped.defaults.source != nil else { return nil }
        state.sent = mapped.defaults
        logger.info("setting the server's defaults", metadata: ["defaults": "\(mapped.defaults)", "why": "\(state.follows)"])
        return PipeWireHelperProtocol.line(.defaults(mapped.defaults))
    }

    private func send(_ line: JSON) {
        let process = state.withLock { $0.process }
        if process?.send(line) != true { logger.warning("the sound server's helper not reading: a request not sent") }
    }
}

/// The route's ports, handed to the PipeWire helper after every route change.
public struct PipeWireDefaultsApplier: RouteApplier {
    public let helper: PipeWireHelper

    /// An applier that hands each changed route to `helper`.
    public init(helper: PipeWireHelper) { self.helper = helper }

    /// Hands the route's ports to the helper when the route changed (or at the start).
    public func apply(_ applied: AppliedRoute) {
        guard let ports = applied.ports else { return }
        helper.routeChanged(ports)
    }
}

/// The machine's ALSA cards' indices by id, from sysfs (`/sys/class/sound/card<N>/id`).
public enum ALSACardIndices {
    /// Cards 0 to 31 (the kernel's SNDRV_CARDS default); a card that cannot be read is left out.
    public static let read: @Sendable () -> [String: Int] = {
        var cards: [String: Int] = [:]
        for index in 0..<32 {
            guard let bytes = try? AtomicFile.readRegularFile("/sys/class/sound/card\(index)/id", limit: 4096) else { continue }
            let id = String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
            if !id.isEmpty { cards[id] = index }
        }
        return cards
    }
}
