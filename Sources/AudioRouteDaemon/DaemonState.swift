// What the daemon remembers across restarts, and its JSON form.
import AudioRouteCore
import AudioRouteIPC

/// The persisted state: everything a user set, plus connection order.
///
/// - `sequences`: the last sequence number of every port uid ever seen, so
///   last-in-wins survives restarts (spec §1).
/// - `priorities`: priorities a user set, by port uid; they replace the
///   port's default (or udev) priority whenever that port is present.
/// - `preferredInputs`: a preferred input port uid by session *name* (the app
///   identity a client gives when it registers, e.g. "org.gnome.Calls"), not by
///   session id: ids are per connection and die with the client, while the
///   preference should outlive an app restart (docs/daemon.md).
/// - `silentMode`: silent mode as last set.
public struct DaemonState: Sendable, Hashable {
    public var sequences = SequenceMemory()
    public var priorities: [String: Int] = [:]
    public var preferredInputs: [String: String] = [:]
    public var silentMode = false

    public init(
        sequences: SequenceMemory = SequenceMemory(), priorities: [String: Int] = [:], preferredInputs: [String: String] = [:],
        silentMode: Bool = false
    ) {
        self.sequences = sequences
        self.priorities = priorities
        self.preferredInputs = preferredInputs
        self.silentMode = silentMode
    }

    /// The format version written in the file. `silentMode` came later without a new
    /// version: a file without it reads as off, and an older daemon ignores it (unknown
    /// members are), so neither direction loses the rest of the state.
    public static let version: Int64 = 1

    // The limits of the state file (docs/daemon.md, "State"). A real state holds a few
    // hundred port uids of some 20-80 bytes, a few priorities and preferred inputs: tens
    // of KiB. The limits leave ample room for that and bound what a replaced or damaged
    // file can cost at start (a 10 MB file took 648 ms and 76 MiB). `init(json:)`
    // refuses a file beyond any of them; `bounded()` (what `StateStore.save` writes) and
    // `settingsProblem` (which RouteService checks before accepting a setting) keep the
    // daemon from ever writing one.

    /// Largest state file read, in bytes.
    public static let maxFileBytes = 1 << 20
    /// Longest string (port uid, app name), in UTF-8 bytes: the longest the D-Bus API accepts.
    public static let maxStringBytes = DBusAPI.maxStringBytes
    /// Most sequences kept; the oldest are forgotten beyond it.
    public static let maxSequences = 4096
    /// Most user priorities.
    public static let maxPriorities = 1024
    /// Most remembered preferred inputs.
    public static let maxPreferredInputs = 1024
    /// Most of the file the user's settings may take, so that sequences always have the rest.
    public static let maxSettingsBytes = maxFileBytes / 2
    /// Largest sequence number read: one per port arrival, never reached in practice (2^53
    /// arrivals, one a millisecond, take 285,000 years), and exact in every JSON reader.
    public static let maxSequence: Int64 = 1 << 53
}

/// A state file that cannot be used, naming the JSON path of the fault.
public struct StateFileError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var message: String
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

extension DaemonState {
    /// The JSON document, keys sorted so that equal states give equal bytes.
    public var json: JSON {
        func sorted<V>(_ dictionary: [String: V], _ value: (V) -> JSON) -> JSON {
            .object(dictionary.keys.sorted().map { JSON.Member($0, value(dictionary[$0]!)) })
        }
        return .object([
            JSON.Member("version", .integer(Self.version)),
            JSON.Member("sequenceCounter", .integer(Int64(clamping: sequences.counter))),
            JSON.Member("sequences", sorted(sequences.last) { .integer(Int64(clamping: $0)) }),
            JSON.Member("priorities", sorted(priorities) { .integer(Int64($0)) }),
            JSON.Member("preferredInputs", sorted(preferredInputs) { .string($0) }),
            JSON.Member("silentMode", .bool(silentMode)),
        ])
    }

    /// The file's bytes: the JSON text and a final newline.
    public var fileBytes: [UInt8] { json.bytes + [UInt8(ascii: "\n")] }

    /// Reads a state document. Every member is required except `silentMode` (off when
    /// absent: files written before it was saved); unknown members are ignored (a newer
    /// daemon may add some). Every value is checked against the file's limits, and a fault
    /// names its JSON path.
    public init(json: JSON) throws(StateFileError) {
        guard case .object(let top) = json else { throw StateFileError(path: "$", message: "expected an object, found \(json.typeName)") }
        var seen = Set<String>()
        for member in top where !seen.insert(member.key).inserted {
            throw StateFileError(path: "$" + Self.pathComponent(member.key), message: "duplicate key")
        }
        guard case .integer(let version)? = json["version"] else {
            throw StateFileError(path: "$.version", message: "missing or not an integer")
        }
        guard version == Self.version else { throw StateFileError(path: "$.version", message: "unsupported version \(version)") }
        guard case .integer(let counter)? = json["sequenceCounter"], (0...Self.maxSequence).contains(counter) else {
            throw StateFileError(path: "$.sequenceCounter", message: "missing or not an integer in 0...\(Self.maxSequence)")
        }
        var sequences = SequenceMemory()
        for (key, value) in try Self.members(json, "sequences", limit: Self.maxSequences) {
            guard case .integer(let number) = value, number > 0, number <= counter else {
                throw StateFileError(
                    path: "$.sequences" + Self.pathComponent(key), message: "expected an integer in 1...sequenceCounter (\(counter)), found \(Self.show(value))")
            }
            sequences.record(UInt64(number), for: key)
        }
        var priorities: [String: Int] = [:]
        let range = DBusAPI.priorityRange
        for (key, value) in try Self.members(json, "priorities", limit: Self.maxPriorities) {
            guard case .integer(let number) = value, let priority = Int(exactly: number), range.contains(priority) else {
                throw StateFileError(
                    path: "$.priorities" + Self.pathComponent(key),
                    message: "expected an integer in \(range.lowerBound)...\(range.upperBound), found \(Self.show(value))")
            }
            priorities[key] = priority
        }
        var preferred: [String: String] = [:]
        for (key, value) in try Self.members(json, "preferredInputs", limit: Self.maxPreferredInputs) {
            guard case .string(let uid) = value else {
                throw StateFileError(path: "$.preferredInputs" + Self.pathComponent(key), message: "expected a port uid string, found \(value.typeName)")
            }
            guard uid.utf8.count <= Self.maxStringBytes else {
                throw StateFileError(
                    path: "$.preferredInputs" + Self.pathComponent(key), message: "a string of \(uid.utf8.count) bytes; at most \(Self.maxStringBytes)")
            }
            preferred[key] = uid
        }
        var silentMode = false
        switch json["silentMode"] {
        case nil: break
        case .bool(let on)?: silentMode = on
        case let other?: throw StateFileError(path: "$.silentMode", message: "expected a boolean, found \(other.typeName)")
        }
        // SequenceMemory's counter is the largest recorded sequence, so the
        // written counter is redundant (kept for people reading the file).
        self.init(sequences: sequences, priorities: priorities, preferredInputs: preferred, silentMode: silentMode)
    }

    /// The members of object `key`: at most `limit`, no key repeated or longer than `maxStringBytes`.
    private static func members(_ json: JSON, _ key: String, limit: Int) throws(StateFileError) -> [(String, JSON)] {
        guard case .object(let members)? = json[key] else { throw StateFileError(path: "$.\(key)", message: "missing or not an object") }
        guard members.count <= limit else { throw StateFileError(path: "$.\(key)", message: "\(members.count) entries; at most \(limit)") }
        var seen = Set<String>()
        for member in members {
            guard member.key.utf8.count <= maxStringBytes else {
                throw StateFileError(
                    path: "$.\(key)" + pathComponent(member.key), message: "a key of \(member.key.utf8.count) bytes; at most \(maxStringBytes)")
            }
            guard seen.insert(member.key).inserted else { throw StateFileError(path: "$.\(key)" + pathComponent(member.key), message: "duplicate key") }
        }
        return members.map { ($0.key, $0.value) }
    }

    /// `["key"]` for a JSON path, a long key cut short (the path names the entry, the message its size).
    private static func pathComponent(_ key: String) -> String {
        let shown = key.utf8.count <= 64 ? key : String(decoding: key.utf8.prefix(48), as: UTF8.self) + "…"
        return "[\"\(shown)\"]"
    }

    /// A value for a message: a number as written, else its type.
    private static func show(_ value: JSON) -> String {
        switch value {
        case .integer(let number): return "\(number)"
        case .double(let number): return "\(number)"
        default: return value.typeName
        }
    }
}

extension DaemonState {
    /// This state as `StateStore.save` writes it: within every limit `init(json:)` checks,
    /// so the daemon never writes a file it would refuse. Sequences the loader would refuse
    /// (a uid longer than `maxStringBytes`, from a hostile device) are left out, and the
    /// oldest are forgotten beyond `maxSequences` or while the file would be larger than
    /// `maxFileBytes`: a sequence only orders ports that come back, and the oldest are those
    /// of ports unseen for longest. The user's settings are kept whole: RouteService refuses
    /// a setting that `settingsProblem` finds beyond the limits, so they fit in half the file.
    public func bounded() -> DaemonState {
        let kept = sequences.last.filter { $0.key.utf8.count <= Self.maxStringBytes }
        if kept.count == sequences.last.count, kept.count <= Self.maxSequences, fileBytes.count <= Self.maxFileBytes { return self }
        // Newest first; equal numbers (a hand-edited file) in a fixed order.
        var newestFirst = kept.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        if newestFirst.count > Self.maxSequences { newestFirst.removeLast(newestFirst.count - Self.maxSequences) }
        var result = self
        func keep() {
            var memory = SequenceMemory()
            for (uid, number) in newestFirst.reversed() { memory.record(number, for: uid) }
            result.sequences = memory
        }
        keep()
        var size = result.fileBytes.count
        while size > Self.maxFileBytes, !newestFirst.isEmpty {
            // Each entry takes at least its key, two quotes, ": ", a digit and ", ": drop
            // the oldest until that much is gone, then measure again.
            var excess = size - Self.maxFileBytes
            while excess > 0, let (uid, _) = newestFirst.popLast() { excess -= uid.utf8.count + 7 }
            keep()
            size = result.fileBytes.count
        }
        return result
    }

    /// The first limit of the state file that the user's settings (priorities, preferred
    /// inputs) exceed, said plainly, or nil. RouteService checks it before it accepts a
    /// setting, so that every accepted setting can be saved and read back.
    public var settingsProblem: String? {
        if priorities.count > Self.maxPriorities { return "\(priorities.count) port priorities; at most \(Self.maxPriorities) are kept" }
        if preferredInputs.count > Self.maxPreferredInputs {
            return "\(preferredInputs.count) remembered preferred inputs; at most \(Self.maxPreferredInputs) are kept"
        }
        let range = DBusAPI.priorityRange
        for (uid, priority) in priorities {
            if uid.utf8.count > Self.maxStringBytes { return "a port uid of \(uid.utf8.count) bytes; at most \(Self.maxStringBytes) are kept" }
            if !range.contains(priority) { return "priority \(priority) is outside \(range.lowerBound)...\(range.upperBound)" }
        }
        for (name, uid) in preferredInputs {
            let longest = max(name.utf8.count, uid.utf8.count)
            if longest > Self.maxStringBytes { return "a string of \(longest) bytes; at most \(Self.maxStringBytes) are kept" }
        }
        let size = DaemonState(priorities: priorities, preferredInputs: preferredInputs, silentMode: silentMode).fileBytes.count
        if size > Self.maxSettingsBytes { return "the settings would take \(size) bytes of the state file; at most \(Self.maxSettingsBytes)" }
        return nil
    }
}

extension DaemonState {
    /// State number `n` of the crash-safety test: its size varies with `n` (so a
    /// truncated or mixed file shows) and every field depends on `n`.
    public static func crashTestSample(_ n: UInt64) -> DaemonState {
        var state = DaemonState()
        for k in 0..<(40 + n % 60) { state.sequences.record(n * 1000 + k, for: "usb-port-\(k)-" + String(repeating: "x", count: Int(k % 7))) }
        for k in 0..<(n % 13) { state.priorities["bt-\(k)"] = Int(n) - Int(k) }
        state.preferredInputs["org.example.App\(n % 5)"] = "mic-\(n)"
        state.silentMode = n % 2 == 1
        return state
    }
}
