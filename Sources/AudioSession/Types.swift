// The client library's value types, shaped like AVAudioSession's: a port
// description, a route description, notifications and typed errors.

import AudioRouteCore
import AudioRouteIPC

/// One port as the daemon describes it (AVAudioSessionPortDescription).
public struct PortDescription: Sendable, Hashable, CustomStringConvertible {
    /// Stable across restarts and re-plugs of the same device.
    public var uid: String
    public var portType: PortType
    public var portName: String
    public var direction: PortDirection
    /// The owning device's id: ports of one device share it.
    public var device: String
    /// The ALSA PCM to open, or nil when the port has none; `description` is its name.
    public var alsa: ALSADevice?
    public var priority: Int
    /// Connection order: larger is newer.
    public var sequence: UInt64
    /// Whether something is behind the port now (`available`, `unavailable`, `unknown`), as
    /// `AudioSession.allPorts` reads it. Nil where the daemon does not say: the ports of
    /// `availablePorts`, `currentRoute` and `portsChanged` (never unavailable, but available and
    /// unknown ones look alike there) and every port of a daemon older than Version 2.
    public var availability: Port.Availability?
    /// The port's data sources (AVAudioSessionPortDescription.dataSources): the mics behind a
    /// UCM card's built-in mic, the profile's highest priority first. Nil for a port without
    /// any, as iOS gives; also nil where they were not read: only `AudioSession.availableInputs`,
    /// `dataSources(of:)` and the session's `inputDataSources` read them (a daemon of Version 4
    /// or later has them).
    public var dataSources: [DataSourceDescription]?
    /// The data source the port uses now (nil: none, or not read).
    public var selectedDataSource: DataSourceDescription?
    /// This session's preferred data source of the port (nil: none, or not read). Set it with
    /// `AudioSession.setPreferredDataSource(_:of:)`.
    public var preferredDataSource: DataSourceDescription?

    public init(
        uid: String, portType: PortType, portName: String, direction: PortDirection, device: String,
        alsa: ALSADevice? = nil, priority: Int, sequence: UInt64, availability: Port.Availability? = nil
    ) {
        self.uid = uid
        self.portType = portType
        self.portName = portName
        self.direction = direction
        self.device = device
        self.alsa = alsa
        self.priority = priority
        self.sequence = sequence
        self.availability = availability
    }

    /// `port` as the library describes it, with its availability.
    public init(_ port: Port) {
        self.init(port, availability: port.availability)
    }

    /// `port` as the library describes it, with `availability` (nil: not said).
    public init(_ port: Port, availability: Port.Availability?) {
        self.init(
            uid: port.uid, portType: port.type, portName: port.name, direction: port.direction, device: port.device, alsa: port.alsa,
            priority: port.priority, sequence: port.sequence, availability: availability)
    }

    /// The core model's port (available where the availability is not said).
    public var port: Port {
        Port(
            uid: uid, type: portType, device: device, name: portName, direction: direction, priority: priority, sequence: sequence, alsa: alsa,
            availability: availability ?? .available)
    }

    public var description: String { "\(portName) (\(portType.rawValue), \(uid))" }
}

/// One data source of a port (AVAudioSessionDataSourceDescription): a mic of a UCM card's
/// built-in mic. Linux does not say where a mic sits or which polar patterns it has: those
/// members are nil, as iOS gives them when it does not know.
public struct DataSourceDescription: Sendable, Hashable, CustomStringConvertible {
    /// The UCM device's name ("Mic1", "DMIC"): unique within the port. iOS uses a number; a
    /// UCM device has none, and its name is what the profile and `alsaucm` call it.
    public var dataSourceID: String
    /// The device's comment ("Internal Digital Microphone"), or its name.
    public var dataSourceName: String
    /// The PCM it is read from, when known.
    public var alsa: ALSADevice?
    /// Where the mic is on the device (iOS: upper, lower): not known on Linux, nil.
    public var location: String? { nil }
    /// Which way the mic faces (iOS: top, bottom, front, back…): not known on Linux, nil.
    public var orientation: String? { nil }
    /// The polar patterns the mic supports: not known on Linux, nil.
    public var supportedPolarPatterns: [String]? { nil }
    /// The polar pattern in use: not known on Linux, nil.
    public var selectedPolarPattern: String? { nil }
    /// The preferred polar pattern: none can be set on Linux, nil.
    public var preferredPolarPattern: String? { nil }

    public init(dataSourceID: String, dataSourceName: String, alsa: ALSADevice? = nil) {
        self.dataSourceID = dataSourceID
        self.dataSourceName = dataSourceName
        self.alsa = alsa
    }

    /// The core's data source as the library describes it.
    public init(_ source: DataSource) {
        self.init(dataSourceID: source.id, dataSourceName: source.name, alsa: source.alsa)
    }

    public var description: String { "\(dataSourceName) (\(dataSourceID))" }
}

/// A route: the ports audio goes out to and comes in from (AVAudioSessionRouteDescription).
public struct RouteDescription: Sendable, Hashable, CustomStringConvertible {
    public var outputs: [PortDescription]
    public var inputs: [PortDescription]

    public init(outputs: [PortDescription] = [], inputs: [PortDescription] = []) {
        self.outputs = outputs
        self.inputs = inputs
    }

    /// `route` as the library describes it; its ports' availability is not said (the route's
    /// wire form has no room for it).
    public init(_ route: RoutePorts) {
        self.init(
            outputs: route.outputs.map { PortDescription($0, availability: nil) }, inputs: route.inputs.map { PortDescription($0, availability: nil) })
    }

    /// The route by uids, as the core model and `audioroute simulate` print it.
    public var route: Route { Route(inputs: inputs.map(\.uid), outputs: outputs.map(\.uid)) }

    public var description: String { route.description }
}

/// A route change (AVAudioSession.routeChangeNotification).
public struct RouteChangeInfo: Sendable, Hashable {
    public var reason: RouteChangeReason
    public var previousRoute: RouteDescription
    public var currentRoute: RouteDescription

    public init(reason: RouteChangeReason, previousRoute: RouteDescription, currentRoute: RouteDescription) {
        self.reason = reason
        self.previousRoute = previousRoute
        self.currentRoute = currentRoute
    }
}

/// Options of an ended interruption (AVAudioSession.InterruptionOptions).
public struct InterruptionOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// The app may resume playing (the interrupting session deactivated with notifyOthersOnDeactivation).
    public static let shouldResume = InterruptionOptions(rawValue: 1)
}

/// An interruption of this session (AVAudioSession.interruptionNotification).
public struct InterruptionInfo: Sendable, Hashable {
    public var type: InterruptionType
    /// Why it began; nil for `ended`.
    public var reason: InterruptionReason?
    /// Set on `ended` only.
    public var options: InterruptionOptions

    public init(type: InterruptionType, reason: InterruptionReason?, options: InterruptionOptions) {
        self.type = type
        self.reason = reason
        self.options = options
    }
}

/// Begin or end of another app's non-mixable audio (AVAudioSession.SilenceSecondaryAudioHintType).
public enum SilenceSecondaryAudioHintType: String, Sendable, Hashable {
    case begin
    case end
}

/// How a port changed in `portsChanged`.
public enum PortChangeKind: String, Sendable, Hashable {
    case added, removed, updated

    init(_ kind: PortChange.Kind) {
        switch kind {
        case .added: self = .added
        case .removed: self = .removed
        case .updated: self = .updated
        }
    }
}

/// Everything an `AudioSession` announces, in delivery order.
public enum AudioSessionNotification: Sendable, Hashable {
    /// The route changed (broadcast by the daemon to every client).
    case routeChange(RouteChangeInfo)
    /// A port arrived, went away or changed, whether or not the route moved: the ports a route
    /// may use (`availablePorts`), so a port turning unavailable is `removed` here.
    case portsChanged(PortChangeKind, PortDescription)
    /// A change of `allPorts`, every known port with its availability: a port turning
    /// unavailable or available again is `updated` here. Not sent by a daemon older than Version 2.
    case allPortsChanged(PortChangeKind, PortDescription)
    case silentModeChanged(Bool)
    /// The screen was locked or unlocked (not sent by a daemon older than Version 3).
    case screenLockChanged(Bool)
    /// This session was interrupted, or its interruption ended.
    case interruption(InterruptionInfo)
    /// Another session started ducking this one (suggested gain 0.3), or stopped.
    case ducked
    case unducked
    case silenceSecondaryAudioHint(SilenceSecondaryAudioHintType)
    /// Silent mode or screen lock silenced this (ambient or soloAmbient) session, or released it.
    case silenced
    case unsilenced
    /// Any session opened, closed, was (de)activated, interrupted, ducked or silenced, or had
    /// its interruption end: only after `followSessionActivity()` (a daemon of Version 6 on).
    case sessionActivity(SessionActivity)
    /// The daemon's bus name went away: the session is gone.
    case mediaServicesWereLost
    /// The daemon is back and the session was re-opened with its category, mode and options.
    /// It is inactive: activate it again, as on iOS.
    case mediaServicesWereReset
}

/// A change of any session, as the daemon broadcasts it to monitors (the contract's type).
public typealias SessionActivity = AudioRouteIPC.SessionActivity

/// A session as `Sessions` lists it (the contract's type).
public typealias SessionSummary = AudioRouteIPC.SessionSummary

/// Which rule chose the route and why each other port lost, as `explain()` returns it (the
/// contract's type; Core's `RouteExplanation` is the daemon's own, with typed rules).
public typealias ExplainReply = AudioRouteIPC.ExplainReply

/// What `AudioSession.dataSources(uid:)` returns: a port's data sources, the one in use and why.
public typealias DataSourcesReply = AudioRouteIPC.DataSourcesReply

/// Errors of the client library. The first group mirrors the daemon's D-Bus error names.
public enum AudioSessionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `org.audioroute.Error.InvalidOption`: an option not valid with the category.
    case invalidOption(String)
    /// `org.audioroute.Error.InvalidOverride`: the speaker override outside playAndRecord.
    case invalidOverride(String)
    /// `org.audioroute.Error.UnknownName`: an unknown category, mode, option or override name.
    case unknownName(String)
    /// `org.audioroute.Error.UnknownPort`.
    case unknownPort(String)
    /// `org.audioroute.Error.NotAnInput`.
    case notAnInput(String)
    /// `org.audioroute.Error.UnknownDataSource`: the port has no such data source.
    case unknownDataSource(String)
    /// `org.audioroute.Error.NotOwner`: the session belongs to another connection.
    case notOwner(String)
    /// `org.audioroute.Error.NotSaved`: applied, but not yet written to disk.
    case notSaved(String)
    /// `org.freedesktop.DBus.Error.InvalidArgs`.
    case invalidArguments(String)
    /// `org.freedesktop.DBus.Error.LimitsExceeded`.
    case limitsExceeded(String)
    /// `org.freedesktop.DBus.Error.AccessDenied`.
    case accessDenied(String)
    /// The bus cannot be reached, or `audiorouted` is not on it.
    case daemonUnavailable(bus: String, detail: String)
    /// Any other D-Bus error reply.
    case remote(name: String, message: String)
    /// The daemon answered with something this library cannot read.
    case badReply(String)

    public var description: String {
        switch self {
        case .invalidOption(let m), .invalidOverride(let m), .unknownName(let m), .unknownPort(let m), .notAnInput(let m),
            .unknownDataSource(let m), .notOwner(let m), .notSaved(let m), .invalidArguments(let m), .limitsExceeded(let m), .accessDenied(let m):
            return m
        case .daemonUnavailable(let bus, let detail):
            return "audiorouted (org.audioroute.AudioRoute1) is not reachable on \(bus): \(detail)"
        case .remote(let name, let message): return message.isEmpty ? name : "\(name): \(message)"
        case .badReply(let message): return "unreadable reply from audiorouted: \(message)"
        }
    }
}
