// The sound server's client streams as sessions (docs/daemon.md, "The server's streams as
// sessions"): a stream's `media.role` chooses its session's category, mode and options through
// this table, which integrators may change with a roles file (docs/roles-file.md). Pure: the
// daemon reads the file's bytes and hands them here.

/// `media.role` → session configuration. Roles match case-insensitively; a stream without a
/// role, or with one the table does not name, gets `unnamed`.
public struct StreamRoleTable: Sendable, Hashable {
    /// The configurations by role, the role lowercased.
    public private(set) var roles: [String: SessionConfiguration]
    /// A stream without a role, or with a role not in `roles`.
    public private(set) var unnamed: SessionConfiguration

    /// The largest roles file read, in bytes (checked before decoding).
    public static let maximumFileSize = 64 * 1024
    /// The most roles a file may name.
    public static let maximumRoles = 256

    /// The built-in table: what a desktop's roles mean as AVAudioSession categories.
    public static let builtIn: StreamRoleTable = {
        let playback = SessionConfiguration(uncheckedCategory: .playback, mode: .default, options: [])
        let call = SessionConfiguration(uncheckedCategory: .playAndRecord, mode: .voiceChat, options: [])
        // Spoken directions mix with what plays and duck it, as a navigation app's session does.
        let prompt = SessionConfiguration(uncheckedCategory: .playback, mode: .default, options: [.mixWithOthers, .duckOthers])
        let ambient = SessionConfiguration(uncheckedCategory: .ambient, mode: .default, options: [])
        var roles: [String: SessionConfiguration] = [:]
        for role in ["music", "movie", "game", "production", "alarm"] { roles[role] = playback }
        for role in ["phone", "communication"] { roles[role] = call }
        for role in ["navigation", "accessibility"] { roles[role] = prompt }
        for role in ["notification", "event", "test"] { roles[role] = ambient }
        return StreamRoleTable(roles: roles, unnamed: playback)
    }()

    /// A table of `roles` (keys are lowercased here) and `unnamed`.
    public init(roles: [String: SessionConfiguration], unnamed: SessionConfiguration) {
        self.roles = Dictionary(roles.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.unnamed = unnamed
    }

    /// The configuration of a stream whose `media.role` is `role` (nil: none), and which entry chose it.
    public func configuration(forRole role: String?) -> (configuration: SessionConfiguration, entry: String) {
        guard let role, !role.isEmpty else { return (unnamed, "no media.role") }
        if let configuration = roles[role.lowercased()] { return (configuration, "media.role \(role)") }
        return (unnamed, "media.role \(role), not in the table")
    }

    /// The built-in table changed by a roles file's bytes: each role the file names replaces the
    /// built-in one, `"none"` replaces the configuration of a stream without a role (or with a
    /// role named nowhere). The fault, named, when the file is not what docs/roles-file.md says.
    ///
    /// `{"roles": {"Music": {"category": "playback"}, "Phone": {"category": "playAndRecord",
    /// "mode": "voiceChat"}, "none": {"category": "ambient"}}}`
    public static func parse(_ bytes: [UInt8], base: StreamRoleTable = .builtIn) -> Result<StreamRoleTable, StreamRoleError> {
        guard bytes.count <= maximumFileSize else { return .failure(StreamRoleError("over \(maximumFileSize) bytes (\(bytes.count))")) }
        let json: JSON
        do throws(JSONSyntaxError) {
            json = try JSON.parse(bytes, maxDepth: 8)
        } catch {
            return .failure(StreamRoleError("malformed JSON: \(error)"))
        }
        guard case .object(let top) = json else { return .failure(StreamRoleError("the file is a JSON object, not \(json.typeName)")) }
        for member in top where member.key != "roles" {
            return .failure(StreamRoleError("unknown member \"\(member.key)\" (the file has \"roles\")"))
        }
        guard let rolesValue = json["roles"] else { return .failure(StreamRoleError("missing member \"roles\"")) }
        guard case .object(let entries) = rolesValue else { return .failure(StreamRoleError("\"roles\" is an object, not \(rolesValue.typeName)")) }
        guard entries.count <= maximumRoles else { return .failure(StreamRoleError("\(entries.count) roles, over \(maximumRoles)")) }
        var table = base
        var seen: Set<String> = []
        for entry in entries {
            let role = entry.key.lowercased()
            guard !role.isEmpty else { return .failure(StreamRoleError("a role is named by an empty string")) }
            guard seen.insert(role).inserted else { return .failure(StreamRoleError("role \"\(entry.key)\" named twice (roles match whatever their case)")) }
            switch configuration(entry.value) {
            case .failure(let error): return .failure(StreamRoleError("role \"\(entry.key)\": \(error.description)"))
            case .success(let configuration):
                if role == "none" { table.unnamed = configuration } else { table.roles[role] = configuration }
            }
        }
        return .success(table)
    }

    /// `{"category": name, "mode": name (optional), "options": [names] (optional)}`, validated as
    /// `setCategory` validates.
    static func configuration(_ value: JSON) -> Result<SessionConfiguration, StreamRoleError> {
        guard case .object(let members) = value else { return .failure(StreamRoleError("an object, not \(value.typeName)")) }
        for member in members where !["category", "mode", "options"].contains(member.key) {
            return .failure(StreamRoleError("unknown member \"\(member.key)\" (a role has \"category\", \"mode\" and \"options\")"))
        }
        guard case .string(let categoryName)? = value["category"] else { return .failure(StreamRoleError("\"category\" is missing or not a string")) }
        guard let category = Category(rawValue: categoryName) else {
            return .failure(StreamRoleError(Suggestion.unknown("category", categoryName, among: Category.allCases.map(\.rawValue))))
        }
        var mode = Mode.default
        if let modeValue = value["mode"] {
            guard case .string(let name) = modeValue, let named = Mode(rawValue: name) else {
                return .failure(StreamRoleError("\"mode\" is a mode's name (\(Mode.allCases.map(\.rawValue).joined(separator: ", ")))"))
            }
            mode = named
        }
        var options: CategoryOptions = []
        if let optionsValue = value["options"] {
            guard case .array(let names) = optionsValue else { return .failure(StreamRoleError("\"options\" is an array of option names")) }
            for name in names {
                guard case .string(let text) = name else { return .failure(StreamRoleError("an option is a name, not \(name.typeName)")) }
                guard let option = CategoryOptions(name: text) else {
                    return .failure(StreamRoleError(Suggestion.unknown("option", text, among: CategoryOptions.named.map(\.name))))
                }
                options.formUnion(option)
            }
        }
        do throws(SessionError) {
            return .success(try SessionConfiguration(category: category, mode: mode, options: options))
        } catch {
            return .failure(StreamRoleError("\(error)"))
        }
    }
}

/// A roles file that is not what docs/roles-file.md says: the fault, named.
public struct StreamRoleError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
