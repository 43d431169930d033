import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import AudioSession
import Glibc
import Testing

/// The client library's real sd-bus paths against a dbusmock stand-in for the daemon.
@Suite(.serialized) struct MockDaemonTests {
    @Test func callsPropertiesAndTypedErrors() async throws {
        try await withTemporaryDirectory { directory in
            let bus = try PrivateBus()
            defer { bus.close() }
            let mock = try await MockDaemon(address: bus.address, directory: directory)
            defer { mock.kill() }
            let session = AudioSession(bus: .address(bus.address), appName: "test")
            defer { Task { await session.close() } }

            #expect(try await session.currentRoute.outputs.map(\.uid) == ["spk"])
            #expect(try await session.availableInputs.map(\.uid) == ["mic"])
            #expect(try await session.silentMode == false)
            try await session.setCategory(.playAndRecord, mode: .voiceChat, options: [.defaultToSpeaker])
            #expect(await session.category == .playAndRecord)
            #expect(await session.objectPath == "/org/audioroute/AudioRoute1/session/1")
            // A refused change is a typed error, and the session keeps what it had.
            await #expect(throws: AudioSessionError.invalidOption("option defaultToSpeaker is not valid with category playback")) {
                try await session.setCategory(.playback, options: [.defaultToSpeaker])
            }
            #expect(await session.category == .playAndRecord)
            await #expect(throws: AudioSessionError.invalidArguments("priority 5000 is outside -1000...1000")) {
                try await session.setPriority(5000, forPort: "spk")
            }
            try await session.setActive(true)
            #expect(try await session.isActive)
            #expect(try await session.isOtherAudioPlaying)
            try await session.setPreferredInput(uid: "mic")
            #expect(try await session.preferredInput?.uid == "mic")

            let client = try await DBusClientConnection.connect(.address(bus.address))
            defer { client.close() }
            let calls = try await MockDaemon.calls(client, path: "/org/audioroute/AudioRoute1/session/1", method: "SetCategory")
            #expect(calls.first == [.string("playAndRecord"), .string("voiceChat"), .array([.string("defaultToSpeaker")])])
        }
    }

    @Test func routeChangesAndInterruptionsArriveAsNotifications() async throws {
        try await withTemporaryDirectory { directory in
            let setting = try await MockSetting(directory: directory)
            try await setting.session.setCategory(.playback)
            try await setting.call("EmitRouteChange")
            try await setting.call("Interrupt", path: "/org/audioroute/AudioRoute1/session/1", interface: "org.audioroute.Session1")
            #expect(await setting.notifications.wait { $0.count >= 2 })
            let all = setting.notifications.all
            await setting.close()
            guard case .routeChange(let change)? = all.first else {
                Issue.record("expected a route change first, got \(all)")
                return
            }
            #expect(change.reason == .newDeviceAvailable)
            #expect(change.previousRoute.outputs.map(\.uid) == ["spk"])
            #expect(change.currentRoute.outputs.map(\.uid) == ["usb/out"])
            #expect(change.currentRoute.inputs.first?.alsa == "plughw:CARD=Headset,DEV=0")
            #expect(all.dropFirst().first == .interruption(InterruptionInfo(type: .began, reason: .default, options: [])))
        }
    }

    /// Route changes are posted from the connection's thread, interruptions through the
    /// session actor: notifications still come in the order the daemon sent the signals.
    @Test func notificationsKeepTheSignalsOrderAcrossBothWays() async throws {
        try await withTemporaryDirectory { directory in
            let setting = try await MockSetting(directory: directory)
            try await setting.session.setCategory(.playback)
            for _ in 0..<20 { try await setting.call("EmitMixed") }
            #expect(await setting.notifications.wait { $0.count >= 60 })
            let kinds = setting.notifications.all.map { notification -> String in
                switch notification {
                case .routeChange(let info): return info.reason.rawValue
                case .interruption: return "interruption"
                default: return "\(notification)"
                }
            }
            await setting.close()
            let expected = Array(repeating: ["newDeviceAvailable", "interruption", "oldDeviceUnavailable"], count: 20).flatMap { $0 }
            #expect(kinds == expected)
        }
    }

    /// A daemon that broadcasts while the client re-opens its session: the app hears
    /// mediaServicesWereReset before that broadcast, as the signals came.
    @Test func aBroadcastDuringTheReopenComesAfterTheReset() async throws {
        try await withTemporaryDirectory { directory in
            let setting = try await MockSetting(directory: directory)
            try await setting.session.setCategory(.playback)
            setting.killDaemon()
            #expect(await setting.notifications.wait { $0.contains(.mediaServicesWereLost) })
            try await setting.restartDaemon(parameters: #"{"emit_on_open": true}"#)
            #expect(await setting.notifications.wait { $0.count >= 3 })
            let all = setting.notifications.all
            await setting.close()
            #expect(all.count == 3)
            #expect(all.first == .mediaServicesWereLost)
            #expect(all.dropFirst().first == .mediaServicesWereReset, "\(all)")
            if case .routeChange(let info)? = all.last {
                #expect(info.reason == .routeConfigurationChange)
            } else {
                Issue.record("expected the route change last: \(all)")
            }
        }
    }

    @Test func daemonLostThenResetReopensTheSessionWithItsCategory() async throws {
        try await withTemporaryDirectory { directory in
            let setting = try await MockSetting(directory: directory)
            let (session, notifications) = (setting.session, setting.notifications)
            try await session.setCategory(.playback, mode: .moviePlayback, options: [.mixWithOthers])
            try await session.setActive(true)

            setting.killDaemon()
            #expect(await notifications.wait { $0.contains(.mediaServicesWereLost) })
            #expect(await session.objectPath == nil)
            try await setting.restartDaemon()
            #expect(await notifications.wait { $0.contains(.mediaServicesWereReset) })
            #expect(notifications.all == [.mediaServicesWereLost, .mediaServicesWereReset])
            #expect(await session.objectPath == "/org/audioroute/AudioRoute1/session/1")

            // The new daemon got the category again, and no activation (the app reactivates, as on iOS).
            let client = try await DBusClientConnection.connect(.address(setting.bus.address))
            let path = "/org/audioroute/AudioRoute1/session/1"
            let categories = try await MockDaemon.calls(client, path: path, method: "SetCategory")
            #expect(categories == [[.string("playback"), .string("moviePlayback"), .array([.string("mixWithOthers")])]])
            #expect(try await MockDaemon.calls(client, path: path, method: "SetActive").isEmpty)
            client.close()
            await setting.close()
        }
    }

    @Test func concurrentFirstCallsOpenOneSession() async throws {
        try await withTemporaryDirectory { directory in
            let bus = try PrivateBus()
            defer { bus.close() }
            let mock = try await MockDaemon(address: bus.address, directory: directory)
            defer { mock.kill() }
            let session = AudioSession(bus: .address(bus.address), appName: "test")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<5 { group.addTask { try await session.setActive(true) } }
                try await group.waitForAll()
            }
            let client = try await DBusClientConnection.connect(.address(bus.address))
            defer { client.close() }
            #expect(try await MockDaemon.calls(client, path: "/org/audioroute/AudioRoute1", method: "OpenSession") == [[.string("test")]])
            await session.close()
        }
    }

    @Test func noDaemonIsDaemonUnavailable() async throws {
        let bus = try PrivateBus()
        defer { bus.close() }
        let session = AudioSession(bus: .address(bus.address), appName: "test")
        await #expect {
            try await session.setActive(true)
        } throws: { error in
            guard case AudioSessionError.daemonUnavailable(let name, _) = error else { return false }
            return name.contains(bus.address)
        }
        await session.close()
        // No bus at all is the same error, naming the address.
        let nowhere = AudioSession(bus: .address("unix:path=/nonexistent/bus"), appName: "test")
        await #expect(throws: AudioSessionError.self) { try await nowhere.connect() }
    }
}
