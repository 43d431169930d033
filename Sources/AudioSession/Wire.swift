// The daemon's replies and signals as the library's types. The API's names and the
// decoding itself are the contract's (AudioRouteIPC's DBusAPI); this turns its values into
// PortDescription and friends, and its error names into AudioSessionError.

import AudioRouteCore
import AudioRouteDBus
import AudioRouteIPC

/// Decoding of the daemon's values. Every failure names the fault (`badReply`).
enum Wire {
    /// `body`'s value, a decoding failure as `badReply`.
    private static func read<T>(_ body: () throws(WireError) -> T) throws(AudioSessionError) -> T {
        do throws(WireError) { return try body() } catch { throw .badReply(error.description) }
    }

    /// `DataSources`' reply.
    static func dataSources(_ arguments: [DBusValue]) throws(AudioSessionError) -> DataSourcesReply {
        try read { () throws(WireError) in try DBusAPI.dataSources(arguments) }
    }

    /// A `(ssssssit)` port: its availability is not said.
    static func port(_ value: DBusValue) throws(AudioSessionError) -> PortDescription {
        PortDescription(try read { () throws(WireError) in try DBusAPI.port(value) }, availability: nil)
    }

    /// An `a(ssssssit)` list of ports: their availability is not said.
    static func ports(_ value: DBusValue) throws(AudioSessionError) -> [PortDescription] {
        try read { () throws(WireError) in try DBusAPI.ports(value) }.map { PortDescription($0, availability: nil) }
    }

    /// An `a(ssssssits)` list of ports with their availability (`AllPorts`).
    static func portsWithAvailability(_ value: DBusValue) throws(AudioSessionError) -> [PortDescription] {
        try read { () throws(WireError) in try DBusAPI.portsWithAvailability(value) }.map { PortDescription($0) }
    }

    /// A `(a(ssssssit)a(ssssssit))` route: outputs, then inputs.
    static func route(_ value: DBusValue) throws(AudioSessionError) -> RouteDescription {
        RouteDescription(try read { () throws(WireError) in try DBusAPI.route(value) })
    }

    static func routeChange(_ arguments: [DBusValue]) throws(AudioSessionError) -> RouteChangeInfo {
        let change = try read { () throws(WireError) in try DBusAPI.routeChange(arguments) }
        return RouteChangeInfo(
            reason: change.reason, previousRoute: RouteDescription(change.previousPorts), currentRoute: RouteDescription(change.currentPorts))
    }

    static func portsChanged(_ arguments: [DBusValue]) throws(AudioSessionError) -> (PortChangeKind, PortDescription) {
        let (kind, port) = try read { () throws(WireError) in try DBusAPI.portsChanged(arguments) }
        return (PortChangeKind(kind), PortDescription(port, availability: nil))
    }

    static func allPortsChanged(_ arguments: [DBusValue]) throws(AudioSessionError) -> (PortChangeKind, PortDescription) {
        let (kind, port) = try read { () throws(WireError) in try DBusAPI.allPortsChanged(arguments) }
        return (PortChangeKind(kind), PortDescription(port))
    }

    static func uint32(_ value: DBusValue, _ what: String) throws(AudioSessionError) -> UInt32 {
        guard case .uint32(let number) = value.unwrapped else { throw .badReply("\(what) is not a uint32: \(value.typeName)") }
        return number
    }

    /// The notification a session signal stands for; nil for a member the API does not have.
    static func sessionNotification(member: String, _ arguments: [DBusValue]) throws(AudioSessionError) -> AudioSessionNotification? {
        switch try read({ () throws(WireError) in try DBusAPI.sessionEvent(member: member, arguments) }) {
        case .interruptionBegan(let reason)?: return .interruption(InterruptionInfo(type: .began, reason: reason, options: []))
        case .interruptionEnded(let shouldResume)?:
            return .interruption(InterruptionInfo(type: .ended, reason: nil, options: shouldResume ? .shouldResume : []))
        case .ducked?: return .ducked
        case .unducked?: return .unducked
        case .silenceSecondaryAudioBegin?: return .silenceSecondaryAudioHint(.begin)
        case .silenceSecondaryAudioEnd?: return .silenceSecondaryAudioHint(.end)
        case .silenced?: return .silenced
        case .unsilenced?: return .unsilenced
        case nil: return nil
        }
    }

    static func sessions(_ value: DBusValue) throws(AudioSessionError) -> [SessionSummary] {
        try read { () throws(WireError) in try DBusAPI.sessions(value) }
    }

    static func sessionStates(_ value: DBusValue) throws(AudioSessionError) -> [SessionState] {
        try read { () throws(WireError) in try DBusAPI.sessionStates(value) }
    }

    static func explanation(_ arguments: [DBusValue]) throws(AudioSessionError) -> ExplainReply {
        try read { () throws(WireError) in try DBusAPI.explanation(arguments) }
    }

    static func soundEngine(_ value: DBusValue) throws(AudioSessionError) -> SoundEngine {
        try read { () throws(WireError) in try DBusAPI.soundEngine(value) }
    }

    static func bool(_ value: DBusValue, _ what: String) throws(AudioSessionError) -> Bool {
        try read { () throws(WireError) in try DBusAPI.bool(value, what) }
    }

    static func string(_ value: DBusValue, _ what: String) throws(AudioSessionError) -> String {
        try read { () throws(WireError) in try DBusAPI.string(value, what) }
    }

    /// A failed call as the library's error. `bus` names the bus for "unreachable".
    static func error(_ error: DBusCallError, bus: String) -> AudioSessionError {
        switch error {
        case .remote(let name, let message):
            guard let known = DBusErrorName(rawValue: name) else { return .remote(name: name, message: message) }
            switch known {
            case .invalidOption: return .invalidOption(message)
            case .invalidOverride: return .invalidOverride(message)
            case .unknownName: return .unknownName(message)
            case .unknownPort: return .unknownPort(message)
            case .notAnInput: return .notAnInput(message)
            case .unknownDataSource: return .unknownDataSource(message)
            case .notOwner: return .notOwner(message)
            case .notSaved: return .notSaved(message)
            case .invalidArgs: return .invalidArguments(message)
            case .limitsExceeded: return .limitsExceeded(message)
            case .accessDenied: return .accessDenied(message)
            case .serviceUnknown, .nameHasNoOwner, .noReply, .disconnected:
                return .daemonUnavailable(bus: bus, detail: message.isEmpty ? name : message)
            case .failed, .unknownObject, .unknownInterface, .unknownMethod, .unknownProperty, .propertyReadOnly:
                return .remote(name: name, message: message)
            }
        case .bus(let busError):
            return .daemonUnavailable(bus: bus, detail: "\(busError)")
        }
    }
}
