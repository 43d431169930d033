// The lines `audioroute-pipewire` writes and reads (docs/daemon.md, "The PipeWire helper"): one
// JSON object per line, both ways. Pure: the helper and the daemon each encode what they send
// and decode what they read here, so the tests check every line without a server. Bounded:
// lines through `UCMLineSplitter` (64 KiB), a node's properties only the keys the mapping needs,
// each value at most `PipeWireNode.maximumValueLength` bytes.

/// An audio node of the PipeWire server: a sink, a source or a client's stream.
public struct PipeWireNode: Sendable, Hashable {
    /// The node's global id (the registry's).
    public var id: UInt32
    /// Of the node's properties, those in `keys` whose value is at most `maximumValueLength` bytes.
    public var properties: [String: String]

    /// The properties reported: what mapping a port to a node, and a stream to a session, need.
    public static let keys: [String] = [
        "node.name", "node.description", "media.class", "device.api",
        "api.alsa.path", "alsa.card", "alsa.device", "api.alsa.pcm.card", "api.alsa.pcm.stream", "card.profile.device",
        "api.bluez5.address", "api.bluez5.profile",
        "media.role", "application.name", "application.process.id",
    ]
    /// The longest property value kept, in UTF-8 bytes; a longer one is left out.
    public static let maximumValueLength = 1024
    /// The media classes reported: the server's devices and its clients' streams.
    public static let mediaClasses: [String] = [
        "Audio/Sink", "Audio/Source", "Audio/Source/Virtual", "Audio/Duplex", "Stream/Output/Audio", "Stream/Input/Audio",
    ]

    /// A node with `properties` as given (the caller has selected them).
    public init(id: UInt32, properties: [String: String]) {
        self.id = id
        self.properties = properties
    }

    /// A node with those of `all` that are reported (`keys`, values within the bound).
    public init(id: UInt32, selecting all: some Sequence<(key: String, value: String)>) {
        var properties: [String: String] = [:]
        for (key, value) in all where Self.keys.contains(key) && value.utf8.count <= Self.maximumValueLength {
            properties[key] = value
        }
        self.init(id: id, properties: properties)
    }

    /// `node.name`: what the defaults name.
    public var name: String? { properties["node.name"] }
    /// `media.class` (`Audio/Sink`, `Stream/Output/Audio`, …).
    public var mediaClass: String? { properties["media.class"] }
}

/// The server's default sink and source as AudioRoute sets them: node names; nil leaves that
/// default as the server has it.
public struct PipeWireDefaults: Sendable, Hashable, CustomStringConvertible {
    /// The sink's node name, or nil to leave the server's default sink as it is.
    public var sink: String?
    /// The source's node name, or nil to leave the server's default source as it is.
    public var source: String?

    /// Defaults naming `sink` and `source`.
    public init(sink: String?, source: String?) {
        self.sink = sink
        self.source = source
    }

    /// "sink headphones, source unchanged", for the log.
    public var description: String { "sink \(sink ?? "unchanged"), source \(source ?? "unchanged")" }

    var json: JSON { .object([JSON.Member("sink", sink.map(JSON.string) ?? .null), JSON.Member("source", source.map(JSON.string) ?? .null)]) }
}

/// What the helper says, one line each.
public enum PipeWireHelperEvent: Sendable, Hashable {
    /// Connected, and the registry's first round is done: the server's version.
    case hello(version: String)
    /// An audio node appeared (`added`) or its reported properties changed.
    case node(PipeWireNode, added: Bool)
    /// A node reported before went away.
    case removed(id: UInt32)
    /// A `defaults` request carried out (the server has it).
    case defaultsSet(PipeWireDefaults)
    /// A `defaults` request that failed, with the fault.
    case defaultsFailed(PipeWireDefaults, message: String)
    /// A `stream` request carried out: the node's state was sent to the server.
    case streamSet(id: UInt32)
    /// A `stream` request that failed (no such stream, the server refused), with the fault.
    case streamFailed(id: UInt32, message: String)
    /// An ALSA card's device appeared (`added`), or its properties, profiles or active profile changed.
    case device(PipeWireDevice, added: Bool)
    /// A device reported before went away.
    case deviceRemoved(id: UInt32)
    /// A `profile` request carried out (the server has it).
    case profileSet(PipeWireProfileRequest)
    /// A `profile` request that failed (no such device, the server refused), with the fault.
    case profileFailed(PipeWireProfileRequest, message: String)
    /// A line the helper could not take, or a fault of its own, named.
    case error(String)
}

/// Which profile to set on which device: `{"profile": {"device": N, "index": N}}`.
public struct PipeWireProfileRequest: Sendable, Hashable, CustomStringConvertible {
    /// The device's global id.
    public var device: UInt32
    /// The profile's index.
    public var index: Int

    public init(device: UInt32, index: Int) {
        self.device = device
        self.index = index
    }

    public var description: String { "device \(device), profile \(index)" }

    var json: JSON { .object([JSON.Member("device", .integer(Int64(device))), JSON.Member("index", .integer(Int64(index)))]) }
}

/// What the daemon asks of a client's stream: the tower's word on its session, applied to its node.
public struct PipeWireStreamControl: Sendable, Hashable, CustomStringConvertible {
    /// The stream's node id.
    public var id: UInt32
    /// Paused (the node's `Pause` command) or playing (`Start`).
    public var paused: Bool
    /// The node's `Props` `volume`, 0 to 1: the scalar, which the server multiplies with the
    /// user's `channelVolumes` (left alone).
    public var volume: Double

    /// The control of node `id`; `volume` is clamped to 0...1.
    public init(id: UInt32, paused: Bool, volume: Double) {
        self.id = id
        self.paused = paused
        self.volume = volume.isNaN ? 1 : min(max(volume, 0), 1)
    }

    /// "paused, volume 0.3", for the log.
    public var description: String { "\(paused ? "paused" : "playing"), volume \(volume)" }
}

/// What the daemon asks of the helper.
public enum PipeWireHelperRequest: Sendable, Hashable {
    /// `{"defaults": {"sink": name or null, "source": name or null}}`: set the server's
    /// configured default sink and source (`default.configured.audio.sink`/`.source`).
    case defaults(PipeWireDefaults)
    /// `{"stream": {"id": N, "paused": bool, "volume": 0...1}}`: pause or start a client's stream
    /// node and set its volume.
    case stream(PipeWireStreamControl)
    /// `{"profile": {"device": N, "index": N}}`: set an ALSA device's active profile.
    case profile(PipeWireProfileRequest)
}

/// A line that is not what the protocol says: the fault, named.
public struct PipeWireProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The helper's lines, written and read: one JSON object each (docs/daemon.md, "The helper's protocol").
public enum PipeWireHelperProtocol {
    /// The longest node name a request may carry, in UTF-8 bytes (a node's own names are kept to
    /// `PipeWireNode.maximumValueLength`).
    public static let maximumNameLength = PipeWireNode.maximumValueLength

    // MARK: Writing

    /// The line for `event`.
    public static func line(_ event: PipeWireHelperEvent) -> JSON {
        switch event {
        case .hello(let version):
            return .object([JSON.Member("hello", .string(version))])
        case .node(let node, let added):
            let properties = PipeWireNode.keys.compactMap { key in node.properties[key].map { JSON.Member(key, .string($0)) } }
            return .object([
                JSON.Member("node", .integer(Int64(node.id))), JSON.Member("change", .string(added ? "added" : "changed")),
                JSON.Member("properties", .object(properties)),
            ])
        case .removed(let id):
            return .object([JSON.Member("node", .integer(Int64(id))), JSON.Member("change", .string("removed"))])
        case .defaultsSet(let defaults):
            return .object([JSON.Member("defaults", defaults.json), JSON.Member("ok", .bool(true))])
        case .defaultsFailed(let defaults, let message):
            return .object([JSON.Member("defaults", defaults.json), JSON.Member("error", .string(message))])
        case .streamSet(let id):
            return .object([JSON.Member("stream", .integer(Int64(id))), JSON.Member("ok", .bool(true))])
        case .streamFailed(let id, let message):
            return .object([JSON.Member("stream", .integer(Int64(id))), JSON.Member("error", .string(message))])
        case .device(let device, let added):
            let properties = PipeWireDevice.keys.compactMap { key in device.properties[key].map { JSON.Member(key, .string($0)) } }
            return .object([
                JSON.Member("device", .integer(Int64(device.id))), JSON.Member("change", .string(added ? "added" : "changed")),
                JSON.Member("properties", .object(properties)), JSON.Member("profiles", .array(device.profiles.map(profileJSON))),
                JSON.Member("active", device.active.map { .integer(Int64($0)) } ?? .null),
            ])
        case .deviceRemoved(let id):
            return .object([JSON.Member("device", .integer(Int64(id))), JSON.Member("change", .string("removed"))])
        case .profileSet(let request):
            return .object([JSON.Member("profile", request.json), JSON.Member("ok", .bool(true))])
        case .profileFailed(let request, let message):
            return .object([JSON.Member("profile", request.json), JSON.Member("error", .string(message))])
        case .error(let message):
            return .object([JSON.Member("error", .string(message))])
        }
    }

    static func profileJSON(_ profile: PipeWireProfile) -> JSON {
        .object([
            JSON.Member("index", .integer(Int64(profile.index))), JSON.Member("name", .string(profile.name)),
            JSON.Member("description", .string(profile.description)), JSON.Member("priority", .integer(Int64(profile.priority))),
            JSON.Member("available", .string(profile.available.rawValue)), JSON.Member("sinks", .integer(Int64(profile.sinks))),
            JSON.Member("sources", .integer(Int64(profile.sources))),
        ])
    }

    /// The line for `request`.
    public static func line(_ request: PipeWireHelperRequest) -> JSON {
        switch request {
        case .defaults(let defaults): .object([JSON.Member("defaults", defaults.json)])
        case .stream(let control):
            .object([
                JSON.Member(
                    "stream",
                    .object([
                        JSON.Member("id", .integer(Int64(control.id))), JSON.Member("paused", .bool(control.paused)),
                        JSON.Member("volume", .double(control.volume)),
                    ]))
            ])
        case .profile(let request): .object([JSON.Member("profile", request.json)])
        }
    }

    // MARK: Reading

    /// One line from the daemon: a `defaults` or a `stream` request, alone.
    public static func request(_ line: [UInt8]) -> Result<PipeWireHelperRequest, PipeWireProtocolError> {
        let members: [JSON.Member]
        switch object(line) {
        case .failure(let error): return .failure(error)
        case .success(let object): members = object
        }
        guard let first = members.first, first.key == "defaults" || first.key == "stream" || first.key == "profile" else {
            return .failure(
                PipeWireProtocolError(
                    "unknown request \(members.first.map { "\"\($0.key)\"" } ?? "{}") (a request is {\"defaults\": {\"sink\": …, \"source\": …}}, {\"stream\": {\"id\": …, \"paused\": …, \"volume\": …}} or {\"profile\": {\"device\": …, \"index\": …}})"
                ))
        }
        guard members.count == 1 else { return .failure(PipeWireProtocolError("unknown member \"\(members[1].key)\" (a request has \"\(first.key)\" alone)")) }
        if first.key == "stream" { return stream(first.value).map { .stream($0) } }
        if first.key == "profile" { return profileRequest(first.value).map { .profile($0) } }
        return defaults(first.value).map { .defaults($0) }
    }

    /// `{"id": node id, "paused": bool, "volume": number 0...1}`, all required.
    static func stream(_ value: JSON) -> Result<PipeWireStreamControl, PipeWireProtocolError> {
        guard case .object(let members) = value else { return .failure(PipeWireProtocolError("\"stream\" is an object, not \(value.typeName)")) }
        for member in members where member.key != "id" && member.key != "paused" && member.key != "volume" {
            return .failure(PipeWireProtocolError("unknown member \"\(member.key)\" of \"stream\" (it has \"id\", \"paused\" and \"volume\")"))
        }
        guard case .integer(let raw)? = value["id"], let id = UInt32(exactly: raw) else {
            return .failure(PipeWireProtocolError("\"id\" of \"stream\" is a node id (0 to \(UInt32.max))"))
        }
        guard case .bool(let paused)? = value["paused"] else { return .failure(PipeWireProtocolError("\"paused\" of \"stream\" is true or false")) }
        let volume: Double
        switch value["volume"] {
        case .integer(let number)?: volume = Double(number)
        case .double(let number)?: volume = number
        default: return .failure(PipeWireProtocolError("\"volume\" of \"stream\" is a number from 0 to 1"))
        }
        guard volume >= 0 && volume <= 1 else { return .failure(PipeWireProtocolError("\"volume\" of \"stream\" is a number from 0 to 1, not \(volume)")) }
        return .success(PipeWireStreamControl(id: id, paused: paused, volume: volume))
    }

    /// `{"device": device id, "index": profile index}`, both required.
    static func profileRequest(_ value: JSON) -> Result<PipeWireProfileRequest, PipeWireProtocolError> {
        guard case .object(let members) = value else { return .failure(PipeWireProtocolError("\"profile\" is an object, not \(value.typeName)")) }
        for member in members where member.key != "device" && member.key != "index" {
            return .failure(PipeWireProtocolError("unknown member \"\(member.key)\" of \"profile\" (it has \"device\" and \"index\")"))
        }
        guard case .integer(let raw)? = value["device"], let device = UInt32(exactly: raw) else {
            return .failure(PipeWireProtocolError("\"device\" of \"profile\" is a device id (0 to \(UInt32.max))"))
        }
        guard case .integer(let index)? = value["index"], index >= 0, index <= Int64(Int32.max) else {
            return .failure(PipeWireProtocolError("\"index\" of \"profile\" is a profile index (0 to \(Int32.max))"))
        }
        return .success(PipeWireProfileRequest(device: device, index: Int(index)))
    }

    /// A device line's members after "device" and "change": properties, profiles and active.
    static func device(id: UInt32, added: Bool, _ json: JSON, members: Int) -> Result<PipeWireHelperEvent, PipeWireProtocolError> {
        let change = added ? "added" : "changed"
        guard members == 5, case .object(let properties)? = json["properties"], case .array(let profiles)? = json["profiles"], let active = json["active"] else {
            return .failure(PipeWireProtocolError("a device \(change) has \"device\", \"change\", \"properties\" (an object), \"profiles\" (an array) and \"active\""))
        }
        var values: [String: String] = [:]
        for property in properties {
            guard PipeWireDevice.keys.contains(property.key) else { return .failure(PipeWireProtocolError("unknown device property \"\(property.key)\"")) }
            guard case .string(let value) = property.value, value.utf8.count <= PipeWireNode.maximumValueLength else {
                return .failure(PipeWireProtocolError("device property \"\(property.key)\" is a string of at most \(PipeWireNode.maximumValueLength) bytes"))
            }
            values[property.key] = value
        }
        guard profiles.count <= PipeWireDevice.maximumProfiles else {
            return .failure(PipeWireProtocolError("device \(id) has \(profiles.count) profiles, over \(PipeWireDevice.maximumProfiles)"))
        }
        var parsed: [PipeWireProfile] = []
        for (n, value) in profiles.enumerated() {
            switch profile(value) {
            case .failure(let error): return .failure(PipeWireProtocolError("profile \(n) of device \(id): \(error)"))
            case .success(let profile):
                guard !parsed.contains(where: { $0.index == profile.index }) else {
                    return .failure(PipeWireProtocolError("profile \(n) of device \(id): index \(profile.index) given twice"))
                }
                parsed.append(profile)
            }
        }
        let activeIndex: Int?
        switch active {
        case .null: activeIndex = nil
        case .integer(let raw) where raw >= 0 && raw <= Int64(Int32.max): activeIndex = Int(raw)
        default: return .failure(PipeWireProtocolError("\"active\" of device \(id) is a profile index (0 to \(Int32.max)) or null"))
        }
        return .success(.device(PipeWireDevice(id: id, properties: values, profiles: parsed, active: activeIndex), added: added))
    }

    /// `{"index", "name", "description", "priority", "available", "sinks", "sources"}`, all required.
    static func profile(_ value: JSON) -> Result<PipeWireProfile, PipeWireProtocolError> {
        let keys = ["index", "name", "description", "priority", "available", "sinks", "sources"]
        guard case .object(let members) = value else { return .failure(PipeWireProtocolError("a profile is an object, not \(value.typeName)")) }
        for member in members where !keys.contains(member.key) {
            return .failure(PipeWireProtocolError("unknown member \"\(member.key)\" (a profile has \(keys.map { "\"\($0)\"" }.joined(separator: ", ")))"))
        }
        var numbers: [String: Int] = [:]
        let ranges: [(String, ClosedRange<Int64>)] = [("index", 0...Int64(Int32.max)), ("priority", Int64(Int32.min)...Int64(Int32.max)), ("sinks", 0...1024), ("sources", 0...1024)]
        for (key, range) in ranges {
            guard case .integer(let raw)? = value[key], range.contains(raw) else {
                return .failure(PipeWireProtocolError("\"\(key)\" is an integer from \(range.lowerBound) to \(range.upperBound)"))
            }
            numbers[key] = Int(raw)
        }
        var texts: [String: String] = [:]
        for key in ["name", "description"] {
            guard case .string(let text)? = value[key], text.utf8.count <= PipeWireProfile.maximumTextLength, key == "description" || !text.isEmpty else {
                return .failure(PipeWireProtocolError("\"\(key)\" is a string of \(key == "name" ? 1 : 0) to \(PipeWireProfile.maximumTextLength) bytes"))
            }
            texts[key] = text
        }
        guard case .string(let raw)? = value["available"], let available = PipeWireProfile.Availability(rawValue: raw) else {
            return .failure(PipeWireProtocolError("\"available\" is \"yes\", \"no\" or \"unknown\""))
        }
        return .success(
            PipeWireProfile(
                index: numbers["index"]!, name: texts["name"]!, description: texts["description"]!, priority: numbers["priority"]!, available: available,
                sinks: numbers["sinks"]!, sources: numbers["sources"]!))
    }

    /// One line from the helper.
    public static func event(_ line: [UInt8]) -> Result<PipeWireHelperEvent, PipeWireProtocolError> {
        let members: [JSON.Member]
        switch object(line) {
        case .failure(let error): return .failure(error)
        case .success(let object): members = object
        }
        let json = JSON.object(members)
        if let hello = json["hello"] {
            guard members.count == 1, case .string(let version) = hello else { return .failure(PipeWireProtocolError("\"hello\" takes the server's version, alone")) }
            return .success(.hello(version: version))
        }
        if let defaultsValue = json["defaults"] {
            let defaults: PipeWireDefaults
            switch self.defaults(defaultsValue) {
            case .failure(let error): return .failure(error)
            case .success(let value): defaults = value
            }
            guard members.count == 2 else { return .failure(PipeWireProtocolError("a defaults reply has \"defaults\" and \"ok\" or \"error\"")) }
            if case .bool(true)? = json["ok"] { return .success(.defaultsSet(defaults)) }
            if case .string(let message)? = json["error"] { return .success(.defaultsFailed(defaults, message: message)) }
            return .failure(PipeWireProtocolError("a defaults reply has \"ok\": true or \"error\": a message"))
        }
        if let streamValue = json["stream"] {
            guard case .integer(let raw) = streamValue, let id = UInt32(exactly: raw), members.count == 2 else {
                return .failure(PipeWireProtocolError("a stream reply has \"stream\" (a node id) and \"ok\" or \"error\""))
            }
            if case .bool(true)? = json["ok"] { return .success(.streamSet(id: id)) }
            if case .string(let message)? = json["error"] { return .success(.streamFailed(id: id, message: message)) }
            return .failure(PipeWireProtocolError("a stream reply has \"ok\": true or \"error\": a message"))
        }
        if let profileValue = json["profile"] {
            let request: PipeWireProfileRequest
            switch profileRequest(profileValue) {
            case .failure(let error): return .failure(error)
            case .success(let value): request = value
            }
            guard members.count == 2 else { return .failure(PipeWireProtocolError("a profile reply has \"profile\" and \"ok\" or \"error\"")) }
            if case .bool(true)? = json["ok"] { return .success(.profileSet(request)) }
            if case .string(let message)? = json["error"] { return .success(.profileFailed(request, message: message)) }
            return .failure(PipeWireProtocolError("a profile reply has \"ok\": true or \"error\": a message"))
        }
        if let deviceValue = json["device"] {
            guard case .integer(let raw) = deviceValue, let id = UInt32(exactly: raw) else {
                return .failure(PipeWireProtocolError("\"device\" is a device id (0 to \(UInt32.max)), not \(deviceValue.typeName)"))
            }
            switch json["change"] {
            case .string("removed")?:
                guard members.count == 2 else { return .failure(PipeWireProtocolError("a removed device has \"device\" and \"change\" alone")) }
                return .success(.deviceRemoved(id: id))
            case .string(let change)? where change == "added" || change == "changed":
                return device(id: id, added: change == "added", json, members: members.count)
            default:
                return .failure(PipeWireProtocolError("\"change\" is \"added\", \"changed\" or \"removed\""))
            }
        }
        if let nodeValue = json["node"] {
            guard case .integer(let raw) = nodeValue, let id = UInt32(exactly: raw) else {
                return .failure(PipeWireProtocolError("\"node\" is a node id (0 to \(UInt32.max)), not \(nodeValue.typeName)"))
            }
            switch json["change"] {
            case .string("removed")?:
                guard members.count == 2 else { return .failure(PipeWireProtocolError("a removed node has \"node\" and \"change\" alone")) }
                return .success(.removed(id: id))
            case .string(let change)? where change == "added" || change == "changed":
                guard members.count == 3, case .object(let properties)? = json["properties"] else {
                    return .failure(PipeWireProtocolError("a node \(change) has \"node\", \"change\" and \"properties\" (an object)"))
                }
                var values: [String: String] = [:]
                for property in properties {
                    guard PipeWireNode.keys.contains(property.key) else { return .failure(PipeWireProtocolError("unknown node property \"\(property.key)\"")) }
                    guard case .string(let value) = property.value, value.utf8.count <= PipeWireNode.maximumValueLength else {
                        return .failure(PipeWireProtocolError("node property \"\(property.key)\" is a string of at most \(PipeWireNode.maximumValueLength) bytes"))
                    }
                    values[property.key] = value
                }
                return .success(.node(PipeWireNode(id: id, properties: values), added: change == "added"))
            default:
                return .failure(PipeWireProtocolError("\"change\" is \"added\", \"changed\" or \"removed\""))
            }
        }
        if case .string(let message)? = json["error"], members.count == 1 { return .success(.error(message)) }
        return .failure(PipeWireProtocolError("unknown line \(members.first.map { "\"\($0.key)\"" } ?? "{}") (the helper says hello, node, device, defaults, stream, profile or error)"))
    }

    /// The members of a line that must be a JSON object.
    static func object(_ line: [UInt8]) -> Result<[JSON.Member], PipeWireProtocolError> {
        guard line.count <= UCMLineSplitter.maximumLineLength else {
            return .failure(PipeWireProtocolError("line over \(UCMLineSplitter.maximumLineLength) bytes"))
        }
        let json: JSON
        do throws(JSONSyntaxError) {
            json = try JSON.parse(line, maxDepth: 4)
        } catch {
            return .failure(PipeWireProtocolError("malformed JSON: \(error)"))
        }
        guard case .object(let members) = json else { return .failure(PipeWireProtocolError("a line is a JSON object, not \(json.typeName)")) }
        return .success(members)
    }

    /// `{"sink": name or null, "source": name or null}`, both required.
    static func defaults(_ value: JSON) -> Result<PipeWireDefaults, PipeWireProtocolError> {
        guard case .object(let members) = value else { return .failure(PipeWireProtocolError("\"defaults\" is an object, not \(value.typeName)")) }
        for member in members where member.key != "sink" && member.key != "source" {
            return .failure(PipeWireProtocolError("unknown member \"\(member.key)\" of \"defaults\" (it has \"sink\" and \"source\")"))
        }
        var names: [String?] = []
        for key in ["sink", "source"] {
            switch value[key] {
            case .null?: names.append(nil)
            case .string(let name)?:
                guard !name.isEmpty, name.utf8.count <= maximumNameLength else {
                    return .failure(PipeWireProtocolError("\"\(key)\" is a node name of 1 to \(maximumNameLength) bytes"))
                }
                names.append(name)
            case let other?: return .failure(PipeWireProtocolError("\"\(key)\" is a node name or null, not \(other.typeName)"))
            case nil: return .failure(PipeWireProtocolError("missing member \"\(key)\" of \"defaults\""))
            }
        }
        return .success(PipeWireDefaults(sink: names[0], source: names[1]))
    }
}
