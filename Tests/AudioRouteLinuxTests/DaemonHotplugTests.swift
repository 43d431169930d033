import AudioRouteCore
import Foundation
import Testing

/// audiorouted under umockdev on a private session bus: plugging a USB headset reaches
/// two `audioroute monitor --json` processes as RouteChanged(newDeviceAvailable), and the
/// daemon's route names the headset's ALSA device.
@Suite(.serialized) struct DaemonHotplugTests {
    static var daemonBinary: String { (UmockdevBench.binary as NSString).deletingLastPathComponent + "/audiorouted" }

    @Test func twoClientsSeeTheHeadsetArrive() throws {
        let bus = try PrivateBus()
        defer { bus.close() }
        let bench = try UmockdevBench()
        defer { bench.close() }
        try bench.loadLaptop()
        let state = bench.root + "/scratch/daemon"
        let daemon = try bench.start(
            ["--state-dir", state + "/state", "--runtime-dir", state + "/run"], binary: Self.daemonBinary,
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
        #expect(outputs.first?["alsa"]?.string == "plughw:CARD=Pro,DEV=0")
        // ...and `pcm.audioroute` now opens it, for every ALSA program.
        let asound = (try? String(contentsOfFile: state + "/run/audioroute/asound.conf", encoding: .utf8)) ?? ""
        #expect(asound.contains("CARD=Pro"), "asound.conf: \(asound)")
        for monitor in monitors { #expect(try monitor.stop(SIGTERM) == 0) }
    }
}
