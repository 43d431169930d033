import AudioRouteCore
import Testing

@testable import AudioRouteWatchers
@testable import AudioRouteDBus
import AudioRouteSystem

/// Cards as the event loop would read them, shaped after the fixtures in Tests/Fixtures/udev.
enum Cards {
    static func usbHeadset() -> CardRecord {
        CardRecord(
            syspath: "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-11/1-11.4/1-11.4:1.0/sound/card2",
            properties: [
                "ID_BUS": "usb", "ID_PATH": "pci-0000:00:14.0-usb-0:11.4:1.0", "SOUND_FORM_FACTOR": "headset",
                "ID_MODEL": "BlackShark_V3_Pro", "ID_MODEL_ENC": "BlackShark\\x20V3\\x20Pro", "ID_SERIAL": "Razer_Inc_BlackShark_V3_Pro",
                "ID_USB_INTERFACES": ":010100:010200:030000:", "SOUND_INITIALIZED": "1",
            ],
            attributes: ["id": "Pro", "number": "2"],
            pcms: [PCMDevice(device: 0, playback: true), PCMDevice(device: 0, playback: false)],
            parent: CardParent(subsystem: "usb", driver: "snd-usb-audio"))
    }

    static func usbDAC() -> CardRecord {
        CardRecord(
            syspath: "/sys/devices/pci0000:00/0000:00:12.0/usb2/2-4/2-4:1.0/sound/card3",
            properties: [
                "ID_BUS": "usb", "ID_PATH": "pci-0000:00:12.0-usb-0:4:1.0", "ID_MODEL": "USB_AUDIO", "ID_MODEL_ENC": "USB\\x20AUDIO",
                "ID_SERIAL": "ACTIONS_USB_AUDIO_4512482ADF0FEEEE", "ID_SERIAL_SHORT": "4512482ADF0FEEEE", "ID_USB_INTERFACE_NUM": "00",
            ],
            attributes: ["id": "AUDIO", "number": "3"],
            pcms: [PCMDevice(device: 0, playback: true)],
            parent: CardParent(subsystem: "usb"))
    }

    static func webcam() -> CardRecord {
        CardRecord(
            syspath: "/sys/devices/pci0000:00/0000:00:1d.7/usb1/1-3/1-3:1.2/sound/card4",
            properties: [
                "ID_BUS": "usb", "ID_PATH": "pci-0000:00:1d.7-usb-0:3:1.2", "ID_MODEL": "0804", "ID_MODEL_ID": "0804",
                "ID_MODEL_FROM_DATABASE": "Webcam C250", "ID_SERIAL": "046d_0804_8C1CA450", "ID_SERIAL_SHORT": "8C1CA450",
                "ID_USB_INTERFACE_NUM": "02", "SOUND_FORM_FACTOR": "webcam",
            ],
            attributes: ["id": "U0x46d0x804", "number": "4"],
            pcms: [PCMDevice(device: 0, playback: false)])
    }

    static func hdaLaptop() -> CardRecord {
        CardRecord(
            syspath: "/sys/devices/pci0000:00/0000:00:1b.0/sound/card0",
            properties: ["ID_BUS": "pci", "ID_PATH": "pci-0000:00:1b.0", "SOUND_FORM_FACTOR": "internal"],
            attributes: ["id": "Intel", "number": "0"],
            pcms: [PCMDevice(device: 0, playback: true), PCMDevice(device: 0, playback: false)],
            parent: CardParent(subsystem: "pci", driver: "snd_hda_intel", pciClass: "0x040300"))
    }

    static func gpuHDMI() -> CardRecord {
        CardRecord(
            syspath: "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.1/sound/card1",
            properties: ["ID_BUS": "pci", "ID_PATH": "pci-0000:01:00.1", "ID_MODEL_FROM_DATABASE": "GF114 HDMI Audio Controller"],
            attributes: ["id": "NVidia", "number": "1"],
            pcms: [PCMDevice(device: 3, playback: true), PCMDevice(device: 7, playback: true)],
            parent: CardParent(subsystem: "pci", driver: "snd_hda_intel", pciClass: "0x040300", isGraphicsAudioFunction: true))
    }

    static func pinePhone() -> CardRecord {
        CardRecord(
            syspath: "/sys/devices/platform/sound/sound/card5",
            properties: ["ID_PATH": "platform-sound", "SOUND_FORM_FACTOR": "internal"],
            attributes: ["id": "PinePhone", "number": "5"],
            pcms: [PCMDevice(device: 0, playback: true), PCMDevice(device: 0, playback: false)],
            parent: CardParent(subsystem: "platform", driver: "asoc-simple-card"))
    }

    static func jack(_ card: CardRecord, _ name: String, event: Int, supported: SwitchSet, state: SwitchSet = []) -> JackRecord {
        JackRecord(syspath: card.syspath + "/input\(event)/event\(event)", cardSyspath: card.syspath, name: name, supported: supported, state: state)
    }
}

func summary(_ ports: [Port]) -> [String] {
    ports.map { "\($0.uid) \($0.type.rawValue) \($0.direction.rawValue) \($0.device) \($0.alsa ?? "-")" }
}

@Suite struct ClassifierTests {
    @Test func usbHeadsetGivesUSBOutputAndInputOnOneDevice() {
        let ports = CardClassifier.classify(Cards.usbHeadset()).ports
        #expect(summary(ports) == [
            "pci-0000:00:14.0-usb-0:11.4:1.0/output usbAudio output pci-0000:00:14.0-usb-0:11.4:1.0 dmix:CARD=Pro,DEV=0",
            "pci-0000:00:14.0-usb-0:11.4:1.0/input usbAudio input pci-0000:00:14.0-usb-0:11.4:1.0 dsnoop:CARD=Pro,DEV=0",
        ])
        #expect(ports.allSatisfy { $0.name == "BlackShark V3 Pro" && $0.priority == 100 })
    }

    @Test func usbDACGivesOutputOnlyWithSerialUID() {
        let ports = CardClassifier.classify(Cards.usbDAC()).ports
        #expect(summary(ports) == ["usb-ACTIONS_USB_AUDIO_4512482ADF0FEEEE-00/output usbAudio output usb-ACTIONS_USB_AUDIO_4512482ADF0FEEEE-00 dmix:CARD=AUDIO,DEV=0"])
        #expect(ports.first?.name == "USB AUDIO")
    }

    @Test func webcamGivesInputOnlyNamedFromDatabase() {
        let ports = CardClassifier.classify(Cards.webcam()).ports
        #expect(summary(ports) == ["usb-046d_0804_8C1CA450-02/input usbAudio input usb-046d_0804_8C1CA450-02 dsnoop:CARD=U0x46d0x804,DEV=0"])
        #expect(ports.first?.name == "Webcam C250")
    }

    @Test func internalCodecGivesSpeakerAndMic() {
        let ports = CardClassifier.classify(Cards.hdaLaptop()).ports
        #expect(summary(ports) == [
            "pci-0000:00:1b.0/speaker builtInSpeaker output pci-0000:00:1b.0 dmix:CARD=Intel,DEV=0",
            "pci-0000:00:1b.0/mic builtInMic input pci-0000:00:1b.0 dsnoop:CARD=Intel,DEV=0",
        ])
    }

    @Test func gpuFunctionGivesOneHDMIPortPerPlaybackPCM() {
        let ports = CardClassifier.classify(Cards.gpuHDMI()).ports
        #expect(summary(ports) == [
            "pci-0000:01:00.1/hdmi-3 HDMI output pci-0000:01:00.1 dmix:CARD=NVidia,DEV=3",
            "pci-0000:01:00.1/hdmi-7 HDMI output pci-0000:01:00.1 dmix:CARD=NVidia,DEV=7",
        ])
        // No jack device in this record: availability unknown, so below the built-ins (docs/ports.md).
        #expect(ports.allSatisfy { $0.priority == -1 })
    }

    @Test func phoneByTheRuleAlsoGivesReceiver() {
        // Without its UCM profile (which gives a phone's ports: docs/ucm.md) or the udev rule,
        // nothing the record says names the PinePhone's speaker and no jack is detected: a
        // board's analog output (docs/decisions.md).
        let plain = CardClassifier.classify(Cards.pinePhone()).ports.map(\.type)
        #expect(plain == [.lineOut, .lineIn])
        var byRule = Cards.pinePhone()
        byRule.properties["AUDIOROUTE_RECEIVER"] = "1"
        let phone = CardClassifier.classify(byRule).ports
        #expect(phone.map(\.type) == [.builtInSpeaker, .builtInReceiver, .builtInMic])
        #expect(phone.first { $0.type == .builtInReceiver }?.alsa == "dmix:CARD=PinePhone,DEV=0")
        #expect(CardClassifier.classify(byRule).decisions.contains { $0.subject == "platform-sound/receiver" && $0.signal == "AUDIOROUTE_RECEIVER=1" })
    }

    @Test func headphoneJackAddsHeadphonesOnTheJackDevice() {
        let card = Cards.hdaLaptop()
        let jack = Cards.jack(card, "HDA Intel Front Headphone", event: 12, supported: .headphoneInsert, state: .headphoneInsert)
        let ports = CardClassifier.classify(card, jacks: [jack]).ports
        let headphones = ports.first { $0.type == .headphones }
        #expect(headphones?.uid == "pci-0000:00:1b.0/headphones")
        #expect(headphones?.device == "pci-0000:00:1b.0/jack")
        #expect(headphones?.alsa == "dmix:CARD=Intel,DEV=0")
        #expect(headphones?.priority == 100)
        #expect(headphones?.availability == .available)
        // Unplugged: the same port, listed as unavailable, and never one a route may use.
        let unplugged = Cards.jack(card, "HDA Intel Front Headphone", event: 12, supported: .headphoneInsert, state: [])
        let empty = CardClassifier.classify(card, jacks: [unplugged])
        let listed = empty.ports.filter { $0.type == .headphones }
        #expect(listed.map(\.uid) == ["pci-0000:00:1b.0/headphones"])
        #expect(listed.first?.availability == .unavailable)
        #expect(listed.first?.alsa == "dmix:CARD=Intel,DEV=0")
        #expect(empty.availability["pci-0000:00:1b.0/headphones"] == .unavailable)
        #expect(!empty.usablePorts.contains { $0.type == .headphones })
    }

    @Test func aJacksOwnALSAPCMOverridesTheCards() {
        let card = Cards.hdaLaptop()
        var jack = Cards.jack(card, "HDA Intel Front Headphone", event: 12, supported: .headphoneInsert, state: .headphoneInsert)
        jack.properties["AUDIOROUTE_ALSA_PCM"] = "headphone_eq"
        let ports = CardClassifier.classify(card, jacks: [jack]).ports
        #expect(ports.first { $0.type == .headphones }?.alsa == "headphone_eq")
        #expect(ports.first { $0.type == .builtInSpeaker }?.alsa == "dmix:CARD=Intel,DEV=0")
        jack.properties["AUDIOROUTE_ALSA_PCM"] = "bad\u{1}name"
        let result = CardClassifier.classify(card, jacks: [jack])
        #expect(result.ports.first { $0.type == .headphones }?.alsa == "dmix:CARD=Intel,DEV=0")
        #expect(result.notes.contains { $0.message.contains("AUDIOROUTE_ALSA_PCM") })
    }

    @Test func headsetJackGivesHeadphonesAndMicOnOneDevice() {
        let card = Cards.hdaLaptop()
        let both: SwitchSet = [.headphoneInsert, .microphoneInsert]
        let jack = Cards.jack(card, "sof-soundwire Headset Jack", event: 15, supported: both, state: both)
        let ports = CardClassifier.classify(card, jacks: [jack]).ports.filter { !$0.type.isBuiltIn }
        #expect(ports.map(\.type) == [.headphones, .headsetMic])
        #expect(Set(ports.map(\.device)) == ["pci-0000:00:1b.0/jack"])
    }

    @Test func lineOutAndPhysicalOnlyJacks() {
        let card = Cards.hdaLaptop()
        let line = Cards.jack(card, "HDA Intel Line Out", event: 11, supported: .lineoutInsert, state: .lineoutInsert)
        let physical = Cards.jack(card, "Jack", event: 14, supported: .jackPhysicalInsert, state: .jackPhysicalInsert)
        let ports = CardClassifier.classify(card, jacks: [line, physical]).ports.filter { !$0.type.isBuiltIn }
        // SW_JACK_PHYSICAL_INSERT alone says something is in a jack, not what: no port.
        #expect(summary(ports) == ["pci-0000:00:1b.0/line-out lineOut output pci-0000:00:1b.0/line dmix:CARD=Intel,DEV=0"])
        #expect(ports.first?.priority == 90)
    }

    @Test func hdmiJacksGateHDMIPortsAndKeepThemOffTheSpeaker() {
        var card = Cards.hdaLaptop()
        card.pcms = [PCMDevice(device: 3, playback: true), PCMDevice(device: 0, playback: false), PCMDevice(device: 7, playback: true), PCMDevice(device: 0, playback: true)].sorted()
        let off = Cards.jack(card, "HDA Intel PCH HDMI/DP,pcm=3", event: 16, supported: [.lineoutInsert, .videooutInsert])
        let on = Cards.jack(card, "HDA Intel PCH HDMI/DP,pcm=7", event: 17, supported: [.lineoutInsert, .videooutInsert], state: .lineoutInsert)
        let result = CardClassifier.classify(card, jacks: [off, on])
        #expect(summary(result.usablePorts) == [
            "pci-0000:00:1b.0/speaker builtInSpeaker output pci-0000:00:1b.0 dmix:CARD=Intel,DEV=0",
            "pci-0000:00:1b.0/mic builtInMic input pci-0000:00:1b.0 dsnoop:CARD=Intel,DEV=0",
            "pci-0000:00:1b.0/hdmi-7 HDMI output pci-0000:00:1b.0/hdmi-7 dmix:CARD=Intel,DEV=7",
        ])
        // The output whose jack is off is listed, unavailable.
        #expect(result.ports.filter { $0.availability == .unavailable }.map(\.uid) == ["pci-0000:00:1b.0/hdmi-3"])
        #expect(result.ports.first { $0.uid == "pci-0000:00:1b.0/hdmi-7" }?.availability == .available)
        var gpu = Cards.gpuHDMI()
        gpu.pcms = [PCMDevice(device: 3, playback: true), PCMDevice(device: 7, playback: true)]
        let gpuJack = Cards.jack(gpu, "HDA NVidia HDMI/DP,pcm=3", event: 20, supported: .lineoutInsert, state: .lineoutInsert)
        let gpuOff = Cards.jack(gpu, "HDA NVidia HDMI/DP,pcm=7", event: 21, supported: .lineoutInsert)
        let gpuResult = CardClassifier.classify(gpu, jacks: [gpuJack, gpuOff])
        #expect(gpuResult.usablePorts.map(\.uid) == ["pci-0000:01:00.1/hdmi-3"])
        #expect(gpuResult.ports.map { "\($0.uid) \($0.availability.rawValue)" } == ["pci-0000:01:00.1/hdmi-3 available", "pci-0000:01:00.1/hdmi-7 unavailable"])
    }

    @Test func udevPropertiesOverrideTypePriorityNameAndPCM() {
        var card = Cards.usbHeadset()
        card.properties["AUDIOROUTE_PORT_TYPE"] = "headphones, headsetMic"
        card.properties["AUDIOROUTE_PRIORITY"] = "120"
        card.properties["AUDIOROUTE_NAME"] = "Desk headset"
        card.properties["AUDIOROUTE_ALSA_PCM"] = "routetest"
        let ports = CardClassifier.classify(card).ports
        #expect(ports.map(\.type) == [.headphones, .headsetMic])
        #expect(ports.allSatisfy { $0.priority == 120 && $0.name == "Desk headset" && $0.alsa == "routetest" })
        #expect(Set(ports.map(\.device)).count == 1)

        var webcam = Cards.webcam()
        webcam.properties["AUDIOROUTE_PRIORITY"] = "10"
        #expect(CardClassifier.classify(webcam).ports.map(\.priority) == [10])
    }

    /// Issue 17: a card's ports are shared (dmix out, dsnoop in, on the port's own PCM), by
    /// card id or, when the id is unusable, by number; AUDIOROUTE_ALSA_EXCLUSIVE=1 asks for
    /// plughw; AUDIOROUTE_ALSA_PCM still wins over both.
    @Test func cardPortsAreSharedUnlessTheCardIsExclusive() {
        func pcms(_ card: CardRecord) -> [String] { CardClassifier.classify(card).ports.map { "\($0.direction.rawValue) \($0.alsa ?? "-")" } }
        var card = Cards.usbHeadset()
        #expect(pcms(card) == ["output dmix:CARD=Pro,DEV=0", "input dsnoop:CARD=Pro,DEV=0"])
        card.attributes["id"] = "bad id"
        #expect(pcms(card) == ["output dmix:2,0", "input dsnoop:2,0"])
        card.properties["AUDIOROUTE_ALSA_EXCLUSIVE"] = "1"
        #expect(pcms(card) == ["output plughw:2,0", "input plughw:2,0"])
        card.attributes["id"] = "Pro"
        #expect(pcms(card) == ["output plughw:CARD=Pro,DEV=0", "input plughw:CARD=Pro,DEV=0"])
        card.properties["AUDIOROUTE_ALSA_PCM"] = "routetest"
        #expect(pcms(card) == ["output routetest", "input routetest"])
        card.properties["AUDIOROUTE_ALSA_PCM"] = nil
        card.properties["AUDIOROUTE_ALSA_EXCLUSIVE"] = "0"
        #expect(pcms(card) == ["output dmix:CARD=Pro,DEV=0", "input dsnoop:CARD=Pro,DEV=0"])
        card.properties["AUDIOROUTE_ALSA_EXCLUSIVE"] = "sometimes"
        let result = CardClassifier.classify(card)
        #expect(result.ports.first?.alsa == "dmix:CARD=Pro,DEV=0")
        #expect(result.notes.contains { $0.level == .warning && $0.message.contains("AUDIOROUTE_ALSA_EXCLUSIVE") })
    }

    @Test func ignoredAndUnfinishedCardsGiveNothing() {
        var dummy = Cards.hdaLaptop()
        dummy.properties["AUDIOROUTE_IGNORE"] = "1"
        let ignored = CardClassifier.classify(dummy)
        #expect(ignored.ports.isEmpty)
        #expect(ignored.notes.contains { $0.message.contains("AUDIOROUTE_IGNORE") })
        var half = Cards.usbHeadset()
        half.hasControl = false
        #expect(CardClassifier.classify(half).ports.isEmpty)
    }

    @Test func virtualCardsAreNotPortsUnlessAskedFor() {
        let loopback = CardRecord(
            syspath: "/sys/devices/platform/snd_aloop.0/sound/card9", properties: ["ID_PATH": "platform-snd_aloop.0"],
            attributes: ["id": "Loopback", "number": "9"], pcms: [PCMDevice(device: 0, playback: true), PCMDevice(device: 0, playback: false)],
            parent: CardParent(subsystem: "platform", driver: "snd_aloop"))
        let ignored = CardClassifier.classify(loopback)
        #expect(ignored.ports.isEmpty)
        #expect(ignored.notes.contains { $0.message.contains("virtual card (driver snd_aloop)") })
        var byID = loopback
        byID.parent.driver = nil
        #expect(CardClassifier.classify(byID).ports.isEmpty)
        var wanted = loopback
        wanted.properties["AUDIOROUTE_IGNORE"] = "0"
        // A platform card with no jack and no speaker named: line out and in, never a speaker.
        #expect(CardClassifier.classify(wanted).ports.map(\.type) == [.lineOut, .lineIn])
    }

    @Test func garbageIsReportedNotTrusted() {
        var card = Cards.usbHeadset()
        card.pcms = []
        let noPCM = CardClassifier.classify(card)
        #expect(noPCM.ports.isEmpty)
        #expect(noPCM.notes.map(\.level) == [.notice])

        var bad = Cards.hdaLaptop()
        bad.attributes["id"] = "bad id\u{1}"
        bad.attributes["number"] = "many"
        bad.properties["AUDIOROUTE_PRIORITY"] = "high"
        bad.properties["AUDIOROUTE_PORT_TYPE"] = "builtInSpeaker,loudspeaker"
        bad.properties["ID_PATH"] = "pci 0000"
        bad.properties["ID_SERIAL"] = nil
        let result = CardClassifier.classify(bad)
        // No trustworthy uid source left: no ports rather than a uid from the card index.
        #expect(result.ports.isEmpty)
        let keys = Set(result.notes.map { $0.key.split(separator: "#").last.map(String.init) ?? "" })
        #expect(keys.isSuperset(of: ["bad-id", "bad-number", "bad-path", "no-uid"]))
        #expect(result.notes.allSatisfy { !$0.message.contains("\u{1}") })

        var partly = Cards.hdaLaptop()
        partly.properties["AUDIOROUTE_PRIORITY"] = "high"
        partly.properties["AUDIOROUTE_PORT_TYPE"] = "builtInSpeaker,loudspeaker"
        let kept = CardClassifier.classify(partly)
        #expect(kept.ports.map(\.type) == [.builtInSpeaker])
        #expect(kept.ports.first?.priority == 0)
        #expect(kept.notes.count == 2)
    }

    @Test func uidNeverComesFromTheCardIndex() {
        var first = Cards.usbDAC()
        var second = first
        second.attributes["number"] = "7"
        second.syspath = second.syspath.replacingCard("card3", with: "card7")
        first.attributes["number"] = "3"
        #expect(CardClassifier.classify(first).ports.map(\.uid) == CardClassifier.classify(second).ports.map(\.uid))
        var noPath = Cards.hdaLaptop()
        noPath.properties["ID_PATH"] = nil
        #expect(CardClassifier.classify(noPath).ports.first?.uid == "card-Intel/speaker")
    }

    // MARK: Every udev signal (issue 19)

    @Test func hdaPCMsInTheHDMIRangeAreHDMIWithUnknownAvailabilityWithoutJacks() {
        var card = Cards.hdaLaptop()
        card.pcms.append(PCMDevice(device: 3, playback: true))
        card.pcms.sort()
        let result = CardClassifier.classify(card)
        #expect(summary(result.ports) == [
            "pci-0000:00:1b.0/speaker builtInSpeaker output pci-0000:00:1b.0 dmix:CARD=Intel,DEV=0",
            "pci-0000:00:1b.0/mic builtInMic input pci-0000:00:1b.0 dsnoop:CARD=Intel,DEV=0",
            "pci-0000:00:1b.0/hdmi-3 HDMI output pci-0000:00:1b.0/hdmi-3 dmix:CARD=Intel,DEV=3",
        ])
        #expect(result.availability["pci-0000:00:1b.0/hdmi-3"] == .unknown)
        #expect(result.availability["pci-0000:00:1b.0/speaker"] == .present)
        #expect(result.decisions.last?.signal.contains("driver snd_hda_intel") == true)
        // Offered below the built-ins: the speaker keeps the route; alone, the HDMI port takes it.
        #expect(result.ports.last?.priority == -1)
        #expect(resolveRoute(RouteRequest(), ports: result.ports).route(in: result.ports).outputs == ["pci-0000:00:1b.0/speaker"])
        let hdmiOnly = result.ports.filter { $0.type == .HDMI }
        #expect(resolveRoute(RouteRequest(), ports: hdmiOnly).route(in: hdmiOnly).outputs == ["pci-0000:00:1b.0/hdmi-3"])
    }

    /// HP Laptop 15z-fc000 (alsa-devel, "[Bug 217440] ALC236 audio disappears ... on warm boot",
    /// 2023-06-10): its codec dump is empty ("Invalid AFG subtree"), so no pin is read; its jack
    /// controls still show HDA's phantom jacks: `Speaker Phantom Jack`, and no mic one (the
    /// laptop's microphones are on the ACP). The phantom jacks name the pins that are always there.
    @Test func phantomJacksStandForPinsWhenNoPinIsRead() {
        var card = Cards.hdaLaptop()
        card.attributes["id"] = "Generic_1"
        card.phantomJacks = ["Speaker Phantom Jack"]
        let result = CardClassifier.classify(card)
        #expect(result.ports.map(\.type) == [.builtInSpeaker])
        #expect(result.decisions.first { $0.subject.hasSuffix("/speaker") }?.signal == "jack control \"Speaker Phantom Jack\": a Speaker pin; first analog playback PCM 0")
        #expect(result.decisions.contains { $0.outcome == "no builtInMic: no phantom jack names a microphone" })
        card.phantomJacks = ["Internal Mic Phantom Jack", "Speaker Phantom Jack"]
        #expect(CardClassifier.classify(card).ports.map(\.type) == [.builtInSpeaker, .builtInMic])
        // Pins, where read, decide (a desktop whose pins are all jacks, with an S/PDIF phantom jack).
        card.hdaPins = [HDAPin(codec: 0, node: 0x21, defaultConfig: 0x0421_101f)]
        #expect(CardClassifier.classify(card).ports.map(\.type).isEmpty)
        // Neither pins nor phantom jacks (a card whose controls were not read): the first PCMs.
        #expect(CardClassifier.classify(Cards.hdaLaptop()).ports.map(\.type) == [.builtInSpeaker, .builtInMic])
    }

    /// Apple MacBook Air 3,2 (alsa-devel, "Kernel 5.2.2 - RSpeaker not working", 2019-07-25):
    /// NVIDIA's MCP89 chipset HDA is card `NVidia` [HDA NVidia], as a GPU's is, but its PCM 0 is the
    /// CS4206 codec's analog output (the speakers) and only 3, 7, 8 are HDMI.
    @Test func aChipsetsNVidiaCardWithAnAnalogCodecIsNoDisplayCard() {
        var card = Cards.gpuHDMI()
        card.attributes["id"] = "NVidia"
        card.properties["ID_MODEL_FROM_DATABASE"] = "MCP89 High Definition Audio"
        card.parent.isGraphicsAudioFunction = false
        card.pcms = [
            PCMDevice(device: 0, playback: true, id: "CS4206 Analog", name: "CS4206 Analog"), PCMDevice(device: 0, playback: false, id: "CS4206 Analog"),
            PCMDevice(device: 1, playback: true, id: "CS4206 Digital"), PCMDevice(device: 3, playback: true, id: "HDMI 0"),
            PCMDevice(device: 7, playback: true, id: "HDMI 0"), PCMDevice(device: 8, playback: true, id: "HDMI 0"),
        ]
        #expect(CardClassifier.videoCardSignal(card, bus: "pci", cardID: "NVidia") == nil)
        let result = CardClassifier.classify(card)
        #expect(result.ports.map { "\($0.type.rawValue) \($0.alsa ?? "-")" } == [
            "builtInSpeaker dmix:CARD=NVidia,DEV=0", "builtInMic dsnoop:CARD=NVidia,DEV=0",
            "HDMI dmix:CARD=NVidia,DEV=3", "HDMI dmix:CARD=NVidia,DEV=7", "HDMI dmix:CARD=NVidia,DEV=8",
        ])
        // A GPU's card, whose PCMs all say HDMI (or are not named), stays display audio.
        var gpu = card
        gpu.pcms = [PCMDevice(device: 3, playback: true, id: "HDMI 0"), PCMDevice(device: 7, playback: true, id: "HDMI 1")]
        #expect(CardClassifier.videoCardSignal(gpu, bus: "pci", cardID: "NVidia")?.signal == "card id NVidia")
    }

    /// Issue 19: a GPU's HDMI function seen without its function 0 and without a card id
    /// (HDA NVidia, AMD HD-Audio Generic): the jacks' names, read from udev, say every
    /// playback PCM is HDMI/DP, so there is no speaker; unknown jack states keep the ports.
    @Test func gpuWithoutFunction0OrCardIDIsNeverASpeaker() {
        var gpu = Cards.gpuHDMI()
        gpu.parent = CardParent(subsystem: "pci")
        gpu.attributes = ["number": "1"]
        gpu.properties["ID_MODEL_FROM_DATABASE"] = nil
        let jacks = [3, 7].map { Cards.jack(gpu, "HDA NVidia HDMI/DP,pcm=\($0)", event: 20 + $0, supported: [.lineoutInsert, .videooutInsert]) }
            .map { JackRecord(syspath: $0.syspath, cardSyspath: $0.cardSyspath, name: $0.name, supported: $0.supported, state: [], stateKnown: false) }
        let result = CardClassifier.classify(gpu, jacks: jacks)
        #expect(result.ports.map(\.uid) == ["pci-0000:01:00.1/hdmi-3", "pci-0000:01:00.1/hdmi-7"])
        #expect(result.ports.allSatisfy { $0.type == .HDMI && $0.alsa?.description.hasPrefix("dmix:1,") == true })
        #expect(result.decisions.contains { $0.outcome.contains("every playback PCM is HDMI/DP") && $0.signal.contains("HDA NVidia HDMI/DP,pcm=3") })
        #expect(result.ports.allSatisfy { $0.availability == .unknown })
        // With readable jacks, only connected outputs are usable; the other is listed, unavailable.
        var readable = jacks
        readable[1] = JackRecord(syspath: jacks[1].syspath, cardSyspath: gpu.syspath, name: jacks[1].name, supported: jacks[1].supported, state: .lineoutInsert)
        readable[0] = JackRecord(syspath: jacks[0].syspath, cardSyspath: gpu.syspath, name: jacks[0].name, supported: jacks[0].supported, state: [])
        let readableResult = CardClassifier.classify(gpu, jacks: readable)
        #expect(readableResult.usablePorts.map(\.uid) == ["pci-0000:01:00.1/hdmi-7"])
        #expect(readableResult.ports.map { "\($0.uid) \($0.availability.rawValue)" } == ["pci-0000:01:00.1/hdmi-3 unavailable", "pci-0000:01:00.1/hdmi-7 available"])
        // The hwdb model name alone says so too.
        var byModel = gpu
        byModel.properties["ID_MODEL_FROM_DATABASE"] = "GF119 HDMI Audio Controller"
        let modelResult = CardClassifier.classify(byModel)
        #expect(modelResult.ports.map(\.type) == [.HDMI, .HDMI])
        #expect(modelResult.decisions.first?.signal == "hwdb ID_MODEL_FROM_DATABASE \"GF119 HDMI Audio Controller\"")
        // And PCI function 0's display class.
        var byClass = gpu
        byClass.parent.function0Class = "0x030000"
        #expect(CardClassifier.classify(byClass).decisions.first?.signal.contains("0x030000") == true)
    }

    @Test func platformDisplayAudioFromDeviceTreeIsDisplayPortOrHDMI() {
        let zynq = CardRecord(
            syspath: "/sys/devices/platform/amba/fd4a0000.zynqmp-display/fd4a0000.zynqmp-display:zynqmp_dp_snd_card/sound/card0",
            properties: ["ID_PATH": "platform-fd4a0000.zynqmp-display:zynqmp_dp_snd_card"], attributes: ["id": "monitor", "number": "0"],
            pcms: [PCMDevice(device: 0, playback: true), PCMDevice(device: 1, playback: true)],
            parent: CardParent(subsystem: "platform", driver: "xilinx-dp-snd-card", ofName: "zynqmp_dp_snd_card", ofCompatible: ["xlnx,dp-snd-card"]))
        let result = CardClassifier.classify(zynq)
        #expect(result.ports.map(\.type) == [.displayPort, .displayPort])
        #expect(result.ports.map(\.uid).allSatisfy { $0.hasSuffix("/dp-0") || $0.hasSuffix("/dp-1") })
        #expect(result.decisions.first?.signal == "OF_COMPATIBLE \"xlnx,dp-snd-card\"")
        var byName = zynq
        byName.parent.ofCompatible = []
        #expect(CardClassifier.classify(byName).decisions.first?.signal == "OF_NAME \"zynqmp_dp_snd_card\"")
        byName.parent.ofName = nil
        #expect(CardClassifier.classify(byName).decisions.first?.signal == "driver xilinx-dp-snd-card")
        // The PinePhone's simple-audio-card is no display: speaker, receiver and mic.
        var phone = Cards.pinePhone()
        phone.parent.ofCompatible = ["simple-audio-card"]
        phone.parent.ofName = "sound"
        phone.properties["AUDIOROUTE_RECEIVER"] = "1"
        #expect(CardClassifier.classify(phone).ports.map(\.type) == [.builtInSpeaker, .builtInReceiver, .builtInMic])
    }

    @Test func unreadableJacksOfferHDMIButClaimNoAnalogPort() {
        var card = Cards.hdaLaptop()
        card.parent.driver = "sof_sdw"
        card.pcms = [0, 5].map { PCMDevice(device: $0, playback: true) } + [PCMDevice(device: 1, playback: false)]
        let headset = JackRecord(
            syspath: card.syspath + "/input17/event12", cardSyspath: card.syspath, name: "sof-soundwire Headset Jack",
            supported: [.headphoneInsert, .microphoneInsert], state: [.headphoneInsert], stateKnown: false)
        let hdmi = JackRecord(
            syspath: card.syspath + "/input18/event13", cardSyspath: card.syspath, name: "sof-soundwire HDMI/DP,pcm=5", supported: .lineoutInsert,
            state: [], stateKnown: false)
        let result = CardClassifier.classify(card, jacks: [headset, hdmi])
        #expect(result.ports.map(\.type) == [.builtInSpeaker, .builtInMic, .HDMI])
        #expect(result.ports.first?.alsa == "dmix:CARD=Intel,DEV=0")
        #expect(result.availability["pci-0000:00:1b.0/hdmi-5"] == .unknown)
        #expect(result.decisions.contains { $0.subject == "jack" && $0.signal.contains("Headset Jack") })
        #expect(headset.state.isEmpty, "an unknown state is never a plugged one")
    }

    @Test func formFactorAndPCMClassLimitThePorts() {
        var webcam = Cards.webcam()
        webcam.pcms.append(PCMDevice(device: 0, playback: true))
        let result = CardClassifier.classify(webcam)
        #expect(result.ports.map(\.direction) == [.input])
        #expect(result.decisions.contains { $0.signal == "SOUND_FORM_FACTOR=webcam" })
        var modem = Cards.hdaLaptop()
        modem.pcms = [PCMDevice(device: 6, playback: true, pcmClass: "modem"), PCMDevice(device: 6, playback: false, pcmClass: "modem")]
        let modemResult = CardClassifier.classify(modem)
        #expect(modemResult.ports.isEmpty)
        #expect(modemResult.decisions.filter { $0.signal == "pcm_class modem" }.count == 2)
        var named = Cards.hdaLaptop()
        named.parent.driver = "snd_soc_simple_card"
        named.pcms = [PCMDevice(device: 0, playback: true, id: "HDMI 0"), PCMDevice(device: 1, playback: true, id: "ALC5640 Analog")]
        let namedResult = CardClassifier.classify(named)
        #expect(namedResult.ports.map(\.uid) == ["pci-0000:00:1b.0/speaker", "pci-0000:00:1b.0/hdmi-0"])
        #expect(namedResult.ports.first?.alsa == "dmix:CARD=Intel,DEV=1")
    }

    @Test func everyPortHasTheSignalThatDecidedIt() {
        var phone = Cards.pinePhone()
        phone.properties["AUDIOROUTE_RECEIVER"] = "1"
        let cards = [Cards.usbHeadset(), Cards.usbDAC(), Cards.webcam(), Cards.hdaLaptop(), Cards.gpuHDMI(), Cards.pinePhone(), phone]
        for card in cards {
            let result = CardClassifier.classify(card)
            for port in result.ports {
                #expect(result.decisions.contains { $0.subject == port.uid && !$0.signal.isEmpty }, "\(port.uid) has no decision")
                #expect(result.availability[port.uid] != nil)
            }
        }
    }

    @Test func udevSwitchBitmapsParse() {
        #expect(JackRecord.switches(fromUdevBitmap: "140") == [.lineoutInsert, .videooutInsert])
        #expect(JackRecord.switches(fromUdevBitmap: "14") == [.headphoneInsert, .microphoneInsert])
        #expect(JackRecord.switches(fromUdevBitmap: "0 4") == .headphoneInsert)
        #expect(JackRecord.switches(fromUdevBitmap: "zz") == nil)
        #expect(JackRecord(syspath: "", cardSyspath: "", name: "vc4-hdmi-0 HDMI Jack", supported: [], state: []).isVideoJack)
        #expect(!JackRecord(syspath: "", cardSyspath: "", name: "HDA Intel PCH Headphone", supported: [], state: []).isVideoJack)
    }

    @Test func pcmNamesParse() {
        #expect(PCMDevice(sysname: "pcmC1D3p") == PCMDevice(device: 3, playback: true))
        #expect(PCMDevice(sysname: "pcmC10D12c") == PCMDevice(device: 12, playback: false))
        for bad in ["pcmC1D3", "pcmCxD3p", "pcmC1D-3p", "controlC1", "pcmC1D3pp", ""] { #expect(PCMDevice(sysname: bad) == nil) }
        #expect(JackRecord(syspath: "", cardSyspath: "", name: "HDA Intel PCH HDMI/DP,pcm=10", supported: [], state: []).hdmiPCM == 10)
        #expect(JackRecord(syspath: "", cardSyspath: "", name: "HDA Intel PCH Headphone", supported: [], state: []).hdmiPCM == nil)
    }
}

extension String {
    func replacingCard(_ old: String, with new: String) -> String {
        var parts = split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        for index in parts.indices where parts[index] == old { parts[index] = new }
        return parts.joined(separator: "/")
    }
}
