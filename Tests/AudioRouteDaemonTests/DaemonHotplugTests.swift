import AudioRouteCore
import Foundation
import Testing

/// audiorouted under umockdev on a private session bus: plugging a USB headset reaches
/// two `audioroute monitor --json` processes as RouteChanged(newDeviceAvailable), the
/// daemon's route names the headset's ALSA device, and unplugging it interrupts a playing
/// `audioroute session` with routeDisconnected. The daemon reads udev and the jacks' evdev
/// devices on its executor's loop (the CLI's `--direct` tests cover the watcher's own thread).
@Suite(.serialized) struct DaemonHotplugTests {
    static var daemonBinary: String { (UmockdevTestbed.binary as NSString).deletingLastPathComponent + "/audiorouted" }

    @Test func twoClientsSeeTheHeadsetArrive() throws {
        let bus = try PrivateBus()
        defer { bus.close() }
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        try bench.loadLaptop()
        let state = bench.root + "/scratch/daemon"
        let daemon = try bench.start(
            ["--state-dir", state + "/state", "--runtime-dir", state + "/run"] + UmockdevTestbed.noUCMHelper, binary: Self.daemonBinary,
            environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer { _ = try? daemon.stop(SIGTERM) }
        // Ready once the CLI can read its status.
        let address = ["--bus-address", bus.address]
        var ready = false
        for _ in 0..<200 where !ready {
            ready = try bench.run(["status", "--json"] + address).status == 0
            if !ready { usleep(50_000) }
        }
        #expect(ready, "stderr: \(daemon.stderr)")
        let monitors = try (0..<2).map { _ in try bench.start(["monitor", "--json"] + address) }
        for monitor in monitors { try monitor.waitForLines(1) }

        try bench.load("usb-headset-razer-blackshark-v3-pro")
        for monitor in monitors {
            let deadline = Date().addingTimeInterval(15)
            var change: JSON?
            while change == nil && Date() < deadline {
                change = monitor.objects.first { $0["event"]?.string == "routeChange" }
                if change == nil { usleep(10_000) }
            }
            #expect(change?["reason"]?.string == "newDeviceAvailable", "\(monitor.lines)")
            #expect(change?["previous"]?["outputs"]?.strings == [IDs.speaker])
            #expect(change?["current"]?["outputs"]?.strings == [IDs.usbOut])
        }
        let status = try JSON.parse(try bench.run(["status", "--json"] + address).stdout)
        guard case .array(let outputs)? = status["route"]?["outputs"] else {
            Issue.record("status: \(status)")
            return
        }
        #expect(outputs.first?["alsa"]?.string == "dmix:CARD=Pro,DEV=0")
        // ...and `pcm.audioroute_route` now opens it, for every ALSA program.
        let asound = (try? String(contentsOfFile: state + "/run/audioroute/asound.conf", encoding: .utf8)) ?? ""
        #expect(asound.contains("CARD=Pro"), "asound.conf: \(asound)")

        // A script playing through `audioroute session` is interrupted when the headset goes
        // (routeDisconnected: media players pause instead of blasting the room).
        let player = try bench.start(["session", "--category", "playback", "--activate"] + address + ["--", "/bin/sleep", "30"])
        var active = false
        for _ in 0..<200 where !active {
            let sessions = try JSON.parse(try bench.run(["status", "--json"] + address).stdout)["sessions"]
            if case .array(let list)? = sessions { active = list.contains { $0["active"] == .bool(true) } }
            if !active { usleep(50_000) }
        }
        #expect(active)
        try bench.send("unplug \(IDs.headsetUSB)")
        try player.waitForStderr("interruption began (routeDisconnected)")
        for monitor in monitors {
            let deadline = Date().addingTimeInterval(15)
            while !monitor.objects.contains(where: { $0["reason"]?.string == "oldDeviceUnavailable" }) && Date() < deadline { usleep(10_000) }
            let gone = monitor.objects.first { $0["event"]?.string == "routeChange" && $0["reason"]?.string == "oldDeviceUnavailable" }
            #expect(gone?["previous"]?["outputs"]?.strings == [IDs.usbOut], "\(monitor.lines)")
            #expect(gone?["current"]?["outputs"]?.strings == [IDs.speaker])
        }
        #expect(try player.stop(SIGTERM) == 128 + SIGTERM)

        // A jack switch: headphones plugged into the laptop's front jack, then pulled.
        try bench.send("jack /dev/input/event9 2 1")
        for monitor in monitors {
            let change = Self.routeChange(monitor) { $0["current"]?["outputs"]?.strings == [IDs.headphones] }
            #expect(change?["reason"]?.string == "newDeviceAvailable", "\(monitor.lines)")
            #expect(change?["previous"]?["outputs"]?.strings == [IDs.speaker])
        }
        try bench.send("jack /dev/input/event9 2 0")
        for monitor in monitors {
            let change = Self.routeChange(monitor) { $0["previous"]?["outputs"]?.strings == [IDs.headphones] }
            #expect(change?["reason"]?.string == "oldDeviceUnavailable", "\(monitor.lines)")
            #expect(change?["current"]?["outputs"]?.strings == [IDs.speaker])
        }
        for monitor in monitors { #expect(try monitor.stop(SIGTERM) == 0) }
    }

    /// The first route change `monitor` has printed that satisfies `matching`, waiting up to 15 s.
    static func routeChange(_ monitor: UmockdevTestbed.Running, _ matching: (JSON) -> Bool) -> JSON? {
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            if let found = monitor.objects.first(where: { $0["event"]?.string == "routeChange" && matching($0) }) { return found }
            usleep(10_000)
        }
        return nil
    }
}
