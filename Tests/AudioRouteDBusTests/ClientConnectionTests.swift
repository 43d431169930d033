import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Glibc
import Testing

/// The client connection's own behaviour on a private bus: errors keep their D-Bus names,
/// a closed connection fails calls and ends its signal stream, a vanished bus is noticed.
@Suite struct ClientConnectionTests {
    @Test func remoteErrorsKeepTheirNameAndMessage() async throws {
        let bus = try PrivateBus()
        defer { bus.close() }
        let client = try await DBusClientConnection.connect(.address(bus.address))
        defer { client.close() }
        #expect(client.uniqueName.hasPrefix(":"))
        await #expect {
            _ = try await client.call(destination: "org.example.Nobody", path: "/", interface: "org.example.I", member: "M")
        } throws: { error in
            guard case DBusCallError.remote(let name, let message) = error else { return false }
            return name == "org.freedesktop.DBus.Error.ServiceUnknown" && message.contains("org.example.Nobody")
        }
        #expect(try await client.nameOwner("org.example.Nobody") == nil)
        // A value that does not fit the signature is refused before anything is sent.
        await #expect(throws: DBusCallError.self) {
            _ = try await client.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetNameOwner", signature: "s", arguments: [.int32(1)])
        }
    }

    @Test func aClosedConnectionFailsCallsAndEndsItsSignals() async throws {
        let bus = try PrivateBus()
        defer { bus.close() }
        let client = try await DBusClientConnection.connect(.address(bus.address))
        client.close()
        // What arrived before the close (the bus's NameAcquired) may still come; then the end.
        #expect(await Self.drained(client.signals))
        await #expect(throws: DBusCallError.self) { try await client.nameOwner("org.freedesktop.DBus") }
    }

    @Test func theBusGoingAwayEndsTheSignals() async throws {
        let bus = try PrivateBus()
        let client = try await DBusClientConnection.connect(.address(bus.address))
        defer { client.close() }
        bus.close()
        #expect(await Self.drained(client.signals))
    }

    /// True when the stream ends after at most a few leftover signals.
    static func drained(_ signals: AsyncStream<DBusSignal>) async -> Bool {
        var count = 0
        for await signal in signals {
            count += 1
            if count > 5 || signal.interface != "org.freedesktop.DBus" { return false }
        }
        return true
    }
}
