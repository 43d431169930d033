import AudioRouteCore
import Foundation
import Testing

/// udev-rules/70-audioroute.rules run by the real udevadm against umockdev
/// devices (in a private mount namespace, see `UmockdevTestbed.udevadmTest`), and
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
        process.executableURL = URL(fileURLWithPath: UmockdevTestbed.packageRoot + "/scripts/install-udev-rules")
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func rulesSetDefaultsAndTheWatcherHonoursThem() throws {
        let bench = try UmockdevTestbed()
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
        #expect(set["gpu"] == [:])
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

    /// A keyboard: an input device that is not a sound card's.
    static let keyboard = """
        P: /devices/platform/i8042/serio0/input/input3
        E: SUBSYSTEM=input
        E: NAME="AT Translated Set 2 keyboard"
        E: EV=120013
        E: KEY=402000000 3803078f800d001 feffffdfffefffff fffffffffffffffe
        E: ID_INPUT=1
        E: ID_INPUT_KEY=1
        E: ID_INPUT_KEYBOARD=1

        P: /devices/platform/i8042/serio0/input/input3/event2
        N: input/event2
        E: SUBSYSTEM=input
        E: DEVNAME=/dev/input/event2
        E: ID_INPUT=1
        E: ID_INPUT_KEY=1
        E: ID_INPUT_KEYBOARD=1
        """

    /// The jack watcher can open a sound card's jack switches: group audio (the system
    /// instance) and uaccess (the seat's user instance). A keyboard stays as it was.
    @Test func jackSwitchesBecomeReadableByGroupAudioAndTheSeatUser() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        try bench.load("hda-intel-laptop-with-jacks")
        try bench.loadText(Self.keyboard)
        let audio = getgrnam("audio").map { Int($0.pointee.gr_gid) }
        for event in ["input11/event8", "input12/event9", "input13/event10"] {
            let (properties, log) = try bench.udevadmTestOutput("/devices/pci0000:00/0000:00:1b.0/sound/card0/" + event)
            #expect(properties["TAGS"]?.contains(":uaccess:") == true, "\(event): \(properties)")
            let group = log.split(separator: "\n").last { $0.contains(" GROUP ") }
            #expect(group?.contains("70-audioroute.rules") == true, "\(event): \(log)")
            if let audio { #expect(group?.hasSuffix("GROUP \(audio)") == true, "\(event): \(String(describing: group))") }
            #expect(log.contains("70-audioroute.rules:") && log.contains("MODE 0660"), "\(event)")
        }
        let (keyboard, log) = try bench.udevadmTestOutput("/devices/platform/i8042/serio0/input/input3/event2")
        #expect(keyboard["TAGS"]?.contains(":uaccess:") != true, "\(keyboard)")
        #expect(!log.split(separator: "\n").contains { $0.contains("70-audioroute.rules") && ($0.contains(" GROUP ") || $0.contains(" MODE ")) }, "\(log)")
    }

    @Test func installScriptInstallsAndRemoves() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try script(["--dest", directory.path]) == 0)
        let installed = directory.appendingPathComponent("70-audioroute.rules").path
        #expect(FileManager.default.contents(atPath: installed) == FileManager.default.contents(atPath: UmockdevTestbed.packageRoot + "/udev-rules/70-audioroute.rules"))
        #expect(try script(["--dest", directory.path, "--uninstall"]) == 0)
        #expect(!FileManager.default.fileExists(atPath: installed))
        #expect(try script(["--bogus"]) == 64)
    }
}
