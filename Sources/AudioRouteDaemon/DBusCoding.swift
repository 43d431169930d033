// The API's values on the wire (docs/dbus-api.md): ports, routes, names, and
// the checks every incoming call passes before it reaches the tower.
import AudioRouteCore
import AudioRouteLinux

/// Names and limits of the D-Bus API, version 1.
public enum DBusAPI {
    public static let busName = "org.audioroute.AudioRoute1"
    public static let managerPath = "/org/audioroute/AudioRoute1"
    public static let managerInterface = "org.audioroute.AudioRoute1"
    public static let sessionInterface = "org.audioroute.Session1"
    public static let sessionPathPrefix = managerPath + "/session/"
    public static let version: UInt32 = 1
    /// Longest string argument accepted, in bytes.
    public static let maxStringBytes = 4096
    public static let priorityRange = -1000...1000
    public static let maxSessionsPerName = 64

    static let portSignature = "(ssssssit)"
    static let routeSignature = "(a\(portSignature)a\(portSignature))"
}

/// A refused call: the D-Bus error name and its message.
struct APIError: Error {
    var name: String
    var message: String

    static func invalidArgs(_ message: String) -> APIError { APIError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message) }
    static func unknownName(_ message: String) -> APIError { APIError(name: "org.audioroute.Error.UnknownName", message: message) }

    init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    init(_ error: SessionError) {
        let code = error.code
        name = "org.audioroute.Error." + code.prefix(1).uppercased() + code.dropFirst()
        message = error.description
    }

    init(_ error: RequestError) {
        switch error {
        case .refused(let refused): self.init(refused)
        case .notSaved: self.init(name: "org.audioroute.Error.NotSaved", message: error.description)
        }
    }

    var reply: DBusReply { .error(name: name, message: message) }
}

enum DBusCoding {
    static func port(_ port: Port) -> DBusValue {
        .structure([
            .string(port.uid), .string(port.type.rawValue), .string(port.direction.rawValue), .string(port.device), .string(port.name),
            .string(port.alsa ?? ""), .int32(Int32(clamping: port.priority)), .uint64(port.sequence),
        ])
    }

    /// A route with whole port descriptions; `known` also holds ports that have just gone.
    static func route(_ route: Route, known: [String: Port]) -> DBusValue {
        func side(_ uids: [String]) -> DBusValue {
            // Every uid a route names was announced as a port first, so `known` has it.
            .array(uids.compactMap { known[$0].map(port) })
        }
        return .structure([side(route.outputs), side(route.inputs)])
    }

    /// The arguments as strings, after checking the exact signature and every length.
    static func check(_ call: DBusCall, _ signature: String) throws(APIError) {
        guard call.signature == signature else {
            throw .invalidArgs("\(call.member) takes \"\(signature)\", not \"\(call.signature)\"")
        }
        for value in call.arguments { try checkLength(value) }
    }

    private static func checkLength(_ value: DBusValue) throws(APIError) {
        switch value {
        case .string(let text) where text.utf8.count > DBusAPI.maxStringBytes:
            throw .invalidArgs("a string of \(text.utf8.count) bytes is longer than \(DBusAPI.maxStringBytes)")
        case .array(let items):
            guard items.count <= 64 else { throw .invalidArgs("\(items.count) items are more than 64") }
            for item in items { try checkLength(item) }
        default: return
        }
    }

    static func category(_ name: String) throws(APIError) -> Category {
        guard let value = Category(rawValue: name) else { throw .unknownName("unknown category \"\(name)\"") }
        return value
    }

    static func mode(_ name: String) throws(APIError) -> Mode {
        guard let value = Mode(rawValue: name) else { throw .unknownName("unknown mode \"\(name)\"") }
        return value
    }

    static func options(_ names: [DBusValue]) throws(APIError) -> CategoryOptions {
        var options: CategoryOptions = []
        for case .string(let name) in names {
            guard let option = CategoryOptions(name: name) else { throw .unknownName("unknown option \"\(name)\"") }
            options.formUnion(option)
        }
        return options
    }

    static func override(_ name: String) throws(APIError) -> OutputOverride {
        guard let value = OutputOverride(rawValue: name) else { throw .unknownName("unknown override \"\(name)\" (none or speaker)") }
        return value
    }

    static func interruption(_ kind: SessionEvent.Kind) -> (member: String, signature: String, values: [DBusValue])? {
        switch kind {
        case .interruptionBegan(let reason): return ("Interruption", "ssb", [.string("began"), .string(reason.rawValue), .bool(false)])
        case .interruptionEnded(let resume): return ("Interruption", "ssb", [.string("ended"), .string(""), .bool(resume)])
        case .ducked: return ("Ducked", "", [])
        case .unducked: return ("Unducked", "", [])
        case .silenceSecondaryAudioBegin: return ("SilenceSecondaryAudioHint", "s", [.string("begin")])
        case .silenceSecondaryAudioEnd: return ("SilenceSecondaryAudioHint", "s", [.string("end")])
        case .silenced: return ("Silenced", "", [])
        case .unsilenced: return ("Unsilenced", "", [])
        }
    }
}
