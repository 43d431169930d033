// The error names of the API, in both directions: the daemon replies with them
// (DBusErrorReply), clients read them back (AudioSessionError).
import AudioRouteCore

/// Every D-Bus error name the API uses: its own (`org.audioroute.Error.*`), the standard ones the
/// daemon replies with, and the bus's own that tell a client the daemon is not there.
public enum DBusErrorName: String, Sendable, Hashable, CaseIterable {
    // The API's own.
    case invalidOption = "org.audioroute.Error.InvalidOption"
    case invalidOverride = "org.audioroute.Error.InvalidOverride"
    case unknownName = "org.audioroute.Error.UnknownName"
    case unknownPort = "org.audioroute.Error.UnknownPort"
    case notAnInput = "org.audioroute.Error.NotAnInput"
    case unknownDataSource = "org.audioroute.Error.UnknownDataSource"
    case notOwner = "org.audioroute.Error.NotOwner"
    case notSaved = "org.audioroute.Error.NotSaved"
    // Standard names the daemon replies with.
    case invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    case limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
    case accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    case failed = "org.freedesktop.DBus.Error.Failed"
    case unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    case unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    case unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    case unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    case propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
    // The bus's, when the daemon is not on it or went away.
    case serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    case nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    case noReply = "org.freedesktop.DBus.Error.NoReply"
    case disconnected = "org.freedesktop.DBus.Error.Disconnected"
}

/// A D-Bus error reply: its name and a message that names the fault.
public struct DBusErrorReply: Error, Sendable, Hashable, CustomStringConvertible {
    public var name: String
    public var message: String

    public init(_ name: String, _ message: String) {
        self.name = name
        self.message = message
    }

    public init(_ name: DBusErrorName, _ message: String) { self.init(name.rawValue, message) }

    public var description: String { "\(name): \(message)" }

    public static func invalidArgs(_ message: String) -> Self { Self(.invalidArgs, message) }
    public static func unknownName(_ message: String) -> Self { Self(.unknownName, message) }

    /// The reply for a refused tower request.
    public init(_ error: SessionError) {
        switch error {
        case .invalidOption: self.init(.invalidOption, error.description)
        case .invalidOverride: self.init(.invalidOverride, error.description)
        case .unknownPort: self.init(.unknownPort, error.description)
        case .notAnInput: self.init(.notAnInput, error.description)
        case .unknownDataSource: self.init(.unknownDataSource, error.description)
        case .unknownSession: self.init(.unknownObject, error.description)
        case .duplicateSession, .duplicatePort: self.init(.failed, error.description)
        }
    }
}
