// The D-Bus API v1 (docs/dbus-api.md) as pure Swift: names, and decoding of
// DBusValue trees into the library's types. Unit tests feed it values directly.

import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus

/// Names of the D-Bus API, version 1.
public enum AudioRouteBusAPI {
    public static let busName = "org.audioroute.AudioRoute1"
    public static let managerPath = "/org/audioroute/AudioRoute1"
    public static let managerInterface = "org.audioroute.AudioRoute1"
    public static let sessionInterface = "org.audioroute.Session1"
    public static let portSignature = "(ssssssit)"
}

/// Decoding of the daemon's values. Every failure names the fault.
enum Wire {
    /// A `(ssssssit)` port.
    static func port(_ value: DBusValue) throws(AudioSessionError) -> PortDescription {
        guard case .structure(let f) = value.unwrapped, f.count == 8,
            case .string(let uid) = f[0], case .string(let type) = f[1], case .string(let direction) = f[2],
            case .string(let device) = f[3], case .string(let name) = f[4], case .string(let alsa) = f[5],
            case .int32(let priority) = f[6], case .uint64(let sequence) = f[7]
        else { throw .badReply("a port is not (ssssssit): \(value.typeName)") }
        guard let portType = PortType(rawValue: type) else { throw .badReply("port \(uid): unknown port type \"\(type)\"") }
        guard let portDirection = PortDirection(rawValue: direction) else {
            throw .badReply("port \(uid): unknown direction \"\(direction)\"")
        }
        return PortDescription(
            uid: uid, portType: portType, portName: name, direction: portDirection, device: device,
            alsa: alsa.isEmpty ? nil : alsa, priority: Int(priority), sequence: sequence)
    }

    /// An `a(ssssssit)` list of ports.
    static func ports(_ value: DBusValue) throws(AudioSessionError) -> [PortDescription] {
        guard case .array(let items) = value.unwrapped else { throw .badReply("ports are not an array: \(value.typeName)") }
        var result: [PortDescription] = []
        for item in items { result.append(try port(item)) }
        return result
    }

    /// A `(a(ssssssit)a(ssssssit))` route: outputs, then inputs.
    static func route(_ value: DBusValue) throws(AudioSessionError) -> RouteDescription {
        guard case .structure(let sides) = value.unwrapped, sides.count == 2 else {
            throw .badReply("a route is not (a(ssssssit)a(ssssssit)): \(value.typeName)")
        }
        return RouteDescription(outputs: try ports(sides[0]), inputs: try ports(sides[1]))
    }

    static func routeChange(_ arguments: [DBusValue]) throws(AudioSessionError) -> RouteChangeInfo {
        guard arguments.count == 3, case .string(let name) = arguments[0] else {
            throw .badReply("RouteChanged is not (s, Route, Route)")
        }
        guard let reason = RouteChangeReason(rawValue: name) else { throw .badReply("RouteChanged: unknown reason \"\(name)\"") }
        return RouteChangeInfo(reason: reason, previousRoute: try route(arguments[1]), currentRoute: try route(arguments[2]))
    }

    static func portsChanged(_ arguments: [DBusValue]) throws(AudioSessionError) -> (PortChangeKind, PortDescription) {
        guard arguments.count == 2, case .string(let name) = arguments[0] else { throw .badReply("PortsChanged is not (s, Port)") }
        guard let kind = PortChangeKind(rawValue: name) else { throw .badReply("PortsChanged: unknown change \"\(name)\"") }
        return (kind, try port(arguments[1]))
    }

    static func interruption(_ arguments: [DBusValue]) throws(AudioSessionError) -> InterruptionInfo {
        guard arguments.count == 3, case .string(let typeName) = arguments[0], case .string(let reasonName) = arguments[1],
            case .bool(let shouldResume) = arguments[2]
        else { throw .badReply("Interruption is not (ssb)") }
        guard let type = InterruptionType(rawValue: typeName) else { throw .badReply("Interruption: unknown type \"\(typeName)\"") }
        var reason: InterruptionReason?
        if type == .began {
            guard let parsed = InterruptionReason(rawValue: reasonName.isEmpty ? "default" : reasonName) else {
                throw .badReply("Interruption: unknown reason \"\(reasonName)\"")
            }
            reason = parsed
        }
        return InterruptionInfo(type: type, reason: reason, options: type == .ended && shouldResume ? .shouldResume : [])
    }

    static func sessions(_ value: DBusValue) throws(AudioSessionError) -> [SessionSummary] {
        guard case .array(let items) = value.unwrapped else { throw .badReply("Sessions is not an array") }
        var result: [SessionSummary] = []
        for item in items {
            guard case .structure(let f) = item, f.count == 7, case .objectPath(let path) = f[0], case .string(let owner) = f[1],
                case .string(let app) = f[2], case .string(let category) = f[3], case .string(let mode) = f[4],
                case .array(let options) = f[5], case .bool(let active) = f[6]
            else { throw .badReply("a session is not (ossssasb): \(item.typeName)") }
            var names: [String] = []
            for option in options {
                guard case .string(let name) = option else { throw .badReply("session \(path): an option is not a string") }
                names.append(name)
            }
            result.append(SessionSummary(path: path, owner: owner, app: app, category: category, mode: mode, options: names, isActive: active))
        }
        return result
    }

    static func explanation(_ arguments: [DBusValue]) throws(AudioSessionError) -> RouteExplanation {
        guard arguments.count == 3, case .string(let output) = arguments[0], case .string(let input) = arguments[1],
            case .array(let items) = arguments[2]
        else { throw .badReply("Explain did not return (s, s, a(sas))") }
        var ports: [(uid: String, reasons: [String])] = []
        for item in items {
            guard case .structure(let f) = item, f.count == 2, case .string(let uid) = f[0], case .array(let list) = f[1] else {
                throw .badReply("Explain: an entry is not (sas)")
            }
            var reasons: [String] = []
            for reason in list {
                guard case .string(let text) = reason else { throw .badReply("Explain: port \(uid): a reason is not a string") }
                reasons.append(text)
            }
            ports.append((uid, reasons))
        }
        return RouteExplanation(outputRule: output, inputRule: input, ports: ports)
    }

    static func bool(_ value: DBusValue, _ what: String) throws(AudioSessionError) -> Bool {
        guard case .bool(let flag) = value.unwrapped else { throw .badReply("\(what) is not a boolean: \(value.typeName)") }
        return flag
    }

    static func string(_ value: DBusValue, _ what: String) throws(AudioSessionError) -> String {
        guard case .string(let text) = value.unwrapped else { throw .badReply("\(what) is not a string: \(value.typeName)") }
        return text
    }

    /// A failed call as the library's error. `bus` names the bus for "unreachable".
    static func error(_ error: DBusCallError, bus: String) -> AudioSessionError {
        switch error {
        case .remote(let name, let message):
            switch name {
            case "org.audioroute.Error.InvalidOption": return .invalidOption(message)
            case "org.audioroute.Error.InvalidOverride": return .invalidOverride(message)
            case "org.audioroute.Error.UnknownName": return .unknownName(message)
            case "org.audioroute.Error.UnknownPort": return .unknownPort(message)
            case "org.audioroute.Error.NotAnInput": return .notAnInput(message)
            case "org.audioroute.Error.NotOwner": return .notOwner(message)
            case "org.audioroute.Error.NotSaved": return .notSaved(message)
            case "org.freedesktop.DBus.Error.InvalidArgs": return .invalidArguments(message)
            case "org.freedesktop.DBus.Error.LimitsExceeded": return .limitsExceeded(message)
            case "org.freedesktop.DBus.Error.AccessDenied": return .accessDenied(message)
            case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
                "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Disconnected":
                return .daemonUnavailable(bus: bus, detail: message.isEmpty ? name : message)
            default: return .remote(name: name, message: message)
            }
        case .bus(let busError):
            return .daemonUnavailable(bus: bus, detail: "\(busError)")
        }
    }
}
