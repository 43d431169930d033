// The audio-session model: categories, modes, options, ports and routes.
// Names are the spec's JSON names (camelCase, as the Swift cases).

/// What an app intends to do with audio (AVAudioSession.Category).
public enum Category: String, Sendable, Hashable, Codable, CaseIterable {
    case ambient
    case soloAmbient
    case playback
    case record
    case playAndRecord
    case multiRoute
    /// Deprecated by Apple; accepted with a warning, routes nothing.
    case audioProcessing

    /// Whether the category plays audio.
    public var hasOutput: Bool {
        switch self {
        case .ambient, .soloAmbient, .playback, .playAndRecord, .multiRoute: return true
        case .record, .audioProcessing: return false
        }
    }

    /// Whether the category records audio.
    public var hasInput: Bool {
        switch self {
        case .record, .playAndRecord, .multiRoute: return true
        case .ambient, .soloAmbient, .playback, .audioProcessing: return false
        }
    }

    /// Whether silent mode and screen lock silence the category.
    public var isSilencedBySilentMode: Bool { self == .ambient || self == .soloAmbient }

    /// Whether the category is deprecated (setCategory accepts it with a warning).
    public var isDeprecated: Bool { self == .audioProcessing }
}

/// A specialisation of a category (AVAudioSession.Mode).
public enum Mode: String, Sendable, Hashable, Codable, CaseIterable {
    case `default`
    case voiceChat
    case gameChat
    case videoRecording
    case measurement
    case moviePlayback
    case videoChat
    case spokenAudio
    case voicePrompt

    /// Whether the mode takes effect with `category`. A mode the category does not
    /// support is still reported as set, but behaves as `default` (spec §3).
    /// The table follows Apple's "Audio Session Modes" guide; spokenAudio and
    /// voicePrompt, absent from that table, are allowed where a player or a
    /// navigation prompt plays (docs/decisions.md).
    public func isSupported(by category: Category) -> Bool {
        switch self {
        case .default: return true
        case .voiceChat, .gameChat, .videoChat: return category == .playAndRecord
        case .videoRecording: return category == .playAndRecord || category == .record
        case .measurement: return category == .playAndRecord || category == .record || category == .playback
        case .moviePlayback: return category == .playback
        case .spokenAudio, .voicePrompt: return category == .playback || category == .playAndRecord
        }
    }
}

/// Category options (AVAudioSession.CategoryOptions), with Apple's raw values.
public struct CategoryOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let mixWithOthers = CategoryOptions(rawValue: 0x1)
    public static let duckOthers = CategoryOptions(rawValue: 0x2)
    public static let allowBluetooth = CategoryOptions(rawValue: 0x4)
    public static let defaultToSpeaker = CategoryOptions(rawValue: 0x8)
    /// 0x11: includes the mixWithOthers bit, as in Apple's header.
    public static let interruptSpokenAudioAndMixWithOthers = CategoryOptions(rawValue: 0x11)
    public static let allowBluetoothA2DP = CategoryOptions(rawValue: 0x20)
    public static let allowAirPlay = CategoryOptions(rawValue: 0x40)
    public static let overrideMutedMicrophoneInterruption = CategoryOptions(rawValue: 0x80)

    /// Every named option, in the spec's table order.
    public static let named: [(name: String, option: CategoryOptions)] = [
        ("mixWithOthers", .mixWithOthers),
        ("duckOthers", .duckOthers),
        ("allowBluetooth", .allowBluetooth),
        ("defaultToSpeaker", .defaultToSpeaker),
        ("interruptSpokenAudioAndMixWithOthers", .interruptSpokenAudioAndMixWithOthers),
        ("allowBluetoothA2DP", .allowBluetoothA2DP),
        ("allowAirPlay", .allowAirPlay),
        ("overrideMutedMicrophoneInterruption", .overrideMutedMicrophoneInterruption),
    ]

    /// The option spelled `name`, or nil for an unknown name.
    public init?(name: String) {
        guard let entry = Self.named.first(where: { $0.name == name }) else { return nil }
        self = entry.option
    }

    /// The names of the options in the set. interruptSpokenAudioAndMixWithOthers
    /// carries the mixWithOthers bit, so mixWithOthers is not listed beside it.
    public var names: [String] {
        var result: [String] = []
        for (name, option) in Self.named where contains(option) {
            if option == .mixWithOthers && contains(.interruptSpokenAudioAndMixWithOthers) { continue }
            result.append(name)
        }
        if rawValue & ~Self.allKnown.rawValue != 0 { result.append("0x" + String(rawValue & ~Self.allKnown.rawValue, radix: 16)) }
        return result
    }

    /// The union of every named option.
    public static let allKnown: CategoryOptions = named.reduce(into: []) { $0.formUnion($1.option) }
}

extension CategoryOptions: Codable {
    /// Options are encoded as an array of names: `["allowBluetooth", "defaultToSpeaker"]`.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        var result: CategoryOptions = []
        while !container.isAtEnd {
            let name = try container.decode(String.self)
            guard let option = CategoryOptions(name: name) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown option \"\(name)\"")
            }
            result.formUnion(option)
        }
        self = result
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for name in names { try container.encode(name) }
    }
}

/// The kind of a port (AVAudioSession.Port), in the spec's table order, which is
/// also the last tie-breaker between equally ranked ports.
public enum PortType: String, Sendable, Hashable, Codable, CaseIterable {
    case builtInSpeaker
    case builtInReceiver
    case builtInMic
    case headphones
    case headsetMic
    case lineOut
    case lineIn
    case usbAudio
    case bluetoothA2DP
    case bluetoothHFP
    case bluetoothLE
    case HDMI
    case displayPort

    /// The priority a port of this type gets unless udev or config says otherwise.
    public var defaultPriority: Int {
        switch self {
        case .builtInSpeaker, .builtInReceiver, .builtInMic: return 0
        case .headphones, .headsetMic, .usbAudio, .bluetoothA2DP, .bluetoothHFP, .bluetoothLE: return 100
        case .lineOut, .lineIn: return 90
        case .HDMI, .displayPort: return 50
        }
    }

    /// The directions a port of this type may have.
    public var allowedDirections: [PortDirection] {
        switch self {
        case .builtInSpeaker, .builtInReceiver, .headphones, .lineOut, .bluetoothA2DP, .HDMI, .displayPort:
            return [.output]
        case .builtInMic, .headsetMic, .lineIn:
            return [.input]
        case .usbAudio, .bluetoothHFP, .bluetoothLE:
            return [.output, .input, .duplex]
        }
    }

    /// The direction used when none is given: the only one allowed, else duplex.
    public var defaultDirection: PortDirection { allowedDirections.count == 1 ? allowedDirections[0] : .duplex }

    /// A human name, as Apple's portName for built-in ports.
    public var defaultName: String {
        switch self {
        case .builtInSpeaker: return "Speaker"
        case .builtInReceiver: return "Receiver"
        case .builtInMic: return "Microphone"
        case .headphones: return "Headphones"
        case .headsetMic: return "Headset Microphone"
        case .lineOut: return "Line Out"
        case .lineIn: return "Line In"
        case .usbAudio: return "USB Audio"
        case .bluetoothA2DP: return "Bluetooth A2DP"
        case .bluetoothHFP: return "Bluetooth HFP"
        case .bluetoothLE: return "Bluetooth LE"
        case .HDMI: return "HDMI"
        case .displayPort: return "DisplayPort"
        }
    }

    /// A Bluetooth audio profile: the profiles of one device share its priority.
    public var isBluetoothProfile: Bool { self == .bluetoothA2DP || self == .bluetoothHFP || self == .bluetoothLE }

    /// Built-in ports are chosen by the built-in fallback rule, not by ranking.
    public var isBuiltIn: Bool { self == .builtInSpeaker || self == .builtInReceiver || self == .builtInMic }

    /// Position in the spec's table: lower ranks first among otherwise equal ports.
    @inlinable public var tableOrder: Int {
        switch self {
        case .builtInSpeaker: return 0
        case .builtInReceiver: return 1
        case .builtInMic: return 2
        case .headphones: return 3
        case .headsetMic: return 4
        case .lineOut: return 5
        case .lineIn: return 6
        case .usbAudio: return 7
        case .bluetoothA2DP: return 8
        case .bluetoothHFP: return 9
        case .bluetoothLE: return 10
        case .HDMI: return 11
        case .displayPort: return 12
        }
    }
}

extension PortType {
    /// The table order as a tie-break between equally ranked ports, with the
    /// Bluetooth profiles (A2DP, HFP, LE) sharing one place: they are one device.
    @inlinable public var rankOrder: Int {
        switch self {
        case .bluetoothA2DP, .bluetoothHFP, .bluetoothLE: return PortType.bluetoothA2DP.tableOrder
        default: return tableOrder
        }
    }
}

/// Which way audio flows through a port. A duplex port (a Bluetooth HFP link, a
/// USB headset seen as one endpoint) serves both sides under one uid, as iOS
/// reports an HFP headset with the same UID in inputs and outputs.
public enum PortDirection: String, Sendable, Hashable, Codable, CaseIterable {
    case output
    case input
    case duplex

    @inlinable public var isOutput: Bool { self != .input }
    @inlinable public var isInput: Bool { self != .output }
}

/// One direction (or both) of one physical endpoint.
public struct Port: Sendable, Hashable {
    /// Stable across restarts and re-plugs: derived from ID_PATH, ID_SERIAL or bdaddr.
    public var uid: String
    /// A human name.
    public var name: String
    public var type: PortType
    public var direction: PortDirection
    /// The owning device's id: ports of one device share it.
    public var device: String
    /// Higher wins; defaults to the type's default priority.
    public var priority: Int
    /// Connection order: larger is more recent (last in wins).
    public var sequence: UInt64
    /// The ALSA PCM to open, when known; its text form is what JSON and the D-Bus API carry.
    public var alsa: ALSADevice?
    /// Whether something is behind the port now. Watchers announce unavailable ports too (a
    /// jack with nothing plugged in); `AvailabilityFilter` keeps them from the tower.
    public var availability: Availability
    /// The port's data sources (a UCM card's several built-in mics), the profile's highest
    /// priority first; empty for a port without any. `alsa` is the first one's PCM.
    public var dataSources: [DataSource] = []

    public init(
        uid: String, type: PortType, device: String, name: String? = nil,
        direction: PortDirection? = nil, priority: Int? = nil, sequence: UInt64 = 0, alsa: ALSADevice? = nil,
        availability: Availability = .available, dataSources: [DataSource] = []
    ) {
        self.uid = uid
        self.type = type
        self.device = device
        self.name = name ?? type.defaultName
        self.direction = direction ?? type.defaultDirection
        self.priority = priority ?? type.defaultPriority
        self.sequence = sequence
        self.alsa = alsa
        self.availability = availability
        self.dataSources = dataSources
    }

    /// Whether something is behind a port now.
    public enum Availability: String, Sendable, Hashable, Codable, CaseIterable {
        /// There and usable: a card's own port, a jack whose switch says something is plugged in.
        case available
        /// Known, but nothing is behind it now (a jack whose switch is off): listed, never routed.
        case unavailable
        /// Usable, but whether anything is behind it cannot be told (an HDMI/DP output whose
        /// jack cannot be read): offered, at the priority its watcher gives it.
        case unknown

        /// Whether a route may use the port: every availability but `unavailable`.
        public var isUsable: Bool { self != .unavailable }
    }
}

extension Port: Codable {
    private enum CodingKeys: String, CodingKey {
        case uid, name, type, direction, device, priority, sequence, alsa, availability, dataSources
    }

    /// Decodes a port; a document without `availability` (written before it existed) is available.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        uid = try container.decode(String.self, forKey: .uid)
        name = try container.decode(String.self, forKey: .name)
        type = try container.decode(PortType.self, forKey: .type)
        direction = try container.decode(PortDirection.self, forKey: .direction)
        device = try container.decode(String.self, forKey: .device)
        priority = try container.decode(Int.self, forKey: .priority)
        sequence = try container.decode(UInt64.self, forKey: .sequence)
        alsa = try container.decodeIfPresent(ALSADevice.self, forKey: .alsa)
        availability = try container.decodeIfPresent(Availability.self, forKey: .availability) ?? .available
        dataSources = try container.decodeIfPresent([DataSource].self, forKey: .dataSources) ?? []
    }

    /// Encodes a port; `availability` only when the port is not available and `dataSources` only
    /// when it has some, so that other ports' documents read as they did before they existed.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(uid, forKey: .uid)
        try container.encode(name, forKey: .name)
        try container.encode(type, forKey: .type)
        try container.encode(direction, forKey: .direction)
        try container.encode(device, forKey: .device)
        try container.encode(priority, forKey: .priority)
        try container.encode(sequence, forKey: .sequence)
        try container.encodeIfPresent(alsa, forKey: .alsa)
        if availability != .available { try container.encode(availability, forKey: .availability) }
        if !dataSources.isEmpty { try container.encode(dataSources, forKey: .dataSources) }
    }
}

/// The ports a session plays to and records from, by uid.
public struct Route: Sendable, Hashable, Codable, CustomStringConvertible {
    public var inputs: [String]
    public var outputs: [String]

    public init(inputs: [String] = [], outputs: [String] = []) {
        self.inputs = inputs
        self.outputs = outputs
    }

    public static let empty = Route()

    public var description: String { "in: [\(inputs.joined(separator: ", "))] out: [\(outputs.joined(separator: ", "))]" }
}

/// Why the route changed (AVAudioSession.RouteChangeReason), with Apple's raw values.
public enum RouteChangeReason: String, Sendable, Hashable, Codable, CaseIterable {
    case unknown
    case newDeviceAvailable
    case oldDeviceUnavailable
    case categoryChange
    case override
    case wakeFromSleep
    case noSuitableRouteForCategory
    case routeConfigurationChange

    public var rawNumber: Int {
        switch self {
        case .unknown: return 0
        case .newDeviceAvailable: return 1
        case .oldDeviceUnavailable: return 2
        case .categoryChange: return 3
        case .override: return 4
        case .wakeFromSleep: return 6
        case .noSuitableRouteForCategory: return 7
        case .routeConfigurationChange: return 8
        }
    }
}

/// A route with its ports described, outputs then inputs: what a client is told
/// (AVAudioSessionRouteDescription), what the route's ALSA file is written from.
public struct RoutePorts: Sendable, Hashable, Codable {
    public var outputs: [Port]
    public var inputs: [Port]

    public init(outputs: [Port] = [], inputs: [Port] = []) {
        self.outputs = outputs
        self.inputs = inputs
    }

    /// `route`'s ports as `describe` gives them; a uid it does not know is left out.
    public init(_ route: Route, describe: (String) -> Port?) {
        self.init(outputs: route.outputs.compactMap(describe), inputs: route.inputs.compactMap(describe))
    }

    /// The route by uids.
    public var route: Route { Route(inputs: inputs.map(\.uid), outputs: outputs.map(\.uid)) }
}

/// A route change, announced exactly when the resolved route differs.
public struct RouteChange: Sendable, Hashable, Codable {
    public var reason: RouteChangeReason
    public var previous: Route
    public var current: Route
    /// The ports of `previous`, described as the tower knows them after the change: a port
    /// that has just gone as it was when it went. Listeners need not keep ports of their own.
    public var previousPorts: RoutePorts
    /// The ports of `current`.
    public var currentPorts: RoutePorts

    /// A change between two routes by uid; the port descriptions are empty unless given.
    public init(
        reason: RouteChangeReason, previous: Route, current: Route, previousPorts: RoutePorts = RoutePorts(),
        currentPorts: RoutePorts = RoutePorts()
    ) {
        self.reason = reason
        self.previous = previous
        self.current = current
        self.previousPorts = previousPorts
        self.currentPorts = currentPorts
    }

    /// A change between two described routes.
    public init(reason: RouteChangeReason, previous: RoutePorts, current: RoutePorts) {
        self.init(reason: reason, previous: previous.route, current: current.route, previousPorts: previous, currentPorts: current)
    }
}

/// The output override (AVAudioSession.PortOverride).
public enum OutputOverride: String, Sendable, Hashable, Codable, CaseIterable {
    case none
    case speaker
}

/// Whether an interruption begins or ends (AVAudioSession.InterruptionType).
public enum InterruptionType: String, Sendable, Hashable, Codable {
    case began
    case ended
}

/// Why an interruption began (AVAudioSession.InterruptionReason).
public enum InterruptionReason: String, Sendable, Hashable, Codable {
    /// Another session took the audio.
    case `default`
    /// The route the session played to went away (prefersInterruptionOnRouteDisconnect).
    case routeDisconnected
    /// The built-in microphone the session records from was muted by the hardware (its card's
    /// capture switch), and the session did not set overrideMutedMicrophoneInterruption.
    case builtInMicMuted

    /// Apple's raw value (AVAudioSessionInterruptionReason; 1, appWasSuspended, is never given).
    public var rawNumber: Int {
        switch self {
        case .default: return 0
        case .builtInMicMuted: return 2
        case .routeDisconnected: return 4
        }
    }
}
