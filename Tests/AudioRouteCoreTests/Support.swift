// Shared fixtures for the core tests: ports by kind, towers with sessions, and a
// snapshot of everything a tower holds, to prove a refused request changed nothing.
@testable import AudioRouteCore
import Testing

/// A port with the spec's defaults; the device defaults to the uid (a device of its own).
func port(
    _ uid: String, _ type: PortType, device: String? = nil, direction: PortDirection? = nil,
    priority: Int? = nil, sequence: UInt64 = 0, alsa: ALSADevice? = nil
) -> Port {
    Port(uid: uid, type: type, device: device ?? uid, direction: direction, priority: priority, sequence: sequence, alsa: alsa)
}

/// The built-in ports of a phone-like machine (speaker, receiver, microphone on one codec).
let phone: [Port] = [
    port("spk", .builtInSpeaker, device: "internal", sequence: 1),
    port("rcv", .builtInReceiver, device: "internal", sequence: 2),
    port("mic", .builtInMic, device: "internal", sequence: 3),
]

/// The built-in ports of a laptop (no receiver).
let laptop: [Port] = [
    port("spk", .builtInSpeaker, device: "internal", sequence: 1),
    port("mic", .builtInMic, device: "internal", sequence: 2),
]

/// A wired headset: earphones and microphone on one jack. Sequence 0 lets the tower number them.
func wiredHeadset(sequence: UInt64) -> [Port] {
    [
        port("hp", .headphones, device: "jack", sequence: sequence),
        port("hsmic", .headsetMic, device: "jack", sequence: sequence == 0 ? 0 : sequence + 1),
    ]
}

/// A Bluetooth headset offering A2DP and a duplex HFP link.
func bluetoothHeadset(_ name: String = "bt", a2dpSequence: UInt64, hfpSequence: UInt64) -> [Port] {
    [
        port("\(name)-a2dp", .bluetoothA2DP, device: name, sequence: a2dpSequence),
        port("\(name)-hfp", .bluetoothHFP, device: name, direction: .duplex, sequence: hfpSequence),
    ]
}

/// A request for the resolver; fails the test if the configuration is invalid.
func request(
    _ category: Category, mode: Mode = .default, options: CategoryOptions = [],
    override: OutputOverride = .none, preferredInput: String? = nil
) throws -> RouteRequest {
    RouteRequest(
        configuration: try SessionConfiguration(category: category, mode: mode, options: options),
        override: override, preferredInput: preferredInput)
}

/// The route the resolver picks.
func resolve(_ request: RouteRequest, _ ports: [Port]) -> Route { resolveRoute(request, ports: ports).route(in: ports) }

/// A tower with `ports` (sequences assigned in order) and one session per entry, none active.
func makeTower(
    _ ports: [Port], sessions: [(id: String, category: Category, mode: Mode, options: CategoryOptions)] = []
) throws -> Tower {
    var tower = Tower()
    _ = try tower.addPorts(ports)
    for entry in sessions {
        _ = try tower.openSession(Session(id: entry.id))
        _ = try tower.setCategory(entry.category, mode: entry.mode, options: entry.options, session: entry.id)
    }
    return tower
}

/// One session in `category`, activated.
func activeTower(
    _ ports: [Port], _ category: Category, mode: Mode = .default, options: CategoryOptions = [], id: String = "app"
) throws -> Tower {
    var tower = try makeTower(ports, sessions: [(id, category, mode, options)])
    _ = try tower.setActive(true, session: id)
    return tower
}

/// Everything observable in a tower, including what sessions were last told.
struct TowerSnapshot: Equatable {
    var ports: [Port]
    var sessions: [Session]
    var route: Route
    var resolution: Resolution
    var silentMode: Bool
    var screenLocked: Bool
    var builtInMicMuted: Bool
    var sequences: SequenceMemory

    init(_ tower: Tower) {
        ports = tower.ports
        sessions = tower.sessions
        route = tower.route
        resolution = tower.resolution
        silentMode = tower.silentMode
        screenLocked = tower.screenLocked
        builtInMicMuted = tower.builtInMicMuted
        sequences = tower.sequences
    }
}

/// The events of an outcome as "session:type(detail)" strings, for compact comparisons.
func events(_ outcome: TowerOutcome) -> [String] {
    outcome.events.map { "\($0.session):\($0.kind.name)" + detail($0.kind) }
}

private func detail(_ kind: SessionEvent.Kind) -> String {
    switch kind {
    case .interruptionBegan(let reason): return "(\(reason.rawValue))"
    case .interruptionEnded(let resume): return "(shouldResume: \(resume))"
    default: return ""
    }
}

/// Asserts that `body` throws exactly `expected`.
func expectError<T>(
    _ expected: SessionError, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) {
    do {
        _ = try body()
        Issue.record("expected \(expected), but the request was accepted", sourceLocation: sourceLocation)
    } catch {
        #expect(error as? SessionError == expected, sourceLocation: sourceLocation)
    }
}

extension RouteChange {
    /// The change by uids alone, as most tests compare it (the port descriptions are
    /// checked where they are the point: RouteChangeReasonTests.describedPorts).
    var uids: RouteChange { RouteChange(reason: reason, previous: previous, current: current) }
}
