import AudioRouteCore
import AudioRouteSystem
import Foundation
import Testing

@testable import AudioRouteWatchers

/// What the card says (issue 26): PCM names, HDA pins and board signals decide the ports. Each
/// card here is a real machine's, as its public `aplay -l`, alsa-info or kernel source shows it.
enum SaidCards {
    static func pcm(_ device: Int, _ playback: Bool, _ id: String, name: String = "") -> PCMDevice {
        PCMDevice(device: device, playback: playback, pcmClass: "generic", id: id, name: name)
    }

    /// Dell XPS 17 9700, sof-soundwire: alsa-info in alsa-project/alsa-utils issue #100.
    static func xps17() -> CardRecord {
        CardRecord(
            syspath: "/sys/devices/pci0000:00/0000:00:1f.3/sof_sdw/sound/card0",
            properties: ["ID_PATH": "pci-0000:00:1f.3-platform-sof_sdw", "SOUND_FORM_FACTOR": "internal"],
            attributes: ["id": "sofsoundwire", "number": "0"],
            pcms: [
                pcm(0, true, "Jack Out (*)"), pcm(1, false, "Jack In (*)"), pcm(2, true, "Speaker (*)"), pcm(4, false, "Microphone (*)"),
                pcm(5, true, "HDMI 1 (*)"), pcm(6, true, "HDMI 2 (*)"), pcm(7, true, "HDMI 3 (*)"),
            ],
            parent: CardParent(subsystem: "platform", driver: "sof_sdw"),
            info: ALSACardInfo(
                id: "sofsoundwire", driver: "sof-soundwire", name: "sof-soundwire", longName: "Intel Soundwire SOF", mixerName: "Intel Kabylake HDMI",
                components: "HDA:8086280b,80860101,00100000 cfg-spk:4 cfg-amp:2 hs:rt711 spk:rt1308 mic:rt715"))
    }

    /// A jack control of `card`, as the control device reports it.
    static func control(_ card: CardRecord, _ name: String, numid: Int, on: Bool) -> JackRecord {
        let supported = ControlJacks.switches(forName: name) ?? []
        return JackRecord(
            syspath: card.syspath + "/controlC0#\(numid)", cardSyspath: card.syspath, name: name, supported: supported, state: on ? supported : [],
            source: .control)
    }

    /// A SOF card of `pcms` below 0000:00:1f.3 (a laptop's: not a board).
    static func sof(_ id: String, platform: String, _ pcms: [PCMDevice]) -> CardRecord {
        CardRecord(
            syspath: "/sys/devices/pci0000:00/0000:00:1f.3/\(platform)/sound/card0",
            properties: ["ID_PATH": "pci-0000:00:1f.3-platform-\(platform)"], attributes: ["id": id, "number": "0"], pcms: pcms,
            parent: CardParent(subsystem: "platform", driver: platform))
    }

    /// A device-tree card (a board's) of `pcms`.
    static func board(_ id: String, node: String, compatible: [String], driver: String, _ pcms: [PCMDevice], info: ALSACardInfo? = nil) -> CardRecord {
        CardRecord(
            syspath: "/sys/devices/platform/\(node)/sound/card0", properties: ["ID_PATH": "platform-\(node)"], attributes: ["id": id, "number": "0"],
            pcms: pcms, parent: CardParent(subsystem: "platform", driver: driver, ofName: node, ofCompatible: compatible), info: info)
    }

    static func ports(_ result: CardClassification) -> [String] {
        result.ports.map { "\($0.uid.split(separator: "/").last ?? "") \($0.type.rawValue) \($0.alsa ?? "-")" }
    }
}

@Suite struct ClassifierNamesTests {
    /// The SoundWire laptop: PCM 0 is "Jack Out", the speakers are PCM 2 ("Speaker") and the
    /// microphone array PCM 4 ("Microphone"); the jack ports open the jack's own PCMs.
    @Test func pcmNamesPlaceTheSpeakerTheMicAndTheJacks() {
        let card = SaidCards.xps17()
        let result = CardClassifier.classify(card)
        #expect(SaidCards.ports(result) == [
            "speaker builtInSpeaker dmix:CARD=sofsoundwire,DEV=2", "mic builtInMic dsnoop:CARD=sofsoundwire,DEV=4",
            "hdmi-5 HDMI dmix:CARD=sofsoundwire,DEV=5", "hdmi-6 HDMI dmix:CARD=sofsoundwire,DEV=6", "hdmi-7 HDMI dmix:CARD=sofsoundwire,DEV=7",
        ])
        // Each decision names the PCM and the words that decided it.
        #expect(result.decisions.first { $0.subject.hasSuffix("/speaker") }?.signal == "PCM 2p id \"Speaker (*)\"")
        #expect(result.decisions.first { $0.subject.hasSuffix("/mic") }?.signal == "PCM 4c id \"Microphone (*)\"")
        #expect(result.decisions.first { $0.subject.hasSuffix("/hdmi-5") }?.signal.hasPrefix("PCM 5p id \"HDMI 1 (*)\"") == true)
        // A headset plugged in: its controls (alsactl names them so) switch on.
        let jacks = [
            SaidCards.control(card, "Headphone Jack", numid: 29, on: true), SaidCards.control(card, "Headset Mic Jack", numid: 30, on: true),
        ]
        let plugged = CardClassifier.classify(card, jacks: jacks)
        #expect(plugged.ports.first { $0.type == .headphones }?.alsa == "dmix:CARD=sofsoundwire,DEV=0")
        #expect(plugged.ports.first { $0.type == .headsetMic }?.alsa == "dsnoop:CARD=sofsoundwire,DEV=1")
        #expect(plugged.decisions.contains { $0.subject.hasSuffix("/headphones") && $0.signal.contains("PCM 0p id \"Jack Out (*)\"") })
    }

    /// Samsung Galaxy Chromebook 2 (sof-cml_max98390_da7219), WeirdTreeThing/chromebook-linux-audio
    /// issue #14: the built-in mic is "DMIC" (2), never the headset's PCM 1; "EchoRef" (4) is
    /// what the card plays, no port; the headset jack's ports go on "Headset".
    @Test func theBuiltInMicIsTheDMICNeverTheHeadsetOrTheEchoReference() {
        func pcm(_ device: Int, _ playback: Bool, _ id: String, name: String = "") -> PCMDevice { SaidCards.pcm(device, playback, id, name: name) }
        let card = SaidCards.sof("sofcmlmax98390d", platform: "cml_max98390_da7219", [
            pcm(0, true, "Speakers (*)"), pcm(1, true, "Headset (*)"), pcm(1, false, "Headset (*)"), pcm(2, false, "DMIC (*)"),
            pcm(4, false, "EchoRef (*)"), pcm(5, true, "HDMI1 (*)"), pcm(6, true, "HDMI2 (*)"), pcm(7, true, "HDMI3 (*)"), pcm(8, false, "DMIC16k (*)"),
        ])
        let result = CardClassifier.classify(card)
        #expect(Array(SaidCards.ports(result).prefix(2)) == ["speaker builtInSpeaker dmix:CARD=sofcmlmax98390d,DEV=0", "mic builtInMic dsnoop:CARD=sofcmlmax98390d,DEV=2"])
        #expect(result.decisions.contains { $0.subject == "pcm 4c" && $0.outcome.hasPrefix("not a port") && $0.signal == "PCM 4c id \"EchoRef (*)\"" })
        let headset = JackRecord(
            syspath: card.syspath + "/input9/event9", cardSyspath: card.syspath, name: "sof-cml_max98390_da7219 Headset Jack",
            supported: [.headphoneInsert, .microphoneInsert], state: [.headphoneInsert, .microphoneInsert])
        let plugged = CardClassifier.classify(card, jacks: [headset]).ports
        #expect(plugged.first { $0.type == .headphones }?.alsa == "dmix:CARD=sofcmlmax98390d,DEV=1")
        #expect(plugged.first { $0.type == .headsetMic }?.alsa == "dsnoop:CARD=sofcmlmax98390d,DEV=1")
    }

    /// HP ProBook 440 G8 (sof-hda-dsp), alsa-project/alsa-ucm-conf issue #530: capture 0 is the
    /// HDA codec's (the headset mic), 6 the DMIC; playback 31 is the deep buffer of 0, no port.
    @Test func sofHDADSPTakesTheDMICAndNoDeepBufferPort() {
        func pcm(_ device: Int, _ playback: Bool, _ id: String, name: String = "") -> PCMDevice { SaidCards.pcm(device, playback, id, name: name) }
        let card = SaidCards.sof("sofhdadsp", platform: "skl_hda_dsp_generic", [
            pcm(0, true, "HDA Analog (*)"), pcm(0, false, "HDA Analog (*)"), pcm(3, true, "HDMI1 (*)"), pcm(6, false, "DMIC (*)"),
            pcm(7, false, "DMIC16kHz (*)"), pcm(31, true, "HDA Analog Deep Buffer (*)"),
        ])
        let result = CardClassifier.classify(card)
        #expect(SaidCards.ports(result) == ["speaker builtInSpeaker dmix:CARD=sofhdadsp,DEV=0", "mic builtInMic dsnoop:CARD=sofhdadsp,DEV=6", "hdmi-3 HDMI dmix:CARD=sofhdadsp,DEV=3"])
        #expect(result.decisions.contains { $0.subject == "pcm 31p" && $0.outcome.contains("deep-buffer") })
        let mic = Cards.jack(card, "sof-hda-dsp Mic", event: 7, supported: .microphoneInsert, state: .microphoneInsert)
        #expect(CardClassifier.classify(card, jacks: [mic]).ports.first { $0.type == .headsetMic }?.alsa == "dsnoop:CARD=sofhdadsp,DEV=0")
    }

    /// A Jasper Lake Chromebook (MAGPIE, sof-rt5682) with Linux's topology, thesofproject/sof
    /// issue #7162: PCM 0 is "Headphones", 1 "Headset": the headset codec's PCMs, so there is
    /// no speaker to put on them. With ChromeOS's topology (same issue) PCM 0 is "Speakers".
    @Test func aPCMNamedAsAJackIsNeverTheSpeaker() {
        func pcm(_ device: Int, _ playback: Bool, _ id: String, name: String = "") -> PCMDevice { SaidCards.pcm(device, playback, id, name: name) }
        let linux = SaidCards.sof("sofrt5682", platform: "jsl_rt5682_def", [
            pcm(0, true, "Headphones (*)"), pcm(1, true, "Headset (*)"), pcm(2, true, "HDMI1 (*)"), pcm(3, true, "HDMI2 (*)"),
        ])
        let result = CardClassifier.classify(linux)
        #expect(!result.ports.contains { $0.type == .builtInSpeaker })
        #expect(result.decisions.contains { $0.outcome == "no builtInSpeaker: every analog playback PCM is named as a jack" })
        let jack = SaidCards.control(linux, "Headphone Jack", numid: 12, on: true)
        #expect(CardClassifier.classify(linux, jacks: [jack]).ports.first { $0.type == .headphones }?.alsa == "dmix:CARD=sofrt5682,DEV=0")
        let chromeOS = SaidCards.sof("sofrt5682", platform: "jsl_rt5682_def", [
            pcm(0, true, "Speakers ()"), pcm(1, true, "Headset ()"), pcm(2, true, "HDMI1 ()"), pcm(3, true, "HDMI2 ()"), pcm(4, true, "HDMI3 (*)"),
        ])
        let named = CardClassifier.classify(chromeOS, jacks: [SaidCards.control(chromeOS, "Headphone Jack", numid: 12, on: true)])
        #expect(named.ports.first { $0.type == .builtInSpeaker }?.alsa == "dmix:CARD=sofrt5682,DEV=0")
        #expect(named.ports.first { $0.type == .headphones }?.alsa == "dmix:CARD=sofrt5682,DEV=1")
    }

    /// HDA pins decide, when read: a desktop's codec (ASUS M32CD, ALC887-VD: only jacks and a fixed
    /// S/PDIF out) has no speaker or mic; a laptop's (HP Pavilion 17-ar0xx, ALC295: a fixed speaker
    /// and a fixed digital mic, Ubuntu Forums "No Audio from machine", 2019-07-30) has both; a
    /// codec with only HDMI pins (the XPS's) says nothing of the analog side.
    @Test func hdaPinsDecideTheBuiltInSpeakerAndMic() throws {
        let text = try String(contentsOfFile: UmockdevTestbed.fixtures + "/desktop-asus-m32cd-alc887.codec0.txt", encoding: .utf8)
        var desktop = Cards.hdaLaptop()
        desktop.hdaPins = HDACodecProc.pins(text, codec: 0)
        let result = CardClassifier.classify(desktop)
        #expect(result.ports.isEmpty)
        #expect(result.decisions.contains { $0.outcome == "no builtInSpeaker: no HDA pin is a fixed speaker" && $0.signal.contains("codec#0 0x14 [Jack] Line Out") })
        #expect(result.decisions.contains { $0.outcome == "no builtInMic: no HDA pin is a fixed microphone" })
        var laptop = Cards.hdaLaptop()
        laptop.hdaPins = [
            HDAPin(codec: 0, node: 0x12, defaultConfig: 0xb7a6_01d0), HDAPin(codec: 0, node: 0x14, defaultConfig: 0x9017_0110),
            HDAPin(codec: 0, node: 0x16, defaultConfig: 0x4111_11f0),
        ]
        let pinned = CardClassifier.classify(laptop)
        #expect(pinned.ports.map(\.type) == [.builtInSpeaker, .builtInMic])
        #expect(pinned.decisions.contains { $0.signal.hasPrefix("HDA pin codec#0 0x14 [Fixed] Speaker") })
        #expect(pinned.decisions.contains { $0.signal.hasPrefix("HDA pin codec#0 0x12 [Fixed] Mic") })
        // QEMU's hda-micro (hw/audio/hda-codec-common.h; the real-kernel bench's guest prints its
        // codec#0): a Speaker pin and a Mic pin, jacks that cannot sense a plug (the kernel gives
        // them phantom jacks): a speaker and a mic that are always there.
        var qemu = Cards.hdaLaptop()
        qemu.hdaPins = [
            HDAPin(codec: 0, node: 3, defaultConfig: 0x0010_4010, capabilities: 0x10), HDAPin(codec: 0, node: 5, defaultConfig: 0x00a0_5020, capabilities: 0x20),
        ]
        #expect(CardClassifier.classify(qemu).ports.map(\.type) == [.builtInSpeaker, .builtInMic])
        // The same mic pin able to sense a plug (presence detect, as the M32CD's front mic) is a jack's.
        qemu.hdaPins[1].capabilities = 0x24
        #expect(CardClassifier.classify(qemu).ports.map(\.type) == [.builtInSpeaker])
        // A desktop's front-panel mic jack that cannot sense a plug (the corpus's Haswell ALC662:
        // Pincap 0x173c has Detect, Pin Default 0x02a19140 says no presence; "[Jack] Mic at Ext
        // Front"): a jack nobody may have plugged, not a built-in mic.
        qemu.hdaPins[1] = HDAPin(codec: 0, node: 0x19, defaultConfig: 0x02a1_9140, capabilities: 0x173c)
        #expect(CardClassifier.classify(qemu).ports.map(\.type) == [.builtInSpeaker])
        var soundwire = SaidCards.xps17()
        soundwire.hdaPins = [5, 6, 7].map { HDAPin(codec: 2, node: $0, defaultConfig: 0x1856_0010) }
        #expect(CardClassifier.classify(soundwire).ports.map(\.type).prefix(2) == [.builtInSpeaker, .builtInMic])
    }

    /// Boards: an analog output without jack detection and no Speaker name is headphones (the
    /// card says Headphones: the Raspberry Pi's bcm2835 card, RPi-Distro/raspi-config issue #197)
    /// or a line out (NanoPi NEO's "H3 Audio Codec", MichaIng/DietPi issue #3616), never a speaker.
    @Test func aBoardsUndetectedAnalogOutputIsHeadphonesOrLineOut() {
        let pi = SaidCards.board(
            "Headphones", node: "soc/soc:audio/bcm2835_audio", compatible: [], driver: "bcm2835_audio",
            [SaidCards.pcm(0, true, "bcm2835 Headphones", name: "bcm2835 Headphones")],
            info: ALSACardInfo(id: "Headphones", driver: "bcm2835_headpho", name: "bcm2835 Headphones", longName: "bcm2835 Headphones"))
        let piResult = CardClassifier.classify(pi)
        #expect(SaidCards.ports(piResult) == ["headphones headphones dmix:CARD=Headphones,DEV=0"])
        #expect(piResult.ports.first?.device == "platform-soc/soc:audio/bcm2835_audio/jack")
        #expect(piResult.availability.values.allSatisfy { $0 == .present })
        let neo = SaidCards.board(
            "Codec", node: "soc/1c22c00.codec", compatible: ["allwinner,sun8i-h3-codec"], driver: "sun4i-codec", [SaidCards.pcm(0, true, "CDC PCM Codec-0")],
            info: ALSACardInfo(id: "Codec", name: "H3 Audio Codec"))
        let neoResult = CardClassifier.classify(neo)
        #expect(SaidCards.ports(neoResult) == ["line-out lineOut dmix:CARD=Codec,DEV=0"])
        #expect(neoResult.decisions.first?.outcome == "board: no jack detection and no speaker named")
        // With a detected jack (the Librem 5 devkit's hp-det-gpio, its device tree) the codec is
        // a device's own: speaker and mic. A phone (AUDIOROUTE_RECEIVER=1) likewise.
        var devkit = SaidCards.board("Devkit", node: "sound", compatible: ["simple-audio-card"], driver: "asoc-simple-card", [
            SaidCards.pcm(0, true, ""), SaidCards.pcm(0, false, ""),
        ])
        devkit.pcms = [PCMDevice(device: 0, playback: true), PCMDevice(device: 0, playback: false)]
        let hpDet = Cards.jack(devkit, "Librem 5 Devkit Headphones", event: 2, supported: .headphoneInsert)
        // Its jack, unplugged, is listed as unavailable headphones: the card detects it.
        let withJack = CardClassifier.classify(devkit, jacks: [hpDet])
        #expect(withJack.ports.map { "\($0.type.rawValue) \($0.availability.rawValue)" } == [
            "builtInSpeaker available", "builtInMic available", "headphones unavailable",
        ])
        #expect(withJack.usablePorts.map(\.type) == [.builtInSpeaker, .builtInMic])
        #expect(CardClassifier.classify(devkit).ports.map(\.type) == [.lineOut, .lineIn])
        var phone = devkit
        phone.properties["AUDIOROUTE_RECEIVER"] = "1"
        #expect(CardClassifier.classify(phone).ports.map(\.type) == [.builtInSpeaker, .builtInReceiver, .builtInMic])
    }

    /// The older Raspberry Pi firmware card (Blokas' Pisound documentation's `aplay -l`): PCM 1
    /// "bcm2835 IEC958/HDMI" is HDMI by its name, PCM 0 the analog jack's line out.
    @Test func oneCardsHDMIPCMIsHDMIByItsName() {
        func pcm(_ device: Int, _ playback: Bool, _ id: String, name: String = "") -> PCMDevice { SaidCards.pcm(device, playback, id, name: name) }
        let card = SaidCards.board("ALSA", node: "soc/soc:audio", compatible: ["brcm,bcm2835-audio"], driver: "bcm2835_audio", [
            pcm(0, true, "bcm2835 ALSA", name: "bcm2835 ALSA"), pcm(1, true, "bcm2835 ALSA", name: "bcm2835 IEC958/HDMI"),
        ])
        let result = CardClassifier.classify(card)
        #expect(SaidCards.ports(result) == ["line-out lineOut dmix:CARD=ALSA,DEV=0", "hdmi-1 HDMI dmix:CARD=ALSA,DEV=1"])
        #expect(result.decisions.contains { $0.subject.hasSuffix("/hdmi-1") && $0.signal.hasPrefix("PCM 1p name \"bcm2835 IEC958/HDMI\"") })
    }

    /// HDMI on platform buses: an HDMI transmitter's DAI on the link (`1c22800.i2s-i2s-hifi
    /// i2s-hifi-0`, the NanoPi NEO's allwinner,hdmi card, DietPi issue #3616: hdmi-codec's DAI is
    /// `i2s-hifi`), Tegra's HDA controller (Jetson Nano, dusty-nv/jetson-inference issue #1095) by
    /// its driver, its compatible or HDA's numbering.
    @Test func platformHDMIByTransmitterLinkAndTegraHDA() {
        var hdmi = SaidCards.board("allwinnerhdmi", node: "sound", compatible: ["simple-audio-card"], driver: "asoc-simple-card", [
            SaidCards.pcm(0, true, "1c22800.i2s-i2s-hifi i2s-hifi-0")
        ])
        hdmi.attributes["id"] = "sound0"  // the transmitter's DAI alone must say it, not the id
        let hdmiResult = CardClassifier.classify(hdmi)
        #expect(SaidCards.ports(hdmiResult) == ["hdmi-0 HDMI dmix:CARD=sound0,DEV=0"])
        let tegra = SaidCards.board("tegrahda", node: "70030000.hda", compatible: ["nvidia,tegra210-hda", "nvidia,tegra30-hda"], driver: "tegra-hda", [
            PCMDevice(device: 3, playback: true)
        ])
        #expect(SaidCards.ports(CardClassifier.classify(tegra)) == ["hdmi-3 HDMI dmix:CARD=tegrahda,DEV=3"])
        #expect(CardClassifier.classify(tegra).decisions.first?.signal.hasPrefix("driver tegra-hda") == true)
        var byCompatible = tegra
        byCompatible.parent.driver = nil
        #expect(CardClassifier.classify(byCompatible).decisions.first?.signal == "OF_COMPATIBLE \"nvidia,tegra210-hda\": Tegra's HDA controller carries HDMI/DP only")
        #expect(CardClassifier.hdaNumberingDriver(tegra) == "tegra-hda")
    }

    /// An I2S link with no codec (`simple-card_codec_link snd-soc-dummy-dai-0`: ASoC names a
    /// non-DPCM PCM "<stream> <codec DAI>-<n>", and the dummy codec's DAI is snd-soc-dummy-dai,
    /// sound/soc/soc-utils.c): what is wired to the header is unknown, so line out and line in.
    @Test func aLinkWithNoCodecIsLineOutAndLineIn() {
        let id = "simple-card_codec_link snd-soc-dummy-dai-0"
        let card = SaidCards.board("sndrpii2s", node: "soc/soc:sound", compatible: ["simple-audio-card"], driver: "asoc-simple-card", [
            SaidCards.pcm(0, true, id, name: id), SaidCards.pcm(0, false, id, name: id),
        ])
        let result = CardClassifier.classify(card)
        #expect(SaidCards.ports(result) == ["line-out lineOut dmix:CARD=sndrpii2s,DEV=0", "line-in lineIn dsnoop:CARD=sndrpii2s,DEV=0"])
        #expect(PCMNames.role(of: id, playback: true) == .noCodec)
        // On a laptop's card (with a jack) too: never a speaker or a mic.
        var laptop = card
        laptop.syspath = "/sys/devices/pci0000:00/0000:00:1f.3/ssp/sound/card0"
        laptop.properties["ID_PATH"] = "pci-0000:00:1f.3-platform-ssp"
        let jack = Cards.jack(laptop, "Headphone", event: 4, supported: .headphoneInsert)
        let laptopResult = CardClassifier.classify(laptop, jacks: [jack])
        #expect(laptopResult.usablePorts.map(\.type) == [.lineOut, .lineIn])
        // Its headphone jack, unplugged, is the one other port, unavailable.
        #expect(laptopResult.ports.map { "\($0.type.rawValue) \($0.availability.rawValue)" } == ["lineOut available", "lineIn available", "headphones unavailable"])
    }

    /// Le Potato (LIBRETECH-CC, alsa-devel 2021-12-26): one front end feeds the HDMI encoder
    /// (hdmi-codec's ELD control sits on the internal PCM 2) and the line out.
    @Test func oneFrontEndForHDMIAndLineOut() {
        var card = SaidCards.board("LIBRETECHCC", node: "sound", compatible: ["amlogic,gx-sound-card"], driver: "gx-sound-card", [
            SaidCards.pcm(0, true, "fe.dai-link-0 (*)")
        ])
        #expect(SaidCards.ports(CardClassifier.classify(card)) == ["line-out lineOut dmix:CARD=LIBRETECHCC,DEV=0"])
        card.eldDevices = [2]
        let result = CardClassifier.classify(card)
        #expect(SaidCards.ports(result) == ["line-out lineOut dmix:CARD=LIBRETECHCC,DEV=0", "hdmi-0 HDMI dmix:CARD=LIBRETECHCC,DEV=0"])
        #expect(result.availability["platform-sound/hdmi-0"] == .unknown)
        // An ELD on a visible PCM marks that PCM (HDA's HDMI: the ASUS M32CD's PCM 3).
        var hda = Cards.hdaLaptop()
        hda.parent.driver = "sof_sdw"
        hda.pcms = [PCMDevice(device: 0, playback: true), PCMDevice(device: 5, playback: true)]
        hda.eldDevices = [5]
        #expect(CardClassifier.classify(hda).ports.map(\.type) == [.builtInSpeaker, .HDMI])
    }

    /// The words each role takes, from the listings above.
    @Test func pcmNamesTakeTheirRoles() {
        let table: [(String, Bool, PCMRole?)] = [
            ("Jack Out (*)", true, .jack), ("Jack In (*)", false, .jack), ("Speaker (*)", true, .speaker), ("SDW1-speakers (*)", true, .speaker),
            ("smart373-spk (*)", true, .speaker), ("Microphone (*)", false, .builtInMic), ("DMIC16kHz (*)", false, .builtInMic),
            ("DMIC Raw", false, .builtInMic), ("Headset (*)", false, .jack), ("Headphone (*)", true, .jack), ("bcm2835 Headphones", true, .jack),
            ("HDMI 0", true, .display), ("HDMI1 (*)", true, .display), ("DP1 (*)", true, .display), ("MAI PCM i2s-hifi-0", true, .display),
            ("Deepbuffer Jack Out (*)", true, .deepBuffer), ("HDA Analog Deep Buffer (*)", true, .deepBuffer), ("EchoRef (*)", false, .echoReference),
            ("ALC887-VD Digital", true, .digital), ("HDA Analog (*)", true, nil), ("ALC289 Analog", true, nil), ("USB Audio", true, nil),
            ("fe.dai-link-0 (*)", true, nil), ("Speaker Sense", false, nil),
            // The Steam Deck's amplifier link; an S/PDIF transmitter's link (i.MX 8M Nano EVK's
            // imx-spdif), whose dummy codec does not make it a header's line out.
            ("CS35L41 Stereo Playback multicodec-1", true, .speaker), ("CS35L41 Stereo Playback multicodec-1", false, nil),
            ("S/PDIF PCM snd-soc-dummy-dai-0", true, .digital), ("simple-card_codec_link snd-soc-dummy-dai-0", true, .noCodec),
        ]
        for (text, playback, role) in table {
            #expect(PCMNames.role(of: text, playback: playback) == role, "\(text)")
        }
    }

    /// The Steam Deck (Valve Jupiter, alsa-devel "Acp5x probing regression", 2024-02-13): the
    /// acp5x card's PCM 0 is the NAU8821 codec (headphone jack, headset and internal mics), PCM 1
    /// the link to the two CS35L41 speaker amplifiers (sound/soc/amd/vangogh/acp5x-mach.c).
    @Test func theSteamDecksSpeakerIsItsAmplifiersPCM() {
        let card = SaidCards.sof("acp5x", platform: "acp5x_mach.0", [
            SaidCards.pcm(0, true, "Playback/Capture nau8821-hifi-0"), SaidCards.pcm(0, false, "Playback/Capture nau8821-hifi-0"),
            SaidCards.pcm(1, true, "CS35L41 Stereo Playback multicodec-1"),
        ])
        let result = CardClassifier.classify(card)
        #expect(SaidCards.ports(result) == ["speaker builtInSpeaker dmix:CARD=acp5x,DEV=1", "mic builtInMic dsnoop:CARD=acp5x,DEV=0"])
        #expect(result.decisions.first { $0.subject.hasSuffix("/speaker") }?.signal == "PCM 1p id \"CS35L41 Stereo Playback multicodec-1\"")
        // Its headset jack, plugged: the headphones take the codec's PCM 0, not the amplifiers'.
        let jack = SaidCards.control(card, "Headphone Jack", numid: 12, on: true)
        #expect(CardClassifier.classify(card, jacks: [jack]).ports.first { $0.type == .headphones }?.alsa == "dmix:CARD=acp5x,DEV=0")
    }

    /// A card whose bus udev does not give (an alsa-info report without its sysfs section) is not
    /// a board on no evidence: a board is a platform device or has a device-tree compatible, or
    /// names its SoC's audio; the card's own words may also give its bus.
    @Test func aCardOfUnknownBusIsABoardOnlyByEvidence() {
        func card(_ id: String, name: String = "", driver: String = "", _ pcms: [PCMDevice]) -> CardRecord {
            CardRecord(
                syspath: "/sys/class/sound/card0", attributes: ["id": id, "number": "0"], pcms: pcms,
                info: ALSACardInfo(id: id, driver: driver, name: name, longName: ""))
        }
        // HP Chromebook 11 G5 (alsa-devel, 2022-12-23): SOF's rt5650 card, nothing says where it is.
        let setzer = card("rt5650", name: "sof-bytcht rt5650", [SaidCards.pcm(0, true, "PCM (*)"), SaidCards.pcm(1, true, "PCM Deep Buffer (*)")])
        #expect(CardClassifier.boardSignal(setzer, bus: nil) == nil)
        #expect(SaidCards.ports(CardClassifier.classify(setzer)) == ["speaker builtInSpeaker dmix:CARD=rt5650,DEV=0"])
        // Positive evidence: a platform parent, a compatible.
        var platform = setzer
        platform.parent.subsystem = "platform"
        #expect(CardClassifier.boardSignal(platform, bus: "platform") == "board card: platform device with no PCI or USB parent")
        var compatible = setzer
        compatible.parent.ofCompatible = ["simple-audio-card"]
        #expect(CardClassifier.boardSignal(compatible, bus: nil) == "board card: OF_COMPATIBLE \"simple-audio-card\"")
        // A device-tree device by its unit address (PINE A64, DietPi issue 4805; Rock64).
        let pine = card("sun50ia64audio", name: "sun50i-a64-audio", [
            SaidCards.pcm(0, true, "1c22c00.dai-sun8i-codec-aif1 sun8i-codec-aif1-0"), SaidCards.pcm(0, false, "1c22c00.dai-sun8i-codec-aif1 sun8i-codec-aif1-0"),
        ])
        #expect(CardClassifier.boardSignal(pine, bus: nil)?.hasSuffix("the device-tree device 1c22c00") == true)
        #expect(SaidCards.ports(CardClassifier.classify(pine)) == [
            "line-out lineOut dmix:CARD=sun50ia64audio,DEV=0", "line-in lineIn dsnoop:CARD=sun50ia64audio,DEV=0",
        ])
        // The Raspberry Pi's firmware audio (bcm2835 ALSA) and a HAT on its I2S (bcm2835-i2s).
        let pi = card("ALSA", name: "bcm2835 ALSA", [SaidCards.pcm(0, true, "bcm2835 ALSA", name: "bcm2835 ALSA")])
        #expect(CardClassifier.boardSignal(pi, bus: nil) == "board card: card name \"bcm2835 ALSA\": the Raspberry Pi SoC's audio (bcm2835)")
        #expect(SaidCards.ports(CardClassifier.classify(pi)) == ["line-out lineOut dmix:CARD=ALSA,DEV=0"])
        let hat = card("wm8960soundcard", name: "wm8960-soundcard", [SaidCards.pcm(0, true, "bcm2835-i2s-wm8960-hifi wm8960-hifi-0")])
        #expect(CardClassifier.boardSignal(hat, bus: nil)?.contains("bcm2835") == true)
        // "fe" is hex, but no unit address: a meson front end is evidence of its own.
        let meson = card("ODROIDN2", name: "ODROID-N2", [SaidCards.pcm(0, true, "fe.dai-link-0 (*)")])
        #expect(CardClassifier.boardSignal(meson, bus: nil) == "board card: PCM 0p id \"fe.dai-link-0 (*)\": an Amlogic card's front end")
        // Its words give the bus: HDA's card names and driver, snd-usb-audio's PCM id.
        let macbook = card("NVidia", name: "HDA NVidia", [SaidCards.pcm(0, true, "CS4206 Analog")])
        #expect(CardClassifier.busName(macbook) == "pci")
        #expect(CardClassifier.busName(card("PCH", driver: "HDA-Intel", [SaidCards.pcm(0, true, "ALC891 Analog")])) == "pci")
        let g35 = card("Headset", name: "Logitech G35 Headset", [SaidCards.pcm(0, true, "USB Audio", name: "USB Audio"), SaidCards.pcm(0, false, "USB Audio")])
        #expect(CardClassifier.busName(g35) == "usb")
        let usb = CardClassifier.classify(g35)
        #expect(SaidCards.ports(usb) == ["output usbAudio dmix:CARD=Headset,DEV=0", "input usbAudio dsnoop:CARD=Headset,DEV=0"])
        #expect(usb.decisions.first?.signal == "PCM 0p id \"USB Audio\" (snd-usb-audio's PCM name)")
        // Nothing at all: no bus, no board.
        #expect(CardClassifier.busName(setzer) == nil)
    }

    /// Amlogic's cards (alsa-lib pull request 308, Christian Hewitt: the AIU "supports HDMI and
    /// hinted S/PDIF output", the AXG card "HDMI only output", its three front ends routed inside
    /// the SoC): with several playback front ends, the first is HDMI, the others no port.
    @Test func anAmlogicCardsFirstFrontEndIsItsHDMIOutput() {
        let odroid = CardRecord(
            syspath: "/sys/class/sound/card0", attributes: ["id": "ODROIDN2", "number": "0"],
            pcms: (0...2).map { SaidCards.pcm($0, true, "fe.dai-link-\($0) (*)") })
        let result = CardClassifier.classify(odroid)
        #expect(SaidCards.ports(result) == ["hdmi-0 HDMI dmix:CARD=ODROIDN2,DEV=0"])
        #expect(result.ports.first?.availability == .unknown)
        #expect(result.decisions.filter { $0.outcome.hasPrefix("not a port: an Amlogic front end") }.map(\.subject) == ["pcm 1p", "pcm 2p"])
        // The WeTek Play 2 (GXBB, AIU): I2S front end to HDMI, S/PDIF front end; a device tree says so too.
        let wetek = SaidCards.board("WETEKPLAY2", node: "sound", compatible: ["amlogic,gx-sound-card"], driver: "gx-sound-card", [
            SaidCards.pcm(0, true, "fe.dai-link-0 (*)"), SaidCards.pcm(1, true, "fe.dai-link-1 (*)"),
        ])
        #expect(SaidCards.ports(CardClassifier.classify(wetek)) == ["hdmi-0 HDMI dmix:CARD=WETEKPLAY2,DEV=0"])
        // One front end (the Le Potato's, whose ELD says HDMI is behind it) is left to the other rules.
        let single = SaidCards.board("GX", node: "sound", compatible: ["amlogic,gx-sound-card"], driver: "gx-sound-card", [SaidCards.pcm(0, true, "fe.dai-link-0 (*)")])
        #expect(SaidCards.ports(CardClassifier.classify(single)) == ["line-out lineOut dmix:CARD=GX,DEV=0"])
    }

    /// Codec files: node and pin lines in order, the file's own address, garbage skipped, at most
    /// 256 pins.
    @Test func codecFilesParseBounded() {
        let text = """
            Codec: Realtek ALC295
            Address: 3
            Node 0x14 [Pin Complex] wcaps 0x40058d: Stereo Amp-Out
              Pin Default 0x90170110: [Fixed] Speaker at Int N/A
            Node 0x15 [Audio Mixer] wcaps 0x20010b: Stereo
              Pin Default 0x12345678: not a pin's
            Node 0x19 [Pin Complex] wcaps 0x40048b: Stereo Amp-In
              Pin Default 0xzz: garbage
            Node 0x21 [Pin Complex] wcaps 0x40058d: Stereo Amp-Out
              Pin Default 0x0421101f: [Jack] HP Out at Ext Front
            """
        let pins = HDACodecProc.pins(text, codec: 0)
        #expect(pins == [HDAPin(codec: 3, node: 0x14, defaultConfig: 0x9017_0110), HDAPin(codec: 3, node: 0x21, defaultConfig: 0x0421_101f)])
        #expect(pins.map(\.label) == ["codec#3 0x14 [Fixed] Speaker", "codec#3 0x21 [Jack] HP Out"])
        let many = (0..<1000).map { "Node 0x\(String($0 % 256, radix: 16)) [Pin Complex]\n  Pin Default 0x90170110: x" }.joined(separator: "\n")
        #expect(HDACodecProc.pins(many, codec: 0).count == HDACodecProc.maxPins)
    }
}
