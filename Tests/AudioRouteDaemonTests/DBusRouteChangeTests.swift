// A USB headset plugged on a umockdev testbed: the daemon's real udev watcher
// sees it, and two client processes receive RouteChanged(newDeviceAvailable)
// with the previous and the current route, and PortsChanged(added).
import AudioRouteIPC
import AudioRouteDaemon
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite(.serialized) struct DBusRouteChangeTests {
    /// The umockdev emitter (share/demo/emitter.py), which owns the testbed, for
    /// `body(emitter, testbed root)`; it and the daemon run under the umockdev preload.
    /// `quit` at the end lets it remove its testbed.
    static func withEmitter(_ body: (ScriptedProcess, String) throws -> Void) throws {
        let emitter = try ScriptedProcess(
            "/usr/bin/umockdev-wrapper", ["/usr/bin/python3", fixturesDirectory + "/../../share/demo/emitter.py"], environment: ["PYTHONUNBUFFERED": "1"])
        defer {
            emitter.send("quit")
            emitter.finish(seconds: 10)
        }
        guard let ready = emitter.take(seconds: 30, { $0.hasPrefix("READY ") }) else {
            Issue.record("the umockdev emitter did not start")
            return
        }
        try body(emitter, String(ready.dropFirst(6)))
    }

    @Test func twoClientsHearOfAPluggedHeadset() throws {
        try Self.withEmitter { emitter, root in
            let daemon = try RunningDaemon(wrapper: "/usr/bin/umockdev-wrapper", environment: ["UMOCKDEV_DIR": root])
            let first = try APIClient(address: daemon.bus.address)
            let second = try APIClient(address: daemon.bus.address)
            #expect(first.property(DBusAPI.managerPath, DBusAPI.managerInterface, "Route") == "{\"reply\": [[], []]}")

            emitter.send("load \(fixturesDirectory)/udev/usb-headset-razer-blackshark-v3-pro.umockdev")
            #expect(emitter.take(seconds: 30) { $0.hasPrefix("OK") || $0.hasPrefix("ERR") }?.hasPrefix("OK") == true)

            for client in [first, second] {
                let change = client.signal("RouteChanged", seconds: 15)
                #expect(change?.hasPrefix("{\"signal\": \"RouteChanged\", \"path\": \"/org/audioroute/AudioRoute1\", \"args\": [\"newDeviceAvailable\", [[], []], [[[") == true, "\(change ?? "none")")
                #expect(change?.contains("\"usbAudio\", \"output\"") == true || change?.contains("\"usbAudio\", \"duplex\"") == true, "\(change ?? "none")")
                #expect(client.signal("PortsChanged", args: nil, seconds: 5)?.contains("\"args\": [\"added\", [") == true)
            }
            // The property agrees with the signal.
            let route = first.property(DBusAPI.managerPath, DBusAPI.managerInterface, "Route")
            #expect(route.hasPrefix("{\"reply\": [[[") && route.contains("usbAudio"), "\(route)")

            // A user's priority: out of range is refused and changes nothing; in range is applied and announced.
            let ports = first.property(DBusAPI.managerPath, DBusAPI.managerInterface, "Ports")
            let uid = try #require(ports.split(separator: "\"").dropFirst(3).first.map(String.init), "\(ports)")
            let refused = first.manager("SetPortPriority", "si", "[\(json(uid)), 1001]")
            #expect(refused.hasPrefix("{\"error\": \"org.freedesktop.DBus.Error.InvalidArgs\""), "\(refused)")
            #expect(first.property(DBusAPI.managerPath, DBusAPI.managerInterface, "Ports") == ports)
            #expect(first.manager("SetPortPriority", "si", "[\(json(uid)), 77]") == "{\"reply\": null}")
            let updated = second.process.take(seconds: 5) { $0.hasPrefix("{\"signal\": \"PortsChanged\"") && $0.contains("\"updated\"") }
            #expect(updated?.contains("\"args\": [\"updated\", [\(json(uid)), ") == true && updated?.contains(", 77, ") == true, "\(updated ?? "none")")
            #expect(first.property(DBusAPI.managerPath, DBusAPI.managerInterface, "Ports").contains(", 77, "))
            // Explain names the rule that chose the headset, per port.
            let explanation = first.manager("Explain")
            #expect(explanation.contains("[\(json(uid)), [\"output: chosen by rule "), "\(explanation)")
        }
    }

    /// A priority the daemon cannot write to disk: applied and announced all the same,
    /// with org.audioroute.Error.NotSaved to say so; written by the next save once the
    /// disk lets it.
    @Test func aSettingThatCannotBeSavedIsAppliedAndSaysNotSaved() throws {
        try Self.withEmitter { emitter, root in
            // A file where the state directory's parent should be: every save fails (even for root).
            let scratch = try makeTemporaryDirectory()
            defer { removeTree(scratch) }
            try writeText(scratch + "/blocked", "")
            let state = scratch + "/blocked/audioroute"
            let daemon = try RunningDaemon(arguments: ["--state-dir", state], wrapper: "/usr/bin/umockdev-wrapper", environment: ["UMOCKDEV_DIR": root])
            let client = try APIClient(address: daemon.bus.address)
            emitter.send("load \(fixturesDirectory)/udev/usb-headset-razer-blackshark-v3-pro.umockdev")
            #expect(emitter.take(seconds: 30) { $0.hasPrefix("OK") || $0.hasPrefix("ERR") }?.hasPrefix("OK") == true)
            #expect(client.signal("PortsChanged", args: nil, seconds: 15) != nil)
            let ports = client.property(DBusAPI.managerPath, DBusAPI.managerInterface, "Ports")
            let uid = try #require(ports.split(separator: "\"").dropFirst(3).first.map(String.init), "\(ports)")

            let refused = client.manager("SetPortPriority", "si", "[\(json(uid)), 77]")
            #expect(refused.hasPrefix("{\"error\": \"org.audioroute.Error.NotSaved\"") && refused.contains("applied but not saved"), "\(refused)")
            #expect(client.property(DBusAPI.managerPath, DBusAPI.managerInterface, "Ports").contains(", 77, "), "applied all the same")

            // The disk is back: the next setting saves everything pending.
            #expect(unlink(scratch + "/blocked") == 0)
            #expect(client.manager("SetPortPriority", "si", "[\(json(uid)), 78]") == "{\"reply\": null}")
            let saved = try readText(state + "/state.json")
            #expect(saved.contains("\"priorities\": {\(json(uid)): 78}"), "\(saved)")
            #expect(daemon.child.wait(seconds: 0) == nil, "the daemon is still running")
        }
    }
}
