// Spec §6–§7: the control tower. It holds the ports and the sessions of every
// client, arbitrates activation (interrupt, duck, mix), follows the controlling
// session and announces route changes with their reasons. Pure state: the
// daemon and the simulator drive it, and deliver what it returns.

/// A notification to one session (spec §7).
public struct SessionEvent: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case interruptionBegan(reason: InterruptionReason)
        case interruptionEnded(shouldResume: Bool)
        /// Another session with duckOthers is active: lower the gain (suggested 0.3).
        case ducked
        case unducked
        /// An ambient session should silence secondary audio (another non-mixable session plays).
        case silenceSecondaryAudioBegin
        case silenceSecondaryAudioEnd
        /// Silent mode or screen lock silences this ambient/soloAmbient session.
        case silenced
        case unsilenced

        /// The spec's event type name.
        public var name: String {
            switch self {
            case .interruptionBegan: return "interruptionBegan"
            case .interruptionEnded: return "interruptionEnded"
            case .ducked: return "ducked"
            case .unducked: return "unducked"
            case .silenceSecondaryAudioBegin: return "silenceSecondaryAudioBegin"
            case .silenceSecondaryAudioEnd: return "silenceSecondaryAudioEnd"
            case .silenced: return "silenced"
            case .unsilenced: return "unsilenced"
            }
        }
    }

    public var session: String
    public var kind: Kind

    public init(session: String, kind: Kind) {
        self.session = session
        self.kind = kind
    }

    /// The gain a ducked session should apply.
    public static let duckedGain: Double = 0.3
}

/// A port that arrived or went away (`portsChanged`), whether or not the route moved.
public struct PortChange: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, Codable {
        case added
        case removed
        case updated
    }

    public var kind: Kind
    public var port: Port

    public init(kind: Kind, port: Port) {
        self.kind = kind
        self.port = port
    }
}

/// What one request did: the route change (if the route moved), the session
/// notifications in delivery order, the port changes and any warnings.
public struct TowerOutcome: Sendable, Hashable {
    public var change: RouteChange?
    public var events: [SessionEvent] = []
    public var portChanges: [PortChange] = []
    public var warnings: [String] = []
}

/// One client's session.
public struct Session: Sendable, Hashable {
    public let id: String
    public internal(set) var configuration: SessionConfiguration = .initial
    public internal(set) var isActive = false
    public internal(set) var override: OutputOverride = .none
    public internal(set) var preferredInput: String?
    /// The preferred data source of each port that has data sources, by port uid: the
    /// controlling session's picks the one the card enables. Forgotten when the port goes.
    public internal(set) var preferredDataSources: [String: String] = [:]
    /// Whether a playback session is interrupted when its output goes away.
    public var prefersInterruptionOnRouteDisconnect = true
    /// Order of the latest activation: the controlling session is the most recent.
    var activationStamp: UInt64 = 0
    /// The session whose activation interrupted this one, until it is told or resumes.
    var interruptedBy: String?
    /// Interrupted by the built-in mic's mute: told `ended` at the unmute unless it resumed first.
    var interruptedByMicMute = false
    // What the session was last told, so that only changes are announced.
    var toldDucked = false
    var toldSilenceHint = false
    var toldSilenced = false

    public init(id: String, configuration: SessionConfiguration = .initial) {
        self.id = id
        self.configuration = configuration
    }

    var request: RouteRequest { RouteRequest(configuration: configuration, override: override, preferredInput: preferredInput) }

    /// Inactive because another session's activation or the built-in mic's mute interrupted it,
    /// until that ends or it activates again. An unplug's interruption (`routeDisconnected`) has
    /// no end: that session is merely inactive.
    public var isInterrupted: Bool { !isActive && (interruptedBy != nil || interruptedByMicMute) }
    /// Active and told `ducked` (another active session ducks others).
    public var isDucked: Bool { isActive && toldDucked }
    /// Active and told `silenced` (silent mode or the screen lock).
    public var isSilenced: Bool { isActive && toldSilenced }
}

/// Last-in-wins memory: every arrival gets a number larger than any before it.
/// The daemon persists it so that order survives restarts.
public struct SequenceMemory: Sendable, Hashable, Codable {
    public private(set) var counter: UInt64 = 0
    /// The sequence each uid last had.
    public private(set) var last: [String: UInt64] = [:]

    public init() {}

    /// A fresh number for a port that arrives now.
    public mutating func arrival(of uid: String) -> UInt64 {
        counter += 1
        last[uid] = counter
        return counter
    }

    /// Records a sequence given from outside (a restored or explicit one).
    public mutating func record(_ sequence: UInt64, for uid: String) {
        counter = max(counter, sequence)
        last[uid] = sequence
    }
}

public struct Tower: Sendable {
    /// The available ports, in arrival order.
    public private(set) var ports: [Port] = []
    /// The sessions, in the order they were opened.
    public private(set) var sessions: [Session] = []
    /// The route of the controlling session.
    public private(set) var route: Route = .empty
    /// Which rules chose the current route.
    public private(set) var resolution = Resolution()
    public private(set) var silentMode = false
    public private(set) var screenLocked = false
    /// Whether the hardware reports the built-in microphone muted.
    public private(set) var builtInMicMuted = false
    /// The devices whose inputs the hardware reports muted (`PortEvent.inputMuted`).
    public private(set) var mutedInputDevices: Set<String> = []
    public private(set) var sequences = SequenceMemory()
    private var activations: UInt64 = 0
    /// The ALSA PCMs of the route's ports as announced, to notice configuration changes.
    private var routeConfiguration: [ALSADevice?] = []
    /// The data sources the route's ports use (nil for a port without any), to notice a switch.
    private var routeSelectedSources: [String?] = []
    /// The devices of the route's ports, outputs and inputs, to tell a profile
    /// switch on the same devices from a move to another device.
    private var routeDevices: Set<String> = []

    /// An empty tower; `sequences` is the last-in memory restored from disk.
    /// Ports arrive through `addPorts` (with `restoring: true` at start-up).
    public init(sequences: SequenceMemory = SequenceMemory()) {
        self.sequences = sequences
    }

    // MARK: Queries

    public func session(_ id: String) -> Session? { sessions.first { $0.id == id } }

    public func port(_ uid: String) -> Port? { ports.first { $0.uid == uid } }

    /// The data source port `uid` uses now, and why (nil: no such port, or it has none): the
    /// controlling session's preference for it, else the profile's highest priority
    /// (`DataSourceSelection.select`).
    public func selectedDataSource(_ uid: String) -> DataSourceSelection? {
        guard let port = port(uid) else { return nil }
        return DataSourceSelection.select(port: port, preferred: controllingSession?.preferredDataSources[uid])
    }

    /// Port `uid` as the route uses it: with the selected data source's PCM, when it has one
    /// (the route file opens what the card really records from).
    public func routePort(_ uid: String) -> Port? {
        guard var port = port(uid) else { return nil }
        if let alsa = selectedDataSource(uid)?.source.alsa { port.alsa = alsa }
        return port
    }

    /// The selected data source of each port of the route that has data sources, by port uid:
    /// what the UCM applier enables.
    public var routeDataSources: [String: String] {
        var selected: [String: String] = [:]
        for uid in route.outputs + route.inputs {
            if let selection = selectedDataSource(uid) { selected[uid] = selection.source.id }
        }
        return selected
    }

    /// The session the route follows: the most recently activated active
    /// non-mixable session, else the most recently activated active one, else
    /// none (the system default: soloAmbient, no options).
    public var controllingSession: Session? {
        var best: Session?
        for session in sessions where session.isActive {
            guard let current = best else {
                best = session
                continue
            }
            let (newSolo, oldSolo) = (!session.configuration.isMixable, !current.configuration.isMixable)
            if newSolo != oldSolo ? newSolo : session.activationStamp > current.activationStamp { best = session }
        }
        return best
    }

    /// True while any other session is active.
    public func isOtherAudioPlaying(for id: String) -> Bool { sessions.contains { $0.id != id && $0.isActive } }

    /// True while another non-mixable session is active.
    public func secondaryAudioShouldBeSilencedHint(for id: String) -> Bool {
        sessions.contains { $0.id != id && $0.isActive && !$0.configuration.isMixable }
    }

    // MARK: Ports

    /// Ports arrive (a device with all its ports at once). A port whose sequence
    /// is 0 gets the next number; `restoring` reuses the number a uid had before
    /// (a daemon restart, not a new plug).
    public mutating func addPorts(_ new: [Port], restoring: Bool = false) throws(SessionError) -> TowerOutcome {
        for (offset, port) in new.enumerated() {
            if self.port(port.uid) != nil || new[..<offset].contains(where: { $0.uid == port.uid }) {
                throw .duplicatePort(port.uid)
            }
        }
        let before = underlyingRoute()
        var outcome = TowerOutcome()
        // Sequence is connection order per device: the ports of a device that
        // arrive together share one number, and a port joining a device already
        // present (a Bluetooth profile connecting later) brings the whole device
        // forward. So a device's ports always rank alike, and one that is not in
        // the route (an A2DP port standing behind its HFP link) cannot decide it.
        var numbers: [String: UInt64] = [:]
        for var port in new {
            if port.sequence == 0 {
                if restoring, let known = sequences.last[port.uid] {
                    port.sequence = known
                } else if let number = numbers[port.device] {
                    port.sequence = number
                    sequences.record(number, for: port.uid)
                } else {
                    let number = sequences.arrival(of: port.uid)
                    numbers[port.device] = number
                    port.sequence = number
                    for index in ports.indices where ports[index].device == port.device {
                        ports[index].sequence = number
                        sequences.record(number, for: ports[index].uid)
                    }
                }
            } else {
                sequences.record(port.sequence, for: port.uid)
            }
            // A Bluetooth profile joining its device takes the device's priority.
            if port.type.isBluetoothProfile,
                let sibling = ports.first(where: { $0.device == port.device && $0.type.isBluetoothProfile })
            {
                port.priority = sibling.priority
            }
            ports.append(port)
            outcome.portChanges.append(PortChange(kind: .added, port: port))
        }
        // The override is cleared when the arrival itself moves the route to the new port.
        let after = underlyingRoute()
        if after != before, new.contains(where: { after.outputs.contains($0.uid) || after.inputs.contains($0.uid) }) {
            clearControllingOverride()
        }
        settle(.newDeviceAvailable, portEvent: true, into: &outcome)
        return outcome
    }

    /// Ports go away.
    public mutating func removePorts(_ uids: [String]) throws(SessionError) -> TowerOutcome {
        for uid in uids where port(uid) == nil { throw .unknownPort(uid) }
        var outcome = TowerOutcome()
        let removesOutput = uids.contains { route.outputs.contains($0) }
        let removesRoutePort = removesOutput || uids.contains { route.inputs.contains($0) }
        if removesRoutePort { clearControllingOverride() }
        if removesOutput, let controlling = controllingSession, controlling.configuration.category == .playback,
            controlling.prefersInterruptionOnRouteDisconnect, !keepsRouteDevices(after: uids, request: controlling.request)
        {
            // Seed 003: unplugging headphones must not blast the room.
            update(controlling.id) { $0.isActive = false }
            outcome.events.append(SessionEvent(session: controlling.id, kind: .interruptionBegan(reason: .routeDisconnected)))
        }
        // A uid listed twice is removed once (it used to trap on the second).
        for uid in uids {
            guard let index = ports.firstIndex(where: { $0.uid == uid }) else { continue }
            outcome.portChanges.append(PortChange(kind: .removed, port: ports.remove(at: index)))
            // A data source preference is about the port's mics as they were: a port that
            // comes back starts from its profile's priority.
            for session in sessions.indices { sessions[session].preferredDataSources[uid] = nil }
        }
        settle(.oldDeviceUnavailable, portEvent: true, into: &outcome)
        return outcome
    }

    /// A port's configuration changed (its ALSA PCM, name, priority, direction).
    /// Its sequence is kept.
    public mutating func updatePort(_ port: Port) throws(SessionError) -> TowerOutcome {
        guard let index = ports.firstIndex(where: { $0.uid == port.uid }) else { throw .unknownPort(port.uid) }
        var updated = port
        updated.sequence = ports[index].sequence
        ports[index] = updated
        var outcome = TowerOutcome()
        outcome.portChanges.append(PortChange(kind: .updated, port: updated))
        alignBluetoothPriority(with: index, into: &outcome)
        settle(.routeConfigurationChange, portEvent: false, updated: port.uid, into: &outcome)
        return outcome
    }

    /// A user's priority for a port. Treated as a routing preference: a route it
    /// moves is announced with reason `override`.
    public mutating func setPriority(_ priority: Int, for uid: String) throws(SessionError) -> TowerOutcome {
        guard let index = ports.firstIndex(where: { $0.uid == uid }) else { throw .unknownPort(uid) }
        ports[index].priority = priority
        var outcome = TowerOutcome()
        outcome.portChanges.append(PortChange(kind: .updated, port: ports[index]))
        alignBluetoothPriority(with: index, into: &outcome)
        settle(.override, portEvent: false, into: &outcome)
        return outcome
    }

    /// The Bluetooth profiles of one device (A2DP, HFP, LE) are one headset to
    /// the user and share its priority; otherwise the A2DP port standing behind
    /// its HFP link could decide the route from outside it.
    private mutating func alignBluetoothPriority(with index: Int, into outcome: inout TowerOutcome) {
        let source = ports[index]
        guard source.type.isBluetoothProfile else { return }
        for other in ports.indices
        where other != index && ports[other].device == source.device && ports[other].type.isBluetoothProfile
            && ports[other].priority != source.priority
        {
            ports[other].priority = source.priority
            outcome.portChanges.append(PortChange(kind: .updated, port: ports[other]))
        }
    }

    // MARK: Sessions

    public mutating func openSession(_ session: Session) throws(SessionError) -> TowerOutcome {
        guard self.session(session.id) == nil else { throw .duplicateSession(session.id) }
        var fresh = session
        fresh.isActive = false
        sessions.append(fresh)
        var outcome = TowerOutcome()
        if session.configuration.category.isDeprecated {
            outcome.warnings.append("category \(session.configuration.category.rawValue) is deprecated and routes nothing")
        }
        settle(.categoryChange, portEvent: false, into: &outcome)
        return outcome
    }

    /// A client that closes or dies: deactivated with notifyOthers, then forgotten.
    /// Sessions it interrupted are told they may resume even if it had itself
    /// been interrupted since (what stopped them is gone for good), unless another
    /// active session would interrupt them now.
    public mutating func closeSession(_ id: String) throws(SessionError) -> TowerOutcome {
        guard session(id) != nil else { throw .unknownSession(id) }
        update(id) { $0.isActive = false }
        sessions.removeAll { $0.id == id }
        // An array keeps its largest capacity: rebuilt small once three quarters of it are free.
        if sessions.count * 4 < sessions.capacity { sessions = Array(sessions[...]) }
        var outcome = TowerOutcome()
        endInterruptions(by: id, notify: true, into: &outcome)
        settle(.categoryChange, portEvent: false, into: &outcome)
        return outcome
    }

    /// setCategory(_:mode:options:). Options are not sticky; an invalid request
    /// changes nothing.
    public mutating func setCategory(
        _ category: Category, mode: Mode = .default, options: CategoryOptions = [], session id: String
    ) throws(SessionError) -> TowerOutcome {
        guard session(id) != nil else { throw .unknownSession(id) }
        let configuration = try SessionConfiguration(category: category, mode: mode, options: options)
        update(id) {
            $0.configuration = configuration
            // The speaker override only means something in playAndRecord.
            if category != .playAndRecord { $0.override = .none }
        }
        var outcome = TowerOutcome()
        if category.isDeprecated { outcome.warnings.append("category \(category.rawValue) is deprecated and routes nothing") }
        settle(.categoryChange, portEvent: false, into: &outcome)
        return outcome
    }

    /// setActive(_:options:). Activation is always granted: the tower stops the
    /// sessions it must stop first.
    public mutating func setActive(_ active: Bool, session id: String, notifyOthers: Bool = false) throws(SessionError) -> TowerOutcome {
        guard let session = session(id) else { throw .unknownSession(id) }
        var outcome = TowerOutcome()
        guard session.isActive != active else { return outcome }
        if active {
            for other in sessions where other.id != id && other.isActive {
                guard Self.interrupts(session, other) else { continue }
                update(other.id) {
                    $0.isActive = false
                    $0.interruptedBy = id
                }
                outcome.events.append(SessionEvent(session: other.id, kind: .interruptionBegan(reason: .default)))
            }
            activations += 1
            let stamp = activations
            update(id) {
                $0.isActive = true
                $0.activationStamp = stamp
                $0.interruptedBy = nil
                $0.interruptedByMicMute = false
            }
        } else {
            update(id) { $0.isActive = false }
            endInterruptions(by: id, notify: notifyOthers, into: &outcome)
        }
        settle(.categoryChange, portEvent: false, into: &outcome)
        return outcome
    }

    /// overrideOutputAudioPort(_:).
    public mutating func overrideOutput(_ override: OutputOverride, session id: String) throws(SessionError) -> TowerOutcome {
        guard let session = session(id) else { throw .unknownSession(id) }
        try session.configuration.validate(override)
        update(id) { $0.override = override }
        var outcome = TowerOutcome()
        settle(.override, portEvent: false, into: &outcome)
        return outcome
    }

    /// setPreferredInput(_:); nil clears it. The preference outlives its port:
    /// when the port returns, it applies again.
    public mutating func setPreferredInput(_ uid: String?, session id: String) throws(SessionError) -> TowerOutcome {
        guard session(id) != nil else { throw .unknownSession(id) }
        if let uid {
            guard let port = port(uid) else { throw .unknownPort(uid) }
            guard port.direction.isInput else { throw .notAnInput(uid) }
        }
        update(id) { $0.preferredInput = uid }
        var outcome = TowerOutcome()
        settle(.override, portEvent: false, into: &outcome)
        return outcome
    }

    /// setPreferredDataSource(_:) of port `uid`'s description; nil clears it. Refused for a
    /// port that is not there or has no data source `source`. The controlling session's
    /// preference picks the data source the card enables; a change is announced as a route
    /// configuration change.
    public mutating func setPreferredDataSource(_ source: String?, port uid: String, session id: String) throws(SessionError) -> TowerOutcome {
        guard session(id) != nil else { throw .unknownSession(id) }
        guard let port = port(uid) else { throw .unknownPort(uid) }
        if let source, !port.dataSources.contains(where: { $0.id == source }) {
            throw .unknownDataSource(port: uid, source: source)
        }
        update(id) { $0.preferredDataSources[uid] = source }
        var outcome = TowerOutcome()
        settle(.routeConfigurationChange, portEvent: false, into: &outcome)
        return outcome
    }

    public mutating func setPrefersInterruptionOnRouteDisconnect(_ value: Bool, session id: String) throws(SessionError) {
        guard session(id) != nil else { throw .unknownSession(id) }
        update(id) { $0.prefersInterruptionOnRouteDisconnect = value }
    }

    // MARK: System

    /// Silent mode silences ambient and soloAmbient sessions only.
    public mutating func setSilentMode(_ on: Bool) -> TowerOutcome {
        silentMode = on
        var outcome = TowerOutcome()
        settle(.unknown, portEvent: false, into: &outcome)
        return outcome
    }

    /// Screen lock silences ambient and soloAmbient sessions only.
    public mutating func setScreenLocked(_ on: Bool) -> TowerOutcome {
        screenLocked = on
        var outcome = TowerOutcome()
        settle(.unknown, portEvent: false, into: &outcome)
        return outcome
    }

    /// The hardware muted or unmuted the built-in microphone (its card's capture switch). A
    /// mute interrupts (`builtInMicMuted`) each active session whose route records from the
    /// built-in mic, unless it set overrideMutedMicrophoneInterruption; the unmute ends those
    /// interruptions with shouldResume. Only the edges count: a session that starts recording
    /// from a muted mic is not interrupted (docs/decisions.md). Saying the same state again
    /// does nothing.
    public mutating func setBuiltInMicMuted(_ muted: Bool) -> TowerOutcome {
        var outcome = TowerOutcome()
        guard muted != builtInMicMuted else { return outcome }
        builtInMicMuted = muted
        if muted {
            for session in sessions
            where session.isActive && recordsFromBuiltInMic(session)
                && !session.configuration.effectiveOptions.contains(.overrideMutedMicrophoneInterruption)
            {
                update(session.id) {
                    $0.isActive = false
                    $0.interruptedByMicMute = true
                }
                outcome.events.append(SessionEvent(session: session.id, kind: .interruptionBegan(reason: .builtInMicMuted)))
            }
        } else {
            for index in sessions.indices where sessions[index].interruptedByMicMute {
                sessions[index].interruptedByMicMute = false
                outcome.events.append(SessionEvent(session: sessions[index].id, kind: .interruptionEnded(shouldResume: true)))
            }
        }
        // The interrupted session may have been the controlling one: the route follows the next.
        settle(.categoryChange, portEvent: false, into: &outcome)
        return outcome
    }

    /// A watcher's report that the hardware muted or unmuted the inputs of `device` (its card's
    /// capture switch): the built-in mic counts as muted while the device of a built-in mic
    /// port is (`setBuiltInMicMuted`). Other devices' mutes are kept, and change nothing.
    public mutating func setInputMuted(device: String, muted: Bool) -> TowerOutcome {
        if muted { mutedInputDevices.insert(device) } else { mutedInputDevices.remove(device) }
        return setBuiltInMicMuted(ports.contains { $0.type == .builtInMic && mutedInputDevices.contains($0.device) })
    }

    /// Whether the session's own route (not only the controlling one's) takes a built-in mic.
    private func recordsFromBuiltInMic(_ session: Session) -> Bool {
        resolveRoute(session.request, ports: ports).route(in: ports).inputs.contains { port($0)?.type == .builtInMic }
    }

    /// The system resumed: re-evaluate the route.
    public mutating func wake() -> TowerOutcome {
        var outcome = TowerOutcome()
        settle(.wakeFromSleep, portEvent: false, into: &outcome)
        return outcome
    }

    // MARK: Internals

    /// The devices of the ports `uids`.
    private static func devices(of uids: [String], in ports: [Port]) -> Set<String> {
        Set(uids.compactMap { uid in ports.first { $0.uid == uid }?.device })
    }

    /// The devices of a route's outputs and inputs.
    private static func devices(of route: Route, in ports: [Port]) -> Set<String> {
        devices(of: route.outputs + route.inputs, in: ports)
    }

    /// Whether the route would still play to the same devices once `uids` are gone
    /// (a Bluetooth profile leaving a headset that keeps another). Outputs only:
    /// what matters is whether the sound still goes where it went. Only asked of
    /// playback, which records nothing, so this is also the route's devices.
    private func keepsRouteDevices(after uids: [String], request: RouteRequest) -> Bool {
        let remaining = ports.filter { !uids.contains($0.uid) }
        let after = Self.devices(of: resolveRoute(request, ports: remaining).route(in: remaining).outputs, in: remaining)
        return !after.isEmpty && after == Self.devices(of: route.outputs, in: ports)
    }

    /// Whether `session`, activating, interrupts `other`: both non-mixable, or `other` is spoken
    /// audio and `session` interrupts spoken audio.
    static func interrupts(_ session: Session, _ other: Session) -> Bool {
        let solo = !session.configuration.isMixable && !other.configuration.isMixable
        let spoken =
            session.configuration.effectiveOptions.contains(.interruptSpokenAudioAndMixWithOthers)
            && other.configuration.effectiveMode == .spokenAudio
        return solo || spoken
    }

    /// Forgets the interruptions `id` caused; with `notify`, tells each session
    /// it may resume (notifyOthersOnDeactivation). A session that another active session
    /// would interrupt now stays interrupted, by that one (the latest activated): music
    /// stopped by a prompt that a call then stopped does not resume into the call when the
    /// prompt ends, but when the call does.
    private mutating func endInterruptions(by id: String, notify: Bool, into outcome: inout TowerOutcome) {
        for index in sessions.indices where sessions[index].interruptedBy == id {
            let victim = sessions[index]
            let holder = sessions.filter { $0.isActive && $0.id != id && $0.id != victim.id && Self.interrupts($0, victim) }
                .max { $0.activationStamp < $1.activationStamp }
            if let holder {
                sessions[index].interruptedBy = holder.id
                continue
            }
            sessions[index].interruptedBy = nil
            if notify { outcome.events.append(SessionEvent(session: sessions[index].id, kind: .interruptionEnded(shouldResume: true))) }
        }
    }

    private mutating func update(_ id: String, _ body: (inout Session) -> Void) {
        if let index = sessions.firstIndex(where: { $0.id == id }) { body(&sessions[index]) }
    }

    /// The controlling session's route with its override ignored.
    private func underlyingRoute() -> Route {
        var request = controllingSession?.request ?? RouteRequest()
        request.override = .none
        return resolveRoute(request, ports: ports).route(in: ports)
    }

    private mutating func clearControllingOverride() {
        if let controlling = controllingSession, controlling.override != .none { update(controlling.id) { $0.override = .none } }
    }

    /// Re-resolves, announces a route change if the route moved, and announces
    /// what each session's derived state (ducked, hints, silenced) became.
    /// `portEvent` is an arrival or removal; `updated` the uid of an updated port.
    private mutating func settle(
        _ reason: RouteChangeReason, portEvent: Bool, updated: String? = nil, into outcome: inout TowerOutcome
    ) {
        let request = controllingSession?.request ?? RouteRequest()
        let resolution = resolveRoute(request, ports: ports)
        let newRoute = resolution.route(in: ports)
        let routePorts = resolution.portsInRoute(ports).map { routePort($0.uid) ?? $0 }
        let newConfiguration = routePorts.map(\.alsa)
        let newDataSources = routePorts.map { selectedDataSource($0.uid)?.source.id }
        let newDevices = Self.devices(of: newRoute, in: ports)
        if newRoute != route {
            var why = reason
            // Outputs and inputs both: a port of another device taking one side
            // moves the route to that device even if the other side stays.
            let sameDevices = !newDevices.isEmpty && newDevices == routeDevices
            if portEvent && sameDevices {
                // A profile coming or going on devices that stay the route's
                // (A2DP <-> HFP) is a new configuration, not a new device (spec §6).
                why = .routeConfigurationChange
            } else if !portEvent && resolution.lacksSuitableRoute {
                // A port event keeps its own reason; otherwise an empty needed side says so.
                why = .noSuitableRouteForCategory
            } else if let updated, !sameDevices {
                // An update that moves the route to other devices is announced as the
                // arrival or departure it amounts to: the route took the port on a side
                // it was not on (an LE headset's microphone transport appearing), or left it.
                let taken = newRoute.outputs.contains(updated) && !route.outputs.contains(updated)
                    || newRoute.inputs.contains(updated) && !route.inputs.contains(updated)
                why = taken ? .newDeviceAvailable : .oldDeviceUnavailable
            }
            outcome.change = described(why, previous: route, current: newRoute, outcome: outcome)
        } else if newConfiguration != routeConfiguration || newDataSources != routeSelectedSources {
            // Another data source of a route port is a new configuration of the same route.
            outcome.change = described(.routeConfigurationChange, previous: route, current: newRoute, outcome: outcome)
        }
        route = newRoute
        routeConfiguration = newConfiguration
        routeSelectedSources = newDataSources
        routeDevices = newDevices
        self.resolution = resolution
        announceDerivedState(into: &outcome)
    }

    /// The change with both routes' ports described: present ports as they are now, a port
    /// this request removed as it was when it went.
    private func described(_ reason: RouteChangeReason, previous: Route, current: Route, outcome: TowerOutcome) -> RouteChange {
        let describe: (String) -> Port? = { uid in
            routePort(uid) ?? outcome.portChanges.last { $0.kind == .removed && $0.port.uid == uid }?.port
        }
        return RouteChange(
            reason: reason, previous: previous, current: current, previousPorts: RoutePorts(previous, describe: describe),
            currentPorts: RoutePorts(current, describe: describe))
    }

    private mutating func announceDerivedState(into outcome: inout TowerOutcome) {
        let duckers = sessions.filter { $0.isActive && $0.configuration.effectiveOptions.contains(.duckOthers) }.map(\.id)
        let soloists = sessions.filter { $0.isActive && !$0.configuration.isMixable }.map(\.id)
        let silencing = silentMode || screenLocked
        var ducks: [SessionEvent] = []
        var hints: [SessionEvent] = []
        var silences: [SessionEvent] = []
        for index in sessions.indices {
            let session = sessions[index]
            let ducked = session.isActive && duckers.contains { $0 != session.id }
            let hinted = session.isActive && session.configuration.category == .ambient && soloists.contains { $0 != session.id }
            let silenced = session.isActive && session.configuration.category.isSilencedBySilentMode && silencing
            // A session that went inactive is not told: it starts afresh when it activates.
            if ducked != session.toldDucked, session.isActive {
                ducks.append(SessionEvent(session: session.id, kind: ducked ? .ducked : .unducked))
            }
            if hinted != session.toldSilenceHint, session.isActive {
                hints.append(SessionEvent(session: session.id, kind: hinted ? .silenceSecondaryAudioBegin : .silenceSecondaryAudioEnd))
            }
            if silenced != session.toldSilenced, session.isActive {
                silences.append(SessionEvent(session: session.id, kind: silenced ? .silenced : .unsilenced))
            }
            sessions[index].toldDucked = ducked
            sessions[index].toldSilenceHint = hinted
            sessions[index].toldSilenced = silenced
        }
        outcome.events += ducks
        outcome.events += hints
        outcome.events += silences
    }
}

extension Resolution {
    /// The ports of the route, in route order (outputs then input), to compare configurations.
    func portsInRoute(_ ports: [Port]) -> [Port] {
        var result: [Port] = []
        if let output { result.append(ports[output]) }
        for index in extraOutputs { result.append(ports[index]) }
        if let input { result.append(ports[input]) }
        return result
    }
}

/// What a hardware watcher reports. Watchers (udev, evdev jacks, BlueZ) turn
/// their source's events into these; the tower applies them.
public enum PortEvent: Sendable, Hashable {
    /// A device arrived with these ports (all at once, so mic and earphones move together).
    case added([Port])
    /// These ports went away.
    case removed([String])
    /// A port's configuration changed (ALSA PCM, profile, name), same uid.
    case updated(Port)
    /// The hardware muted or unmuted the inputs of `device` (a card's capture switch went off
    /// or on). No port changes; the tower raises `builtInMicMuted` from it.
    case inputMuted(device: String, muted: Bool)
}

extension Array where Element == Port {
    /// Applies a watcher's event to a plain list of ports (a snapshot being collected):
    /// no sequences, no checks, unknown uids ignored.
    public mutating func apply(_ event: PortEvent) {
        switch event {
        case .added(let new): self += new
        case .removed(let uids): removeAll { uids.contains($0.uid) }
        case .updated(let port): if let index = firstIndex(where: { $0.uid == port.uid }) { self[index] = port }
        case .inputMuted: break
        }
    }
}

extension Tower {
    /// Applies a watcher's event.
    public mutating func apply(_ event: PortEvent) throws(SessionError) -> TowerOutcome {
        switch event {
        case .added(let ports): return try addPorts(ports)
        case .removed(let uids): return try removePorts(uids)
        case .updated(let port): return try updatePort(port)
        case .inputMuted(let device, let muted): return setInputMuted(device: device, muted: muted)
        }
    }
}
