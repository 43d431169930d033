// What the daemon remembers across restarts, and its JSON form.
import AudioRouteCore

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
public struct DaemonState: Sendable, Hashable {
    public var sequences = SequenceMemory()
    public var priorities: [String: Int] = [:]
    public var preferredInputs: [String: String] = [:]

    public init(sequences: SequenceMemory = SequenceMemory(), priorities: [String: Int] = [:], preferredInputs: [String: String] = [:]) {
        self.sequences = sequences
        self.priorities = priorities
        self.preferredInputs = preferredInputs
    }

    /// The format version written in the file.
    public static let version: Int64 = 1
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
        ])
    }

    /// The file's bytes: the JSON text and a final newline.
    public var fileBytes: [UInt8] { json.bytes + [UInt8(ascii: "\n")] }

    /// Reads a state document. Every member is required except that unknown
    /// members are ignored (a newer daemon may add some).
    public init(json: JSON) throws(StateFileError) {
        guard case .object = json else { throw StateFileError(path: "$", message: "expected an object, found \(json.typeName)") }
        guard case .integer(let version)? = json["version"] else {
            throw StateFileError(path: "$.version", message: "missing or not an integer")
        }
        guard version == Self.version else { throw StateFileError(path: "$.version", message: "unsupported version \(version)") }
        guard case .integer(let counter)? = json["sequenceCounter"], counter >= 0 else {
            throw StateFileError(path: "$.sequenceCounter", message: "missing or not a non-negative integer")
        }
        var sequences = SequenceMemory()
        for (key, value) in try Self.members(json, "sequences") {
            guard case .integer(let number) = value, number > 0, number <= counter else {
                throw StateFileError(path: "$.sequences[\"\(key)\"]", message: "expected an integer in 1...sequenceCounter")
            }
            sequences.record(UInt64(number), for: key)
        }
        var priorities: [String: Int] = [:]
        for (key, value) in try Self.members(json, "priorities") {
            guard case .integer(let number) = value, let priority = Int(exactly: number) else {
                throw StateFileError(path: "$.priorities[\"\(key)\"]", message: "expected an integer")
            }
            priorities[key] = priority
        }
        var preferred: [String: String] = [:]
        for (key, value) in try Self.members(json, "preferredInputs") {
            guard case .string(let uid) = value else {
                throw StateFileError(path: "$.preferredInputs[\"\(key)\"]", message: "expected a port uid string")
            }
            preferred[key] = uid
        }
        // SequenceMemory's counter is the largest recorded sequence, so the
        // written counter is redundant (kept for people reading the file).
        self.init(sequences: sequences, priorities: priorities, preferredInputs: preferred)
    }

    private static func members(_ json: JSON, _ key: String) throws(StateFileError) -> [(String, JSON)] {
        guard case .object(let members)? = json[key] else { throw StateFileError(path: "$.\(key)", message: "missing or not an object") }
        var seen = Set<String>()
        for member in members where !seen.insert(member.key).inserted {
            throw StateFileError(path: "$.\(key)[\"\(member.key)\"]", message: "duplicate key")
        }
        return members.map { ($0.key, $0.value) }
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
        return state
    }
}
