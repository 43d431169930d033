// logind's messages as the daemon needs them: the sleep signal, a session's lock hint and the
// replies that find the session. Pure: values in, an event or a named fault out.
import AudioRouteDBus

/// What the system (logind) tells the daemon. The watcher reports; the daemon decides.
public enum SystemEvent: Sendable, Hashable {
    /// `PrepareForSleep(true)`: the system is about to suspend or hibernate.
    case sleeping
    /// `PrepareForSleep(false)`: the system has resumed.
    case woke
    /// The followed session's `LockedHint` changed (or was read at start, or reset when logind
    /// or the session went away).
    case screenLocked(Bool)
}

/// Data from logind that does not have the shape its interface documents. Logged once, ignored.
public struct LogindFault: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// A signal or reply whose arguments are not of the documented types.
        case wrongType
        /// A signal on logind's paths from a name that does not own org.freedesktop.login1.
        case foreignSender
        /// A message that could not be read at all.
        case malformedMessage
    }

    public var kind: Kind
    /// What was wrong, naming the member.
    public var detail: String

    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { "\(kind.rawValue): \(detail)" }
}

/// What a session's `PropertiesChanged` says about `LockedHint`.
public enum LockedHintChange: Sendable, Hashable {
    /// The signal is about other properties.
    case untouched
    case value(Bool)
    /// Invalidated without a value: to be read again.
    case invalidated
}

/// logind's names and the decoding of its messages (org.freedesktop.login1(5)).
public enum Logind {
    public static let service = "org.freedesktop.login1"
    public static let managerPath = "/org/freedesktop/login1"
    public static let managerInterface = "org.freedesktop.login1.Manager"
    public static let sessionInterface = "org.freedesktop.login1.Session"
    public static let userInterface = "org.freedesktop.login1.User"
    /// Where session objects live: their PropertiesChanged are matched under it.
    public static let sessionPathPrefix = "/org/freedesktop/login1/session"

    /// `PrepareForSleep(b)`.
    public static func prepareForSleep(_ args: [DBusValue]) -> Result<SystemEvent, LogindFault> {
        guard args.count == 1, case .bool(let going) = args[0] else {
            return .failure(LogindFault(.wrongType, "PrepareForSleep is not (b): (\(args.map(\.typeName).joined()))"))
        }
        return .success(going ? .sleeping : .woke)
    }

    /// `PropertiesChanged(sa{sv}as)` on a session object: what it says of `LockedHint`.
    public static func lockedHint(propertiesChanged args: [DBusValue]) -> Result<LockedHintChange, LogindFault> {
        guard args.count == 3, case .string(let interface) = args[0], let changed = args[1].stringKeyed,
            case .array(let invalidated) = args[2]
        else {
            return .failure(LogindFault(.wrongType, "PropertiesChanged is not (sa{sv}as): (\(args.map(\.typeName).joined()))"))
        }
        guard interface == sessionInterface else { return .success(.untouched) }
        if let value = changed.last(where: { $0.key == "LockedHint" })?.value {
            guard case .bool(let locked) = value.unwrapped else {
                return .failure(LogindFault(.wrongType, "LockedHint is \(value.unwrapped.typeName), not b"))
            }
            return .success(.value(locked))
        }
        if invalidated.contains(where: { $0.text == "LockedHint" }) { return .success(.invalidated) }
        return .success(.untouched)
    }

    /// A `Properties.Get` reply for `LockedHint`: (v) holding b.
    public static func lockedHint(getReply args: [DBusValue]) -> Result<Bool, LogindFault> {
        guard args.count == 1, case .bool(let locked) = args[0].unwrapped else {
            return .failure(LogindFault(.wrongType, "LockedHint reply is not a boolean: (\(args.map(\.typeName).joined()))"))
        }
        return .success(locked)
    }

    /// A reply of one object path (`GetSession`, `GetSessionByPID`, `GetUser`).
    public static func objectPath(reply args: [DBusValue], of member: String) -> Result<String, LogindFault> {
        guard args.count == 1, case .objectPath(let path) = args[0] else {
            return .failure(LogindFault(.wrongType, "\(member) reply is not (o): (\(args.map(\.typeName).joined()))"))
        }
        return .success(path)
    }

    /// A `Properties.Get` reply for `User.Display`: (v) holding (so). nil when the user has no
    /// display session (logind says "/").
    public static func displaySession(getReply args: [DBusValue]) -> Result<String?, LogindFault> {
        guard args.count == 1, case .structure(let fields) = args[0].unwrapped, fields.count == 2, case .string = fields[0],
            case .objectPath(let path) = fields[1]
        else {
            return .failure(LogindFault(.wrongType, "User.Display reply is not (so): (\(args.map(\.typeName).joined()))"))
        }
        return .success(path == "/" ? nil : path)
    }
}

/// Whose lock state the logind watcher follows.
public enum LogindSessionChoice: Sendable, Hashable {
    /// None: sleep and wake only. The system instance serves every user and has no session of
    /// its own (docs/decisions.md, "The screen lock follows the user's session").
    case noSession
    /// A user's daemon: the session `id` when given (XDG_SESSION_ID), else the session of
    /// process `pid` (GetSessionByPID), else user `uid`'s display session (User.Display), looked
    /// for again whenever a session starts or ends.
    case user(id: String?, pid: UInt32, uid: UInt32)

    /// The choice for a daemon: `.noSession` for the system instance, else the user's, from its environment.
    public static func forDaemon(system: Bool, environment: [String: String], pid: UInt32, uid: UInt32) -> Self {
        if system { return .noSession }
        let id = environment["XDG_SESSION_ID"].flatMap { $0.isEmpty ? nil : $0 }
        return .user(id: id, pid: pid, uid: uid)
    }
}
