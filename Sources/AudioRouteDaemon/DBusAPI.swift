// The D-Bus API's fixed parts as pure Swift: names, signatures, errors, the
// access policy, value encodings and per-object introspection. docs/dbus-api.md
// and dbus/org.audioroute.AudioRoute1.xml are the reference.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers

/// Names and limits of the D-Bus API, version 1.
public enum DBusAPI {
    public static let busName = "org.audioroute.AudioRoute1"
    public static let managerPath = "/org/audioroute/AudioRoute1"
    public static let sessionsPath = managerPath + "/session"
    public static let managerInterface = "org.audioroute.AudioRoute1"
    public static let sessionInterface = "org.audioroute.Session1"
    public static let propertiesInterface = "org.freedesktop.DBus.Properties"
    public static let introspectableInterface = "org.freedesktop.DBus.Introspectable"
    public static let peerInterface = "org.freedesktop.DBus.Peer"
    /// The revision of version 1 (the `Version` property).
    public static let version: UInt32 = 1
    /// Longest string argument accepted, in UTF-8 bytes.
    public static let maxStringBytes = 4096
    /// Most values one call may carry (the largest call, SetCategory, needs a handful).
    public static let maxValuesPerCall = 64
    /// Most bytes of arguments one call may carry (strings count their bytes, other values 8).
    public static let maxCallBytes = 16384
    /// Most sessions one unique name (one connection) may hold.
    public static let maxSessionsPerName = 16
    /// Most connections of one user that may hold sessions at once.
    public static let maxConnectionsPerUser = 16
    /// Most sessions the daemon holds for everyone together.
    public static let maxSessions = 512
    /// A user's port priority must lie in this range.
    public static let priorityRange = -1000...1000

    /// The input signature of every method, by interface and member.
    public static let methods: [String: [String: String]] = [
        managerInterface: ["OpenSession": "s", "SetPortPriority": "si", "SetSilentMode": "b", "Explain": ""],
        sessionInterface: [
            "SetCategory": "ssas", "SetActive": "bb", "OverrideOutput": "s", "SetPreferredInput": "s",
            "SetPrefersInterruptionOnRouteDisconnect": "b", "Close": "",
        ],
        propertiesInterface: ["Get": "ss", "GetAll": "s", "Set": "ssv"],
        introspectableInterface: ["Introspect": ""],
    ]

    /// Port `(ssssssit)` and route `(a(ssssssit)a(ssssssit))` signatures.
    public static let portSignature = "(ssssssit)"
    public static let routeSignature = "(a\(portSignature)a\(portSignature))"

    /// What the server checks of every call before it decodes anything: the methods'
    /// signatures and the limits above. The caller's credentials are fetched for OpenSession
    /// (connections per user) and, where the policy is enforced, for the privileged members.
    public static func contract(enforced: Bool) -> BusContract {
        BusContract(
            methods: methods,
            credentialMembers: Set([managerInterface + ".OpenSession"]).union(enforced ? privilegedMembers : []),
            limits: DecodeLimits(maxValues: maxValuesPerCall, maxStringBytes: maxStringBytes, maxBytes: maxCallBytes))
    }

    /// Calls that change routing for everyone: on the system bus only root and
    /// group `audio` may make them (docs/security.md). Everything else (reads,
    /// a session's own lifecycle, category and activation) is open to all.
    public static let privilegedMembers: Set<String> = [
        managerInterface + ".SetPortPriority",
        managerInterface + ".SetSilentMode",
        sessionInterface + ".OverrideOutput",
        sessionInterface + ".SetPreferredInput",
    ]
}

/// A D-Bus error reply: its name and a message that names the fault.
public struct DBusErrorReply: Error, Sendable, Hashable, CustomStringConvertible {
    public var name: String
    public var message: String

    public init(_ name: String, _ message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name): \(message)" }

    static func invalidArgs(_ message: String) -> Self { Self("org.freedesktop.DBus.Error.InvalidArgs", message) }
    static func unknownName(_ message: String) -> Self { Self("org.audioroute.Error.UnknownName", message) }

    /// The reply for a refused tower request.
    public init(_ error: SessionError) {
        switch error {
        case .invalidOption: self.init("org.audioroute.Error.InvalidOption", error.description)
        case .invalidOverride: self.init("org.audioroute.Error.InvalidOverride", error.description)
        case .unknownPort: self.init("org.audioroute.Error.UnknownPort", error.description)
        case .notAnInput: self.init("org.audioroute.Error.NotAnInput", error.description)
        case .unknownSession: self.init("org.freedesktop.DBus.Error.UnknownObject", error.description)
        case .duplicateSession, .duplicatePort: self.init("org.freedesktop.DBus.Error.Failed", error.description)
        }
    }

    /// The reply for a refused or unsaved daemon request.
    public init(_ error: RequestError) {
        switch error {
        case .refused(let refused): self.init(refused)
        case .limitExceeded: self.init("org.freedesktop.DBus.Error.LimitsExceeded", error.description)
        case .notSaved: self.init("org.audioroute.Error.NotSaved", error.description)
        }
    }
}

/// Who may change routing on the system bus.
public struct AccessPolicy: Sendable, Hashable {
    /// False on the session bus: the bus already admits only its user.
    public var enforced: Bool
    /// The gid of group `audio`, if the group exists.
    public var audioGroup: UInt32?

    public init(enforced: Bool, audioGroup: UInt32?) {
        self.enforced = enforced
        self.audioGroup = audioGroup
    }

    /// Whether a call to `interface.member` by a caller with `credentials` may go on.
    /// Credentials that could not be fetched deny a privileged call (fail closed).
    public func allows(interface: String, member: String, credentials: Result<BusCredentials, BusError>?) -> Bool {
        guard enforced, DBusAPI.privilegedMembers.contains(interface + "." + member) else { return true }
        guard case .success(let caller)? = credentials, let uid = caller.uid else { return false }
        if uid == 0 { return true }
        if let audioGroup, caller.gids.contains(audioGroup) { return true }
        return false
    }
}

// MARK: Checking arguments

extension DBusAPI {
    /// Checks a call's signature against the API's, and every string's length.
    public static func check(signature: String, expected: String, arguments: [DBusValue]) throws(DBusErrorReply) {
        guard signature == expected else {
            throw .invalidArgs("expected signature \"\(expected)\", got \"\(signature)\"")
        }
        for argument in arguments { try checkStrings(argument) }
    }

    private static func checkStrings(_ value: DBusValue) throws(DBusErrorReply) {
        switch value {
        case .string(let text), .objectPath(let text), .signature(let text):
            if text.utf8.count > maxStringBytes { throw .invalidArgs("a string of \(text.utf8.count) bytes; at most \(maxStringBytes) are accepted") }
        case .invalidString: throw .invalidArgs("a string that is not valid UTF-8")
        case .array(let items), .structure(let items): for item in items { try checkStrings(item) }
        case .dictionary(let entries):
            for entry in entries {
                try checkStrings(entry.key)
                try checkStrings(entry.value)
            }
        case .variant(let inner): try checkStrings(inner)
        default: break
        }
    }

    static func category(_ name: String) throws(DBusErrorReply) -> Category {
        guard let value = Category(rawValue: name) else { throw .unknownName("unknown category \"\(name)\"") }
        return value
    }

    static func mode(_ name: String) throws(DBusErrorReply) -> Mode {
        guard let value = Mode(rawValue: name) else { throw .unknownName("unknown mode \"\(name)\"") }
        return value
    }

    static func options(_ names: [String]) throws(DBusErrorReply) -> CategoryOptions {
        var options: CategoryOptions = []
        for name in names {
            guard let option = CategoryOptions(name: name) else { throw .unknownName("unknown option \"\(name)\"") }
            options.formUnion(option)
        }
        return options
    }

    static func outputOverride(_ name: String) throws(DBusErrorReply) -> OutputOverride {
        guard let value = OutputOverride(rawValue: name) else { throw .unknownName("unknown override \"\(name)\"; use none or speaker") }
        return value
    }
}

// MARK: Values

extension DBusAPI {
    /// A port as `(ssssssit)`.
    public static func value(of port: Port) -> DBusValue {
        .structure([
            .string(port.uid), .string(port.type.rawValue), .string(port.direction.rawValue), .string(port.device), .string(port.name),
            .string(port.alsa ?? ""), .int32(Int32(clamping: port.priority)), .uint64(port.sequence),
        ])
    }

    /// A route as `(a(ssssssit)a(ssssssit))`, its uids described by `describe`; unknown uids are left out.
    public static func value(of route: Route, describe: (String) -> Port?) -> DBusValue {
        .structure([
            .array(route.outputs.compactMap(describe).map(value(of:))),
            .array(route.inputs.compactMap(describe).map(value(of:))),
        ])
    }

    /// The signal a session event becomes: member, signature, values.
    public static func signal(for kind: SessionEvent.Kind) -> (member: String, signature: String, values: [DBusValue]) {
        switch kind {
        case .interruptionBegan(let reason): return ("Interruption", "ssb", [.string("began"), .string(reason.rawValue), .bool(false)])
        case .interruptionEnded(let shouldResume): return ("Interruption", "ssb", [.string("ended"), .string(""), .bool(shouldResume)])
        case .ducked: return ("Ducked", "", [])
        case .unducked: return ("Unducked", "", [])
        case .silenceSecondaryAudioBegin: return ("SilenceSecondaryAudioHint", "s", [.string("begin")])
        case .silenceSecondaryAudioEnd: return ("SilenceSecondaryAudioHint", "s", [.string("end")])
        case .silenced: return ("Silenced", "", [])
        case .unsilenced: return ("Unsilenced", "", [])
        }
    }
}

// MARK: Introspection

extension DBusAPI {
    static let standardInterfaces = """
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId">
              <arg name="machine_uuid" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect">
              <arg name="xml_data" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAll">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="props" type="a{sv}" direction="out"/>
            </method>
            <method name="Set">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="in"/>
            </method>
            <signal name="PropertiesChanged">
              <arg type="s" name="interface_name"/>
              <arg type="a{sv}" name="changed_properties"/>
              <arg type="as" name="invalidated_properties"/>
            </signal>
          </interface>

        """

    /// The `<interface name="...">…</interface>` block of `name` in the checked-in XML, verbatim.
    public static func interfaceBlock(_ name: String, in xml: String = audioRouteIntrospectionXML) -> String? {
        let opening = "  <interface name=\"\(name)\">"
        guard let start = xml.range(of: opening) else { return nil }
        guard let end = xml[start.upperBound...].range(of: "</interface>") else { return nil }
        return String(xml[start.lowerBound..<end.upperBound])
    }

    /// The introspection document of one object: the standard interfaces, the
    /// API's interface block taken verbatim from the checked-in XML, and child nodes.
    static func introspection(interface: String?, children: [String]) -> String {
        var text = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>

            """
        text += standardInterfaces
        if let interface, let block = interfaceBlock(interface) { text += block + "\n" }
        for child in children { text += "  <node name=\"\(child)\"/>\n" }
        text += "</node>\n"
        return text
    }
}

extension String {
    /// The range of the first occurrence of `needle` (no Foundation).
    func range(of needle: String) -> Range<String.Index>? { self[...].range(of: needle) }
}

extension Substring {
    func range(of needle: String) -> Range<String.Index>? {
        let target = Array(needle.utf8)
        guard !target.isEmpty else { return nil }
        var index = startIndex
        while index < endIndex {
            var i = index
            var j = 0
            while j < target.count, i < endIndex, utf8[i] == target[j] {
                i = utf8.index(after: i)
                j += 1
            }
            if j == target.count { return index..<i }
            index = utf8.index(after: index)
        }
        return nil
    }
}
