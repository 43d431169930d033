// logind's screen lock and wake through the real audiorouted: dbusmock's logind on a private
// system bus, an app's session on the daemon's session bus.
import AudioRouteCore
import AudioRouteSystem
import Glibc
import AudioRouteTestKit
import AudioRouteWatchers
import AudioSession
import Testing

@Suite(.serialized) struct SystemEventsEndToEndTests {
    @Test func theUsersScreenLockSilencesAnAmbientAppAndTheUnlockEndsIt() async throws {
        let logind = try await LogindMock()
        defer { logind.close() }
        try await logind.startLogind()
        try await logind.addSession("c1")
        let daemon = try RunningDaemon(environment: ["DBUS_SYSTEM_BUS_ADDRESS": logind.address, "XDG_SESSION_ID": "c1"])

        let game = AudioSession(bus: .address(daemon.bus.address), appName: "game")
        let music = AudioSession(bus: .address(daemon.bus.address), appName: "music")
        let gameHeard = Collector(await game.notifications)
        let musicHeard = Collector(await music.notifications)
        try await game.setCategory(.ambient)
        try await game.setActive(true)
        try await music.setCategory(.playback, options: .mixWithOthers)
        try await music.setActive(true)

        let address = ["--bus-address", daemon.bus.address]
        #expect(try await game.screenLocked == false)
        let monitor = try ChildProcess(CLI.audioroute, ["monitor", "--json"] + address)
        defer { monitor.kill() }
        var lines = LineReader(fd: monitor.stdout)
        #expect(try lines.next(seconds: 10).map { try JSON.parse($0) }?["event"] == .string("ready"))

        try await logind.setLockedHint("c1", true)
        #expect(await gameHeard.wait { $0.contains(.silenced) }, "the lock did not silence the ambient app: \(gameHeard.all)")
        #expect(gameHeard.all.contains(.screenLockChanged(true)))
        #expect(try await game.screenLocked == true)
        let status = try CLI.run(["status"] + address)
        #expect(status.out.contains("Screen: locked"), "\(status.out)")
        #expect(try JSON.parse(try CLI.run(["status", "--json"] + address).out)["screenLocked"] == .bool(true))
        let lockLine = try lines.next(seconds: 10).map { try JSON.parse($0) }
        #expect(lockLine?["event"] == .string("screenLock") && lockLine?["locked"] == .bool(true), "\(String(describing: lockLine))")
        monitor.signal(SIGINT)
        #expect(monitor.wait(seconds: 10) == 0)

        try await logind.setLockedHint("c1", false)
        #expect(await gameHeard.wait { $0.contains(.unsilenced) }, "the unlock did not end the silencing: \(gameHeard.all)")
        #expect(gameHeard.all.contains(.screenLockChanged(false)))
        #expect(try CLI.run(["status"] + address).out.contains("Screen: unlocked"))
        // Playback is not silenced by the lock.
        #expect(!musicHeard.all.contains(.silenced))

        // A wake reaches the daemon; with no port moving it announces no route change.
        try await logind.emit(Logind.managerInterface, "PrepareForSleep", "b", [.bool(true)])
        try await logind.emit(Logind.managerInterface, "PrepareForSleep", "b", [.bool(false)])
        var said = ""
        for _ in 0..<500 where !said.contains("logind: woke from sleep") {
            said += daemon.child.availableStderr()
            try await Task.sleep(for: .milliseconds(20))
        }
        let woke = said.contains("logind: woke from sleep")
        #expect(woke, "the daemon did not hear the wake")
        #expect(!gameHeard.all.contains { if case .routeChange = $0 { return true } else { return false } })
        await game.close()
        await music.close()
    }

    /// Sleep and wake with a route that moves on wake: dbusmock's logind and BlueZ on one
    /// system bus; the headset is gone after the resume.
    @Test func aRouteThatMovesAfterAWakeIsAnnouncedAsWakeFromSleep() async throws {
        try await withBluezTestbed(startWatcher: false) { bluez in
            let headset = "00:11:22:33:44:55"
            _ = try bluez.addAdapter()
            _ = try bluez.addDevice(headset, alias: "Headset")
            let logind = try await LogindMock(address: bluez.bus.address)
            defer { logind.close() }
            try await logind.startLogind()
            let daemon = try RunningDaemon(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bluez.bus.address])
            let music = AudioSession(bus: .address(daemon.bus.address), appName: "music")
            let heard = Collector(await music.notifications)
            try await music.setCategory(.playback)
            try await music.setActive(true)

            try bluez.connectHeadset(headset, uuids: [BluezTestbed.a2dp])
            #expect(await heard.wait { $0.contains { Self.reason(of: $0) == .newDeviceAvailable } }, "no headset route: \(heard.all)")

            try await logind.emit(Logind.managerInterface, "PrepareForSleep", "b", [.bool(true)])
            try await logind.emit(Logind.managerInterface, "PrepareForSleep", "b", [.bool(false)])
            var said = ""
            for _ in 0..<500 where !said.contains("logind: woke from sleep") {
                said += daemon.child.availableStderr()
                try await Task.sleep(for: .milliseconds(20))
            }
            try #require(said.contains("logind: woke from sleep"), "the daemon did not hear the wake")
            try bluez.disconnect(headset)
            #expect(await heard.wait { $0.contains { Self.reason(of: $0) == .wakeFromSleep } }, "the move after the wake: \(heard.all)")
            #expect(!heard.all.contains { Self.reason(of: $0) == .oldDeviceUnavailable })
            await music.close()
        }
    }

    /// A port that goes while asleep: the headset disconnects between PrepareForSleep(true) and
    /// (false), as a device unplugged while asleep is seen while the kernel resumes, before
    /// logind's wake. The move is the wake's.
    @Test func aHeadsetGoneWhileAsleepIsAnnouncedAsWakeFromSleep() async throws {
        try await withBluezTestbed(startWatcher: false) { bluez in
            let headset = "00:11:22:33:44:55"
            _ = try bluez.addAdapter()
            _ = try bluez.addDevice(headset, alias: "Headset")
            let logind = try await LogindMock(address: bluez.bus.address)
            defer { logind.close() }
            try await logind.startLogind()
            let daemon = try RunningDaemon(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bluez.bus.address])
            let music = AudioSession(bus: .address(daemon.bus.address), appName: "music")
            let heard = Collector(await music.notifications)
            try await music.setCategory(.playback)
            try await music.setActive(true)

            try bluez.connectHeadset(headset, uuids: [BluezTestbed.a2dp])
            #expect(await heard.wait { $0.contains { Self.reason(of: $0) == .newDeviceAvailable } }, "no headset route: \(heard.all)")

            var said = ""
            func waitFor(_ text: String) async throws {
                for _ in 0..<500 where !said.contains(text) {
                    said += daemon.child.availableStderr()
                    try await Task.sleep(for: .milliseconds(20))
                }
                try #require(said.contains(text), "the daemon did not say \(text)")
            }
            try await logind.emit(Logind.managerInterface, "PrepareForSleep", "b", [.bool(true)])
            try await waitFor("logind: going to sleep")
            try bluez.disconnect(headset)
            #expect(await heard.wait { $0.contains { Self.reason(of: $0) == .wakeFromSleep } }, "the move while asleep: \(heard.all)")
            try await logind.emit(Logind.managerInterface, "PrepareForSleep", "b", [.bool(false)])
            try await waitFor("logind: woke from sleep")
            #expect(!heard.all.contains { Self.reason(of: $0) == .oldDeviceUnavailable })
            await music.close()
        }
    }

    static func reason(of notification: AudioSessionNotification) -> RouteChangeReason? {
        if case .routeChange(let info) = notification { return info.reason }
        return nil
    }
}
