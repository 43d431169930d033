import AudioRouteCore
import Foundation
import Testing

/// udev-rules/70-audioroute.rules run by the real udevadm against umockdev
/// devices (in a private mount namespace, see `UmockdevBench.udevadmTest`), and
/// the watcher honouring what they set.
@Suite(.serialized) struct UdevRulesTests {
    static let loopback = """
        P: /devices/platform/snd_aloop.0
        E: DRIVER=snd_aloop
        E: MODALIAS=platform:snd_aloop
        E: SUBSYSTEM=platform

        P: /devices/platform/snd_aloop.0/sound/card9
        E: SUBSYSTEM=sound
        E: SOUND_INITIALIZED=1
        E: ID_PATH=platform-snd_aloop.0
        A: id=Loopback
        A: number=9

        P: /devices/platform/snd_aloop.0/sound/card9/pcmC9D0p
        E: SUBSYSTEM=sound

        P: /devices/platform/snd_aloop.0/sound/card9/pcmC9D0c
        E: SUBSYSTEM=sound

        P: /devices/platform/snd_aloop.0/sound/card9/controlC9
        E: SUBSYSTEM=sound
        """

    func script(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: UmockdevBench.packageRoot + "/scripts/install-udev-rules")
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func rulesSetDefaultsAndTheWatcherHonoursThem() throws {
        let bench = try UmockdevBench()
        defer { bench.close() }
        for fixture in ["usb-webcam-logitech-c250", "usb-headset-razer-blackshark-v3-pro", "gpu-hdmi-nvidia-gf114", "soc-pinephone-simple-card"] {
            try bench.load(fixture)
        }
        try bench.loadText(Self.loopback)

        let cards = [
            "webcam": "/devices/pci0000:00/0000:00:1d.7/usb1/1-3/1-3:1.2/sound/card4",
            "headset": IDs.headsetCard,
            "gpu": "/devices/pci0000:00/0000:00:01.0/0000:01:00.1/sound/card1",
            "phone": "/devices/platform/sound/sound/card5",
            "loopback": "/devices/platform/snd_aloop.0/sound/card9",
        ]
        var set: [String: [String: String]] = [:]
        for (name, syspath) in cards {
            set[name] = try bench.udevadmTest(syspath).filter { $0.key.hasPrefix("AUDIOROUTE_") }
        }
        #expect(set["webcam"] == ["AUDIOROUTE_PRIORITY": "10"])
        #expect(set["headset"] == [:])
        #expect(set["gpu"] == ["AUDIOROUTE_PRIORITY": "50"])
        #expect(set["phone"] == ["AUDIOROUTE_RECEIVER": "1"])
        #expect(set["loopback"]?["AUDIOROUTE_IGNORE"] == "1")

        // What udevd would store in its database, the watcher reads.
        let before = try bench.run(["ports", "--direct", "--json"])
        // Virtual cards are ignored even before the rules say so.
        #expect(!before.stdout.contains("platform-snd_aloop.0"))
        if case .array(let ports) = try JSON.parse(before.stdout) {
            // Without the rules' property the webcam has the usbAudio default.
            #expect(ports.first { $0["uid"]?.string == "usb-046d_0804_8C1CA450-02/input" }?["priority"] == .integer(100))
        } else {
            Issue.record("not an array: \(before.stdout)")
        }
        for (name, properties) in set {
            for (key, value) in properties { try bench.send("setprop \(cards[name]!) \(key) \(value)") }
        }
        let after = try bench.run(["ports", "--direct", "--json"])
        guard case .array(let ports) = try JSON.parse(after.stdout) else {
            Issue.record("not an array")
            return
        }
        let priorities = Dictionary(uniqueKeysWithValues: ports.map { ($0["uid"]?.string ?? "", $0["priority"]) })
        #expect(priorities["usb-046d_0804_8C1CA450-02/input"] == .integer(10))
        #expect(priorities[IDs.usbIn] == .integer(100))
        #expect(priorities["platform-sound/receiver"] != nil)
        #expect(!ports.contains { ($0["uid"]?.string ?? "").hasPrefix("platform-snd_aloop.0") })
    }

    @Test func installScriptInstallsAndRemoves() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try script(["--dest", directory.path]) == 0)
        let installed = directory.appendingPathComponent("70-audioroute.rules").path
        #expect(FileManager.default.contents(atPath: installed) == FileManager.default.contents(atPath: UmockdevBench.packageRoot + "/udev-rules/70-audioroute.rules"))
        #expect(try script(["--dest", directory.path, "--uninstall"]) == 0)
        #expect(!FileManager.default.fileExists(atPath: installed))
        #expect(try script(["--bogus"]) == 2)
    }
}
