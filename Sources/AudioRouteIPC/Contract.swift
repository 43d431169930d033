// The D-Bus API, version 1, written once: bus and interface names, object paths, every
// method, signal and property with its signatures, the limits and who may call what.
// The daemon serves it (DBusService), clients call it (AudioSession); a test checks the
// checked-in dbus/org.audioroute.AudioRoute1.xml against it. docs/dbus-api.md explains it.
import AudioRouteDBus

/// A method of the API: its interface, name, and the signatures of its arguments and reply.
public struct BusMethod: Sendable, Hashable, CustomStringConvertible {
    public let interface: String
    public let name: String
    /// The arguments' signature ("" for none).
    public let input: String
    /// The reply's signature ("" for none).
    public let output: String

    public init(_ interface: String, _ name: String, in input: String = "", out output: String = "") {
        self.interface = interface
        self.name = name
        self.input = input
        self.output = output
    }

    /// `interface.name`.
    public var qualifiedName: String { interface + "." + name }
    public var description: String { qualifiedName }
}

/// A signal of the API: its interface, name and signature.
public struct BusSignalMember: Sendable, Hashable, CustomStringConvertible {
    public let interface: String
    public let name: String
    public let signature: String

    public init(_ interface: String, _ name: String, _ signature: String = "") {
        self.interface = interface
        self.name = name
        self.signature = signature
    }

    public var description: String { interface + "." + name }
}

/// A read-only property of the API.
public struct BusProperty: Sendable, Hashable, CustomStringConvertible {
    public let interface: String
    public let name: String
    public let signature: String

    public init(_ interface: String, _ name: String, _ signature: String) {
        self.interface = interface
        self.name = name
        self.signature = signature
    }

    public var description: String { interface + "." + name }
}

/// Names, members and limits of the D-Bus API, version 1.
public enum DBusAPI {
    public static let busName = "org.audioroute.AudioRoute1"
    public static let managerPath = "/org/audioroute/AudioRoute1"
    public static let sessionsPath = managerPath + "/session"
    public static let managerInterface = "org.audioroute.AudioRoute1"
    public static let sessionInterface = "org.audioroute.Session1"
    /// Since Version 6: the manager object's broadcast of every session's changes, for monitors.
    /// An interface of its own, so that apps, which match `managerInterface`, are not woken by it.
    public static let monitorInterface = "org.audioroute.Monitor1"
    public static let propertiesInterface = "org.freedesktop.DBus.Properties"
    public static let introspectableInterface = "org.freedesktop.DBus.Introspectable"
    public static let peerInterface = "org.freedesktop.DBus.Peer"
    /// The revision of version 1 (the `Version` property). 2 added `AllPorts` and `AllPortsChanged`;
    /// 3 `ScreenLocked` and `ScreenLockChanged`; 4 `SoundServer` and a port's data sources (`DataSources`,
    /// `SetPreferredDataSource`, `PreferredDataSource`); 5 `SoundServerDefaults`; 6 the `Monitor1`
    /// interface and its `SessionChanged`; 7 `SessionStates`.
    public static let version: UInt32 = 7
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
    /// Of `maxSessions`, the places that on the system bus only root and group `audio` may take.
    public static let reservedSessions = 64
    /// On the system bus, the sessions every user gets while the pool's open part has room.
    public static let guaranteedSessionsPerUser = 16
    /// On the system bus, places of the open part that a user holding more than its
    /// guaranteed sessions leaves free, for users still to come.
    public static let newcomerRoom = 64
    /// A user's port priority must lie in this range.
    public static let priorityRange = -1000...1000

    /// A port: (uid, type, direction, device, name, alsa, priority, sequence).
    public static let portSignature = "(ssssssit)"
    /// A port with its availability, as `AllPorts` lists it: the port's fields, then `available`,
    /// `unavailable` or `unknown`.
    public static let portWithAvailabilitySignature = "(ssssssits)"
    /// A route: (outputs, inputs), each an array of ports.
    public static let routeSignature = "(a\(portSignature)a\(portSignature))"
    /// A session in `Sessions`: (path, owner, app, category, mode, options, active).
    public static let sessionSummarySignature = "(ossssasb)"
    /// A session in `SessionStates` (since Version 7): (path, process id or 0, program or "",
    /// state, marks).
    public static let sessionStateSignature = "(oussas)"

    /// The object path of session number `number`.
    public static func sessionPath(_ number: Int) -> String { sessionsPath + "/\(number)" }

    /// The number of a session's object path, or nil for any other path.
    public static func sessionNumber(_ path: String) -> Int? {
        let prefix = sessionsPath + "/"
        guard path.hasPrefix(prefix), let number = Int(path.dropFirst(prefix.count)), number > 0 else { return nil }
        return number
    }

    /// `org.audioroute.AudioRoute1` at `managerPath`: ports, routes, sessions, silent mode.
    public enum Manager {
        public static let openSession = BusMethod(managerInterface, "OpenSession", in: "s", out: "o")
        public static let setPortPriority = BusMethod(managerInterface, "SetPortPriority", in: "si")
        public static let setSilentMode = BusMethod(managerInterface, "SetSilentMode", in: "b")
        public static let explain = BusMethod(managerInterface, "Explain", out: "ssa(sas)")
        /// Since Version 4: a port's data sources (id, name, alsa), the one it uses now ("" for a
        /// port without any) and why.
        public static let dataSources = BusMethod(managerInterface, "DataSources", in: "s", out: "a(sss)ss")

        public static let routeChanged = BusSignalMember(managerInterface, "RouteChanged", "s" + routeSignature + routeSignature)
        public static let portsChanged = BusSignalMember(managerInterface, "PortsChanged", "s" + portSignature)
        public static let silentModeChanged = BusSignalMember(managerInterface, "SilentModeChanged", "b")
        /// Since Version 2: a change of `AllPorts`.
        public static let allPortsChanged = BusSignalMember(managerInterface, "AllPortsChanged", "s" + portWithAvailabilitySignature)
        /// Since Version 3: the screen was locked or unlocked (logind's lock of the user's session).
        public static let screenLockChanged = BusSignalMember(managerInterface, "ScreenLockChanged", "b")

        public static let versionProperty = BusProperty(managerInterface, "Version", "u")
        public static let routeProperty = BusProperty(managerInterface, "Route", routeSignature)
        public static let portsProperty = BusProperty(managerInterface, "Ports", "a" + portSignature)
        public static let silentModeProperty = BusProperty(managerInterface, "SilentMode", "b")
        public static let sessionsProperty = BusProperty(managerInterface, "Sessions", "a" + sessionSummarySignature)
        /// Since Version 2: every known port, unavailable ones included, with its availability.
        public static let allPortsProperty = BusProperty(managerInterface, "AllPorts", "a" + portWithAvailabilitySignature)
        /// Since Version 3: whether the screen is locked, as logind says (false without logind).
        public static let screenLockedProperty = BusProperty(managerInterface, "ScreenLocked", "b")
        /// Since Version 4: the user's sound server (server or "", summary, a PulseAudio protocol
        /// server answers, the cards it holds, the deciding rule, its signal).
        public static let soundServerProperty = BusProperty(managerInterface, "SoundServer", "(ssbauss)")
        /// Since Version 5: whether the sound server's default sink and source follow the route
        /// (the nodes chosen, and the rule), or why not.
        public static let soundServerDefaultsProperty = BusProperty(managerInterface, "SoundServerDefaults", "s")
        /// Since Version 7: each session's process, program and state (`SessionState`), in the
        /// order of `Sessions`.
        public static let sessionStatesProperty = BusProperty(managerInterface, "SessionStates", "a" + sessionStateSignature)

        public static let methods = [openSession, setPortPriority, setSilentMode, explain, dataSources]
        public static let signals = [routeChanged, portsChanged, silentModeChanged, allPortsChanged, screenLockChanged]
        public static let properties = [
            versionProperty, routeProperty, portsProperty, silentModeProperty, sessionsProperty, allPortsProperty, screenLockedProperty,
            soundServerProperty, soundServerDefaultsProperty, sessionStatesProperty,
        ]
    }

    /// `org.audioroute.Session1` at `sessionPath(N)`: one client's session.
    public enum Session {
        public static let setCategory = BusMethod(sessionInterface, "SetCategory", in: "ssas")
        public static let setActive = BusMethod(sessionInterface, "SetActive", in: "bb")
        public static let overrideOutput = BusMethod(sessionInterface, "OverrideOutput", in: "s")
        public static let setPreferredInput = BusMethod(sessionInterface, "SetPreferredInput", in: "s")
        public static let setPrefersInterruptionOnRouteDisconnect = BusMethod(sessionInterface, "SetPrefersInterruptionOnRouteDisconnect", in: "b")
        public static let close = BusMethod(sessionInterface, "Close")
        /// Since Version 4: (port uid, data source id); "" clears the preference.
        public static let setPreferredDataSource = BusMethod(sessionInterface, "SetPreferredDataSource", in: "ss")
        /// Since Version 4: the session's preferred data source of a port, "" for none.
        public static let preferredDataSource = BusMethod(sessionInterface, "PreferredDataSource", in: "s", out: "s")

        /// Sent to the session's owner only, like every signal of this interface.
        public static let interruption = BusSignalMember(sessionInterface, "Interruption", "ssb")
        public static let ducked = BusSignalMember(sessionInterface, "Ducked")
        public static let unducked = BusSignalMember(sessionInterface, "Unducked")
        public static let silenceSecondaryAudioHint = BusSignalMember(sessionInterface, "SilenceSecondaryAudioHint", "s")
        public static let silenced = BusSignalMember(sessionInterface, "Silenced")
        public static let unsilenced = BusSignalMember(sessionInterface, "Unsilenced")

        public static let categoryProperty = BusProperty(sessionInterface, "Category", "s")
        public static let modeProperty = BusProperty(sessionInterface, "Mode", "s")
        public static let optionsProperty = BusProperty(sessionInterface, "Options", "as")
        public static let activeProperty = BusProperty(sessionInterface, "Active", "b")
        public static let preferredInputProperty = BusProperty(sessionInterface, "PreferredInput", "s")
        public static let otherAudioPlayingProperty = BusProperty(sessionInterface, "OtherAudioPlaying", "b")
        public static let secondaryAudioShouldBeSilencedHintProperty = BusProperty(sessionInterface, "SecondaryAudioShouldBeSilencedHint", "b")

        public static let methods = [
            setCategory, setActive, overrideOutput, setPreferredInput, setPrefersInterruptionOnRouteDisconnect, close, setPreferredDataSource,
            preferredDataSource,
        ]
        public static let signals = [interruption, ducked, unducked, silenceSecondaryAudioHint, silenced, unsilenced]
        public static let properties = [
            categoryProperty, modeProperty, optionsProperty, activeProperty, preferredInputProperty, otherAudioPlayingProperty,
            secondaryAudioShouldBeSilencedHintProperty,
        ]
    }

    /// `org.audioroute.Monitor1` at `managerPath`, since Version 6: every session's changes,
    /// broadcast (a session's own signals go to its owner alone).
    public enum Monitor {
        /// (session, app, change, detail): the session's object path (a sound server's stream:
        /// `managerPath` + "/pipewire/N", as `Sessions` lists it), its app name, what changed
        /// (`SessionActivity.Change`) and the change's detail.
        public static let sessionChanged = BusSignalMember(monitorInterface, "SessionChanged", "osss")

        public static let signals = [sessionChanged]
    }

    /// The standard interfaces the daemon answers itself (Peer is sd-bus's).
    public enum Standard {
        public static let get = BusMethod(propertiesInterface, "Get", in: "ss", out: "v")
        public static let getAll = BusMethod(propertiesInterface, "GetAll", in: "s", out: "a{sv}")
        public static let set = BusMethod(propertiesInterface, "Set", in: "ssv")
        public static let introspect = BusMethod(introspectableInterface, "Introspect", out: "s")

        public static let methods = [get, getAll, set, introspect]
    }

    /// Every method the daemon answers.
    public static let allMethods = Manager.methods + Session.methods + Standard.methods

    /// The input signature of every method, by interface and member.
    public static let methods: [String: [String: String]] = {
        var table: [String: [String: String]] = [:]
        for method in allMethods { table[method.interface, default: [:]][method.name] = method.input }
        return table
    }()

    /// The method `interface.member`, if the API has it.
    public static func method(_ interface: String, _ member: String) -> BusMethod? {
        allMethods.first { $0.interface == interface && $0.name == member }
    }

    /// Calls that change routing for everyone: on the system bus only root and
    /// group `audio` may make them (docs/security.md). Everything else (reads,
    /// a session's own lifecycle, category and activation) is open to all.
    public static let privilegedMembers: Set<String> = Set(
        [Manager.setPortPriority, Manager.setSilentMode, Session.overrideOutput, Session.setPreferredInput, Session.setPreferredDataSource]
            .map(\.qualifiedName))

    /// What the server checks of every call before it decodes anything: the methods'
    /// signatures and the limits above. The caller's credentials are fetched for OpenSession
    /// (connections per user) and, where the policy is enforced, for the privileged members.
    public static func contract(enforced: Bool) -> BusContract {
        BusContract(
            methods: methods,
            credentialMembers: Set([Manager.openSession.qualifiedName]).union(enforced ? privilegedMembers : []),
            limits: DecodeLimits(maxValues: maxValuesPerCall, maxStringBytes: maxStringBytes, maxBytes: maxCallBytes))
    }

    /// A match rule for the daemon's signals of `interface` (and, with `path`, that object only).
    public static func signalMatch(sender: String = busName, interface: String, path: String? = nil) -> String {
        "type='signal',sender='\(sender)'" + (path.map { ",path='\($0)'" } ?? "") + ",interface='\(interface)'"
    }
}
