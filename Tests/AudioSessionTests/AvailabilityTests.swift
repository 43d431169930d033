// The ports with their availability as the client library reads them: `allPorts` from a
// daemon of Version 2, and from an older one, which has no AllPorts.
import AudioRouteCore
import AudioRouteSystem
import AudioRouteTestKit
import AudioSession
import Testing

@Suite(.serialized) struct ClientAvailabilityTests {
    @Test func allPortsGivesEveryKnownPortWithItsAvailability() async throws {
        try await withTemporaryDirectory { directory in
            let setting = try await MockSetting(directory: directory, parameters: #"{"version": 2}"#)
            do {
                let session = setting.session
                #expect(try await session.daemonVersion == 2)
                let all = try await session.allPorts
                #expect(all.map(\.uid) == ["spk", "mic", "hp", "hdmi"])
                #expect(all.map(\.availability) == [.available, .available, .unavailable, .unknown])
                #expect(all[2].portType == .headphones && all[2].alsa == "dmix:CARD=PCH,DEV=0" && all[2].priority == 100)
                // availablePorts is what a route may use, as before; the v1 struct does not say the availability.
                let available = try await session.availablePorts
                #expect(available.map(\.uid) == ["spk", "mic", "hdmi"])
                #expect(available.map(\.availability) == [nil, nil, nil])
            } catch {
                await setting.close()
                throw error
            }
            await setting.close()
        }
    }

    @Test func anOlderDaemonsAllPortsAreItsPortsWithoutAvailability() async throws {
        try await withTemporaryDirectory { directory in
            let setting = try await MockSetting(directory: directory)
            do {
                let session = setting.session
                #expect(try await session.daemonVersion == 1)
                let all = try await session.allPorts
                #expect(all.map(\.uid) == ["spk", "mic"])
                #expect(all.map(\.availability) == [nil, nil])
                #expect(all == (try await session.availablePorts))
            } catch {
                await setting.close()
                throw error
            }
            await setting.close()
        }
    }

    @Test func aVersion2DaemonWithoutAllPortsIsAnErrorNotAFallback() async throws {
        try await withTemporaryDirectory { directory in
            let setting = try await MockSetting(directory: directory, parameters: #"{"version": 2, "all_ports": false}"#)
            do {
                let session = setting.session
                do {
                    _ = try await session.allPorts
                    Issue.record("allPorts read a property the daemon does not have")
                } catch {
                    guard case AudioSessionError.remote(let name, let message) = error else { throw error }
                    #expect(name.hasSuffix(".UnknownProperty") && message.contains("AllPorts"), "\(name): \(message)")
                }
            } catch {
                await setting.close()
                throw error
            }
            await setting.close()
        }
    }

    @Test func aPlugIsAPortsChangedArrivalAndAnAllPortsChangedUpdate() async throws {
        try await withTemporaryDirectory { directory in
            let setting = try await MockSetting(directory: directory, parameters: #"{"version": 2}"#)
            do {
                try await setting.session.connect()
                try await setting.call("EmitPlug")
                #expect(await setting.notifications.wait { $0.count >= 2 })
                let plugged = PortDescription(
                    uid: "hp", portType: .headphones, portName: "Headphones", direction: .output, device: "jack", alsa: "dmix:CARD=PCH,DEV=0",
                    priority: 100, sequence: 4)
                var listed = plugged
                listed.availability = .available
                #expect(setting.notifications.all == [.portsChanged(.added, plugged), .allPortsChanged(.updated, listed)])
            } catch {
                await setting.close()
                throw error
            }
            await setting.close()
        }
    }
}
