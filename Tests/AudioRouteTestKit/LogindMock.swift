// python-dbusmock's logind template on a private bus (a stand-in for the system bus), and a
// client that drives it: sessions, their LockedHint, PrepareForSleep.
import AudioRouteDBus
import AudioRouteWatchers
import Glibc

/// dbusmock's logind on a private bus, and a client to drive it.
public final class LogindMock: @unchecked Sendable {
    /// The bus logind is served on (the system bus of whatever is tested).
    public let address: String
    /// The bus, when this mock made it.
    private let ownBus: PrivateBus?
    public private(set) var mock: ChildProcess?
    public let client: DBusClientConnection

    /// A private bus (nobody on it yet) and a client of it.
    public init() async throws {
        let bus = try PrivateBus()
        ownBus = bus
        address = bus.address
        client = try await DBusClientConnection.connect(.address(bus.address))
    }

    /// On a bus someone else runs (the BlueZ bench's), at `address`.
    public init(address: String) async throws {
        ownBus = nil
        self.address = address
        client = try await DBusClientConnection.connect(.address(address))
    }

    /// Stops the bus this mock made: its clients lose it.
    public func closeBus() { ownBus?.close() }

    /// Starts the mock and waits until it owns org.freedesktop.login1.
    public func startLogind() async throws {
        let process = try ChildProcess(
            "/usr/bin/python3", ["-m", "dbusmock", "--system", "--template", "logind"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": address])
        mock = process
        for _ in 0..<500 {
            if try await client.nameOwner(Logind.service) != nil { return }
            if process.wait(seconds: 0) != nil { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("dbusmock did not take \(Logind.service): \(process.availableStderr())")
    }

    /// Kills the mock: the name leaves the bus.
    public func stopLogind() {
        mock?.signal(SIGKILL)
        _ = mock?.wait(seconds: 5)
        mock = nil
    }

    /// Stops the mock, the client and the bus.
    public func close() {
        stopLogind()
        client.close()
        ownBus?.close()
    }

    /// dbusmock's AddSession: session `id` of uid 1000 on seat0, its LockedHint false.
    public func addSession(_ id: String) async throws {
        _ = try await client.call(
            destination: Logind.service, path: Logind.managerPath, interface: "org.freedesktop.DBus.Mock", member: "AddSession",
            signature: "ssusb", arguments: [.string(id), .string("seat0"), .uint32(1000), .string("user"), .bool(true)])
    }

    /// The session's SetLockedHint, which the template answers with PropertiesChanged.
    public func setLockedHint(_ id: String, _ locked: Bool) async throws {
        _ = try await client.call(
            destination: Logind.service, path: Logind.sessionPathPrefix + "/" + id, interface: Logind.sessionInterface,
            member: "SetLockedHint", signature: "b", arguments: [.bool(locked)])
    }

    /// dbusmock's EmitSignal on `path`.
    public func emit(path: String = Logind.managerPath, _ interface: String, _ member: String, _ signature: String, _ args: [DBusValue]) async throws {
        _ = try await client.call(
            destination: Logind.service, path: path, interface: "org.freedesktop.DBus.Mock", member: "EmitSignal",
            signature: "sssav", arguments: [.string(interface), .string(member), .string(signature), .array(args.map { .variant($0) })])
    }
}
