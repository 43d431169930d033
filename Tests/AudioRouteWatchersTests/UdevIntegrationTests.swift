import AudioRouteCore
import Foundation
import Testing

// The real libudev and evdev paths under umockdev, through the built binary:
// `audioroute ports --direct --json` and `audioroute monitor --direct --json`.
// Serialized: each test owns a testbed and processes, cleaned up by the bench.

@Suite(.serialized) struct UdevIntegrationTests {
    @Test func portsListsEveryFixtureAsJSON() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        try bench.loadLaptop(headphoneIn: true)
        for fixture in ["usb-headset-razer-blackshark-v3-pro", "usb-dac-actions-usb-audio", "usb-webcam-logitech-c250", "gpu-hdmi-nvidia-gf114", "soc-pinephone-simple-card"] {
            try bench.load(fixture)
        }
        let result = try bench.run(["ports", "--direct", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try JSON.parse(result.stdout)
        guard case .array(let ports) = json else {
            Issue.record("not an array: \(result.stdout)")
            return
        }
        let rows = Set(ports.map {
            "\($0["uid"]?.string ?? "?") \($0["type"]?.string ?? "?") \($0["direction"]?.string ?? "?") \($0["availability"]?.string ?? "?")"
        })
        #expect(rows == [
            "\(IDs.speaker) builtInSpeaker output available", "\(IDs.mic) builtInMic input available",
            "\(IDs.headphones) headphones output available",
            // The laptop's line out and front mic jacks, readable and empty.
            "pci-0000:00:1b.0/line-out lineOut output unavailable", "\(IDs.headsetMic) headsetMic input unavailable",
            "\(IDs.usbOut) usbAudio output available", "\(IDs.usbIn) usbAudio input available",
            "usb-ACTIONS_USB_AUDIO_4512482ADF0FEEEE-00/output usbAudio output available",
            "usb-046d_0804_8C1CA450-02/input usbAudio input available",
            // The GPU's jack devices answer no ioctl here (a static dump): state unknown, offered.
            "pci-0000:01:00.1/hdmi-3 HDMI output unknown", "pci-0000:01:00.1/hdmi-7 HDMI output unknown",
            // The PinePhone without its UCM profile (no helper under umockdev) or the udev rule:
            // the board rule's line out and line in (soc-pinephone-simple-card.expect).
            "platform-sound/line-out lineOut output available", "platform-sound/line-in lineIn input available",
        ])
        for port in ports {
            guard case .object(let members) = port else { continue }
            // Every known port with its availability (unavailable ones included).
            #expect(members.map(\.key) == ["uid", "type", "direction", "device", "name", "priority", "sequence", "alsa", "availability"])
        }
        let byUID = Dictionary(uniqueKeysWithValues: ports.map { ($0["uid"]?.string ?? "", $0) })
        #expect(byUID[IDs.usbOut]?["alsa"]?.string == "dmix:CARD=Pro,DEV=0")
        #expect(byUID[IDs.usbIn]?["alsa"]?.string == "dsnoop:CARD=Pro,DEV=0")
        #expect(byUID[IDs.usbOut]?["device"] == byUID[IDs.usbIn]?["device"])
        #expect(byUID["pci-0000:01:00.1/hdmi-7"]?["alsa"]?.string == "dmix:CARD=NVidia,DEV=7")
        #expect(byUID[IDs.headphones]?["device"]?.string == "pci-0000:00:1b.0/jack")
        // A card's own port is there while the card is.
        #expect(byUID[IDs.speaker]?["availability"]?.string == "available")
    }

    @Test func hotplugForAPlaybackSession() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        try bench.loadLaptop()
        let monitor = try bench.monitor(category: "playback", initialLines: 3)
        #expect(events(monitor.objects, from: 2).first == MonitorEvent("routeChange", "newDeviceAvailable", outputs: [IDs.speaker]))

        try bench.load("usb-headset-razer-blackshark-v3-pro")
        var objects = try monitor.waitForLines(6)
        #expect(events(objects, from: 3) == [
            MonitorEvent("portAdded", "newDeviceAvailable", uid: IDs.usbOut, outputs: [IDs.usbOut]),
            MonitorEvent("portAdded", "newDeviceAvailable", uid: IDs.usbIn, outputs: [IDs.usbOut]),
            MonitorEvent("routeChange", "newDeviceAvailable", outputs: [IDs.usbOut]),
        ])

        try bench.send("unplug \(IDs.headsetUSB)")
        objects = try monitor.waitForLines(10)
        #expect(events(objects, from: 6) == [
            MonitorEvent("portRemoved", "oldDeviceUnavailable", uid: IDs.usbOut, outputs: [IDs.speaker]),
            MonitorEvent("portRemoved", "oldDeviceUnavailable", uid: IDs.usbIn, outputs: [IDs.speaker]),
            MonitorEvent("routeChange", "oldDeviceUnavailable", outputs: [IDs.speaker]),
            MonitorEvent("session", "routeDisconnected", outputs: [IDs.speaker]),
        ])
        #expect(objects[9]["type"]?.string == "interruptionBegan")
        #expect(objects[8]["previous"]?["outputs"]?.strings == [IDs.usbOut])

        // Re-plugged, the headset is the same port.
        try bench.load("usb-headset-razer-blackshark-v3-pro")
        objects = try monitor.waitForLines(13)
        #expect(events(objects, from: 12) == [MonitorEvent("routeChange", "newDeviceAvailable", outputs: [IDs.usbOut])])
        #expect(try monitor.stop(SIGINT) == 0)
    }

    @Test func hotplugForAPlayAndRecordSession() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        try bench.loadLaptop()
        let monitor = try bench.monitor(category: "playAndRecord", initialLines: 3)
        #expect(events(monitor.objects, from: 2) == [MonitorEvent("routeChange", "newDeviceAvailable", outputs: [IDs.speaker], inputs: [IDs.mic])])

        try bench.load("usb-headset-razer-blackshark-v3-pro")
        var objects = try monitor.waitForLines(6)
        #expect(events(objects, from: 5) == [MonitorEvent("routeChange", "newDeviceAvailable", outputs: [IDs.usbOut], inputs: [IDs.usbIn])])

        try bench.send("unplug \(IDs.headsetUSB)")
        objects = try monitor.waitForLines(9)
        #expect(events(objects, from: 8) == [MonitorEvent("routeChange", "oldDeviceUnavailable", outputs: [IDs.speaker], inputs: [IDs.mic])])
        // playAndRecord is not interrupted by the disconnect: nothing more comes.
        usleep(200_000)
        #expect(monitor.lines.count == 9)
        #expect(try monitor.stop(SIGTERM) == 0)
    }

    @Test func jackPlugAndUnplugThroughTheEvdevSwitches() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        try bench.loadLaptop()
        let monitor = try bench.monitor(category: "playAndRecord", initialLines: 3)

        try bench.send("jack /dev/input/event9 2 1")
        var objects = try monitor.waitForLines(5)
        #expect(events(objects, from: 3) == [
            MonitorEvent("portAdded", "newDeviceAvailable", uid: IDs.headphones, outputs: [IDs.headphones], inputs: [IDs.mic]),
            MonitorEvent("routeChange", "newDeviceAvailable", outputs: [IDs.headphones], inputs: [IDs.mic]),
        ])
        try bench.send("jack /dev/input/event10 4 1")
        objects = try monitor.waitForLines(7)
        #expect(events(objects, from: 5) == [
            MonitorEvent("portAdded", "newDeviceAvailable", uid: IDs.headsetMic, outputs: [IDs.headphones], inputs: [IDs.headsetMic]),
            // The input moves from the built-in mic to the headset: a device the route
            // did not have (docs/decisions.md, profile switches).
            MonitorEvent("routeChange", "newDeviceAvailable", outputs: [IDs.headphones], inputs: [IDs.headsetMic]),
        ])
        #expect(objects[5]["port"]?["device"] == objects[3]["port"]?["device"])

        try bench.send("jack /dev/input/event9 2 0")
        objects = try monitor.waitForLines(9)
        #expect(MonitorEvent(objects[7]).event == "portRemoved")
        #expect(MonitorEvent(objects[7]).uid == IDs.headphones)
        #expect(MonitorEvent(objects[8]).reason == "oldDeviceUnavailable")
        #expect(MonitorEvent(objects[8]).outputs == [IDs.speaker])

        // A repeated state is no event.
        try bench.send("jack /dev/input/event10 4 1")
        usleep(200_000)
        #expect(monitor.lines.count == 9)
        #expect(try monitor.stop() == 0)
    }

    @Test func badUdevDataIsLoggedOnceAndNeverCorruptsThePortSet() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        try bench.loadLaptop()
        let monitor = try bench.monitor(category: "playback", initialLines: 3, logLevel: "info")

        // A card without PCM children.
        try bench.loadText("""
            P: /devices/virtual/sound/card7
            E: SUBSYSTEM=sound
            E: SOUND_INITIALIZED=1
            A: id=Empty
            A: number=7

            P: /devices/virtual/sound/card7/controlC7
            E: SUBSYSTEM=sound
            E: DEVNAME=/dev/snd/controlC7
            """)
        try monitor.waitForStderr("no PCM devices")

        try bench.load("usb-headset-razer-blackshark-v3-pro")
        try monitor.waitForLines(6)

        // A duplicate add and change events with nothing new.
        try bench.send("uevent add \(IDs.headsetCard)")
        try bench.send("uevent change \(IDs.headsetCard)")
        try bench.send("uevent change \(IDs.headsetCard)")

        // A remove for a device the watcher no longer knows.
        try bench.send("uevent remove /devices/virtual/sound/card7")
        try bench.send("uevent remove /devices/virtual/sound/card7")
        try monitor.waitForStderr("unknown card")

        // An input device below the card that is not a switch.
        try bench.send("jackdev /dev/input/event12 0 0 HDA_Digital_PCBeep noswitch")
        try bench.loadText("""
            P: /devices/pci0000:00/0000:00:1b.0/sound/card0/input14
            E: SUBSYSTEM=input
            E: NAME="HDA Digital PCBeep"
            A: name=HDA Digital PCBeep

            P: /devices/pci0000:00/0000:00:1b.0/sound/card0/input14/event12
            N: input/event12
            E: SUBSYSTEM=input
            E: DEVNAME=/dev/input/event12
            """)
        try monitor.waitForStderr("not a jack switch")

        // Garbage that is not UTF-8 in a property.
        try bench.appendUevent(IDs.headsetCard, Array("ID_MODEL_FROM_DATABASE=".utf8) + [0xFF, 0xFE, 0x0A])
        try bench.send("uevent change \(IDs.headsetCard)")
        try bench.send("uevent change \(IDs.headsetCard)")
        try monitor.waitForStderr("not valid UTF-8")

        // A garbage value in a property the watcher honours: ignored, the port stays as it was.
        try bench.send("setprop \(IDs.headsetCard) AUDIOROUTE_PRIORITY high")
        try bench.send("uevent change \(IDs.headsetCard)")
        try bench.send("uevent change \(IDs.headsetCard)")
        try monitor.waitForStderr("not an integer")

        // A jack device whose card is gone.
        try bench.send("uevent remove \(IDs.laptopCard)/input12/event9")
        try bench.send("uevent remove \(IDs.laptopCard)")
        try monitor.waitForLines(8)
        try bench.send("uevent add \(IDs.laptopCard)/input12/event9")
        try bench.send("jack /dev/input/event9 2 1")
        try monitor.waitForStderr("which is gone")

        usleep(300_000)
        #expect(try monitor.stop() == 0)
        let log = monitor.stderr
        for text in ["no PCM devices", "unknown card", "not a jack switch", "not valid UTF-8", "not an integer", "which is gone"] {
            #expect(log.components(separatedBy: text).count - 1 == 1, "\(text) logged \(log.components(separatedBy: text).count - 1) times:\n\(log)")
        }
        // The port set is exactly what the surviving devices imply: the headset.
        var present: Set<String> = []
        for object in monitor.objects {
            let event = MonitorEvent(object)
            if event.event == "portAdded", let uid = event.uid { present.insert(uid) }
            if event.event == "portRemoved", let uid = event.uid { present.remove(uid) }
        }
        #expect(present == [IDs.usbOut, IDs.usbIn])
        #expect(!monitor.stderr.contains("event refused"))
        #expect(!monitor.objects.contains { $0["event"]?.string == "portUpdated" })
    }

    @Test func commandsWithoutDirectAndNoDaemonSayToUseIt() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        for command in ["ports", "monitor"] {
            // No daemon on this bus: the message names it and suggests --direct.
            let result = try bench.run([command, "--bus-address", "unix:path=/nonexistent/bus"])
            #expect(result.status == 69, "EX_UNAVAILABLE: the daemon is not there")
            #expect(result.stderr.contains("org.audioroute.AudioRoute1"))
            #expect(result.stderr.contains("unix:path=/nonexistent/bus"))
            #expect(result.stderr.contains("audioroute \(command) --direct"))
        }
    }

    /// `ports --direct --explain`: each card's decisions with the udev signal behind each.
    @Test func explainShowsTheSignalBehindEveryPortAndNeedsDirect() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        try bench.load("laptop-asus-f550ze-amd-hd-audio-generic")
        let result = try bench.run(["ports", "--direct", "--explain"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "card0 id=Generic /sys/devices/pci0000:00/0000:00:01.1/sound/card0")
        #expect(lines.contains("  jack \"HD-Audio Generic HDMI/DP,pcm=3\" switches=[lineout,videoout] state=unknown"))
        #expect(lines.contains("  card: no builtInSpeaker: every playback PCM is HDMI/DP  <- jack NAME \"HD-Audio Generic HDMI/DP,pcm=3\""))
        #expect(lines.contains { $0.hasPrefix("  pci-0000:00:01.1/hdmi-3: HDMI output on PCM 3, availability unknown  <- jack NAME") })
        #expect(lines.contains("  pci-0000:00:14.2/speaker: builtInSpeaker output on PCM 0  <- first analog playback PCM 0"))
        #expect(result.stderr.contains("its state is unknown") == false, "faults are logged at notice, below the default level")
        let refused = try bench.run(["ports", "--explain"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("--direct"))
    }

    /// Jack devices without a device node (udev has not made one, or a dump lacks it): their
    /// udev NAMEs still say which PCMs are HDMI (on SOF nothing else does), offered with
    /// availability unknown.
    @Test func jacksWithoutANodeKeepTheirHDMIOutputs() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        let text = try String(contentsOfFile: UmockdevTestbed.fixtures + "/laptop-dell-sof-soundwire-0b14.umockdev", encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        try bench.loadText(lines.filter { !$0.hasPrefix("N: input/") && !$0.hasPrefix("E: DEVNAME=/dev/input/") }.joined(separator: "\n"))
        let result = try bench.run(["ports", "--direct", "--explain", "--json", "--log-level", "notice"])
        #expect(result.status == 0, "\(result.stderr)")
        guard case .array(let cards) = try JSON.parse(result.stdout), case .array(let ports)? = cards.first?["ports"] else {
            Issue.record("not an array of cards: \(result.stdout)")
            return
        }
        let rows = ports.map { "\($0["uid"]?.string ?? "") \($0["availability"]?.string ?? "")" }
        #expect(rows == [
            "pci-0000:00:1f.3-platform-sof_sdw/speaker present", "pci-0000:00:1f.3-platform-sof_sdw/mic present",
            "pci-0000:00:1f.3-platform-sof_sdw/hdmi-5 unknown", "pci-0000:00:1f.3-platform-sof_sdw/hdmi-6 unknown",
            "pci-0000:00:1f.3-platform-sof_sdw/hdmi-7 unknown",
        ])
        #expect(result.stderr.components(separatedBy: "has no device node: its state is unknown").count - 1 == 4)
    }

    /// A jack known from udev alone (its device not readable) goes away with its remove
    /// event: the PCM it named is no longer HDMI (on SOF without the card's PCM names, which the
    /// record's control device would give, nothing else says so).
    @Test func unreadableJackRemovalIsAnnounced() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        // The record's text alone: no emulated control device.
        try bench.loadText(String(contentsOfFile: UmockdevTestbed.fixtures + "/laptop-dell-sof-soundwire-0b14.umockdev", encoding: .utf8))
        let base = "pci-0000:00:1f.3-platform-sof_sdw"
        let monitor = try bench.monitor(category: "playback", initialLines: 6)
        #expect(Set(events(monitor.objects, from: 0).compactMap(\.uid)) == Set(["speaker", "mic", "hdmi-5", "hdmi-6", "hdmi-7"].map { "\(base)/\($0)" }))
        try bench.send("uevent remove /devices/pci0000:00/0000:00:1f.3/sof_sdw/sound/card0/input18/event13")
        let objects = try monitor.waitForLines(7)
        #expect(MonitorEvent(objects[6]).event == "portRemoved")
        #expect(MonitorEvent(objects[6]).uid == "\(base)/hdmi-5")
        #expect(try monitor.stop() == 0)
    }

    @Test func emptyMachineHasNoPorts() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        let result = try bench.run(["ports", "--direct", "--json"])
        #expect(result.status == 0)
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
    }
}

@Suite(.serialized) struct UdevHeadsetJackTests {
    /// A codec that reports a headset on one switch device (SOF's "Headset Jack",
    /// cf. thesofproject/linux issue #5795): both switches flip in one frame. The jack, readable
    /// and empty, has made both ports known and unavailable; each turns available (and back) on
    /// its own, one route change each: the earphones take the output, then the headset mic the
    /// input (docs/decisions.md, "A port's availability": two ports of one device change one at
    /// a time), and both leave the same way.
    @Test func combinedHeadsetJackBringsEarphonesThenMicAndTakesThemAway() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        try bench.loadLaptop()
        try bench.send("jackdev /dev/input/event15 14 0 sof-soundwire_Headset_Jack")
        try bench.loadText("""
            P: /devices/pci0000:00/0000:00:1b.0/sound/card0/input20
            E: SUBSYSTEM=input
            E: NAME="sof-soundwire Headset Jack"
            E: ID_INPUT=1
            E: ID_INPUT_SWITCH=1
            A: name=sof-soundwire Headset Jack

            P: /devices/pci0000:00/0000:00:1b.0/sound/card0/input20/event15
            N: input/event15
            E: SUBSYSTEM=input
            E: DEVNAME=/dev/input/event15
            E: ID_INPUT=1
            E: ID_INPUT_SWITCH=1
            """)
        let monitor = try bench.monitor(category: "playAndRecord", initialLines: 3)
        try bench.send("jacks /dev/input/event15 2:1,4:1")
        var objects = try monitor.waitForLines(7)
        #expect(events(objects, from: 3) == [
            MonitorEvent("portAdded", "newDeviceAvailable", uid: IDs.headphones, outputs: [IDs.headphones], inputs: [IDs.mic]),
            MonitorEvent("routeChange", "newDeviceAvailable", outputs: [IDs.headphones], inputs: [IDs.mic]),
            MonitorEvent("portAdded", "newDeviceAvailable", uid: IDs.headsetMic, outputs: [IDs.headphones], inputs: [IDs.headsetMic]),
            MonitorEvent("routeChange", "newDeviceAvailable", outputs: [IDs.headphones], inputs: [IDs.headsetMic]),
        ])
        try bench.send("jacks /dev/input/event15 2:0,4:0")
        objects = try monitor.waitForLines(11)
        #expect(events(objects, from: 7) == [
            MonitorEvent("portRemoved", "oldDeviceUnavailable", uid: IDs.headphones, outputs: [IDs.speaker], inputs: [IDs.headsetMic]),
            MonitorEvent("routeChange", "oldDeviceUnavailable", outputs: [IDs.speaker], inputs: [IDs.headsetMic]),
            MonitorEvent("portRemoved", "oldDeviceUnavailable", uid: IDs.headsetMic, outputs: [IDs.speaker], inputs: [IDs.mic]),
            MonitorEvent("routeChange", "oldDeviceUnavailable", outputs: [IDs.speaker], inputs: [IDs.mic]),
        ])
        #expect(try monitor.stop() == 0)
    }

    /// HDMI audio is recognised from the PCI topology (function 0 of the same
    /// device is a display controller), not only from the card id.
    @Test func gpuAudioFunctionIsFoundFromItsSiblingVGAFunction() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        let text = try String(contentsOfFile: UmockdevTestbed.fixtures + "/gpu-hdmi-nvidia-gf114.umockdev", encoding: .utf8)
        try bench.loadText(text.replacingOccurrences(of: "A: id=NVidia", with: "A: id=GPU"))
        let result = try bench.run(["ports", "--direct", "--json"])
        guard case .array(let ports) = try JSON.parse(result.stdout) else {
            Issue.record("not an array: \(result.stdout)")
            return
        }
        #expect(ports.map { $0["type"]?.string ?? "" } == ["HDMI", "HDMI"])
        #expect(ports.map { $0["alsa"]?.string ?? "" } == ["dmix:CARD=GPU,DEV=3", "dmix:CARD=GPU,DEV=7"])
    }
}

@Suite(.serialized) struct UdevStartupTests {
    /// A card that udev had announced before the watcher started, whose PCM and
    /// control devices register afterwards: it arrives whole once its control
    /// device does, with no partial port first.
    @Test func cardFinishingRegistrationAfterStartArrivesWhole() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        let text = try String(contentsOfFile: UmockdevTestbed.fixtures + "/usb-headset-razer-blackshark-v3-pro.umockdev", encoding: .utf8)
        let records = text.components(separatedBy: "\n\n")
        let children = records.filter { $0.contains("/sound/card2/") }
        let rest = records.filter { !$0.contains("/sound/card2/") }
        try bench.loadText(rest.joined(separator: "\n\n"))
        let monitor = try bench.start(["monitor", "--direct", "--json", "--category", "playAndRecord", "--log-level", "debug"])
        try monitor.waitForStderr("no control device yet")
        #expect(monitor.lines.isEmpty)
        try bench.loadText(children.joined(separator: "\n\n"))
        let objects = try monitor.waitForLines(3)
        #expect(events(objects, from: 0) == [
            MonitorEvent("portAdded", "newDeviceAvailable", uid: IDs.usbOut, outputs: [IDs.usbOut], inputs: [IDs.usbIn]),
            MonitorEvent("portAdded", "newDeviceAvailable", uid: IDs.usbIn, outputs: [IDs.usbOut], inputs: [IDs.usbIn]),
            MonitorEvent("routeChange", "newDeviceAvailable", outputs: [IDs.usbOut], inputs: [IDs.usbIn]),
        ])
        usleep(200_000)
        #expect(monitor.lines.count == 3)
        #expect(try monitor.stop() == 0)
    }
}
