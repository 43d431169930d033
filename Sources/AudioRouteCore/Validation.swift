// Spec §2–§4: which options and overrides a category accepts, and what a mode implies.

/// A refused request. Every case names what was refused; the state is unchanged.
public enum SessionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An option that is not valid with the category (spec §4).
    case invalidOption(name: String, category: Category)
    /// The speaker override outside playAndRecord (spec §5 rule 1).
    case invalidOverride(OutputOverride, category: Category)
    case unknownSession(String)
    case duplicateSession(String)
    case unknownPort(String)
    case duplicatePort(String)
    /// A preferred input that is not an input port.
    case notAnInput(String)
    /// A preferred data source that the port does not have.
    case unknownDataSource(port: String, source: String)

    /// The spec's error name, as in a simulation step's `error`.
    public var code: String {
        switch self {
        case .invalidOption: return "invalidOption"
        case .invalidOverride: return "invalidOverride"
        case .unknownSession: return "unknownSession"
        case .duplicateSession: return "duplicateSession"
        case .unknownPort: return "unknownPort"
        case .duplicatePort: return "duplicatePort"
        case .notAnInput: return "notAnInput"
        case .unknownDataSource: return "unknownDataSource"
        }
    }

    public var description: String {
        switch self {
        case .invalidOption(let name, let category): return "option \(name) is not valid with category \(category.rawValue)"
        case .invalidOverride(let value, let category):
            return "override \(value.rawValue) is only valid with playAndRecord, not \(category.rawValue)"
        case .unknownSession(let id): return "no session \"\(id)\""
        case .duplicateSession(let id): return "session \"\(id)\" already exists"
        case .unknownPort(let uid): return "no port \"\(uid)\""
        case .duplicatePort(let uid): return "port \"\(uid)\" already exists"
        case .notAnInput(let uid): return "port \"\(uid)\" is not an input"
        case .unknownDataSource(let port, let source): return "port \"\(port)\" has no data source \"\(source)\""
        }
    }
}

/// A session's category, mode and options as set, and what they mean.
public struct SessionConfiguration: Sendable, Hashable {
    public private(set) var category: Category
    /// The mode as set (and as reported), even when the category ignores it.
    public private(set) var mode: Mode
    /// The options as set (and as reported).
    public private(set) var options: CategoryOptions

    /// A new session: soloAmbient, default mode, no options.
    public static let initial = SessionConfiguration(uncheckedCategory: .soloAmbient, mode: .default, options: [])

    init(uncheckedCategory category: Category, mode: Mode, options: CategoryOptions) {
        self.category = category
        self.mode = mode
        self.options = options
    }

    /// Validates the request (spec §4). Throws `invalidOption` naming the first
    /// option, in table order, that the category does not accept.
    public init(category: Category, mode: Mode = .default, options: CategoryOptions = []) throws(SessionError) {
        var named: CategoryOptions = []
        for (name, option) in CategoryOptions.named where options.contains(option) {
            named.formUnion(option)
            // mixWithOthers is also a bit of interruptSpokenAudioAndMixWithOthers;
            // judge that bit under the composite option's own rule.
            if option == .mixWithOthers && options.contains(.interruptSpokenAudioAndMixWithOthers) { continue }
            if !Self.accepts(option, category) { throw .invalidOption(name: name, category: category) }
        }
        // Bits no named option accounts for, including 0x10 without the 0x1 of 0x11.
        let unknown = options.subtracting(named)
        if !unknown.isEmpty { throw .invalidOption(name: "0x" + String(unknown.rawValue, radix: 16), category: category) }
        self.init(uncheckedCategory: category, mode: mode, options: options)
    }

    /// The "valid with" column of spec §4. allowBluetoothA2DP is implied in the
    /// output-only categories, so stating it there is accepted as a no-op.
    static func accepts(_ option: CategoryOptions, _ category: Category) -> Bool {
        switch option {
        case .mixWithOthers, .interruptSpokenAudioAndMixWithOthers:
            return category == .playback || category == .playAndRecord || category == .multiRoute
        case .duckOthers:
            return category == .ambient || category == .playback || category == .playAndRecord || category == .multiRoute
        case .allowBluetooth:
            return category == .playAndRecord || category == .record
        case .defaultToSpeaker, .allowAirPlay:
            return category == .playAndRecord
        case .allowBluetoothA2DP:
            return category == .playAndRecord || category == .ambient || category == .soloAmbient || category == .playback
        case .overrideMutedMicrophoneInterruption:
            return category == .record || category == .playAndRecord
        default:
            return false
        }
    }

    /// The mode that takes effect: the mode as set if the category supports it, else default.
    public var effectiveMode: Mode { mode.isSupported(by: category) ? mode : .default }

    /// The options that take effect: as set, plus what the category and mode imply.
    public var effectiveOptions: CategoryOptions {
        var result = options
        if options.contains(.duckOthers) { result.formUnion(.mixWithOthers) }
        switch category {
        case .ambient: result.formUnion(.mixWithOthers)
        case .soloAmbient, .playback: result.formUnion(.allowBluetoothA2DP)
        default: break
        }
        switch effectiveMode {
        case .voiceChat: result.formUnion(.allowBluetooth)
        case .videoChat: result.formUnion([.allowBluetooth, .defaultToSpeaker])
        default: break
        }
        if category == .ambient { result.formUnion(.allowBluetoothA2DP) }
        return result
    }

    /// Whether activating this session leaves other sessions playing.
    public var isMixable: Bool { effectiveOptions.contains(.mixWithOthers) }

    /// Checks an output override against the category (spec §5 rule 1).
    public func validate(_ override: OutputOverride) throws(SessionError) {
        if override == .speaker && category != .playAndRecord { throw .invalidOverride(override, category: category) }
    }
}

extension SessionConfiguration: Codable {
    private enum CodingKeys: String, CodingKey {
        case category, mode, options
    }

    /// Decoding validates like `setCategory`: an invalid combination is a decoding error.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let category = try container.decode(Category.self, forKey: .category)
        let mode = try container.decodeIfPresent(Mode.self, forKey: .mode) ?? .default
        let options = try container.decodeIfPresent(CategoryOptions.self, forKey: .options) ?? []
        do {
            try self.init(category: category, mode: mode, options: options)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .options, in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(category, forKey: .category)
        try container.encode(mode, forKey: .mode)
        try container.encode(options, forKey: .options)
    }
}
