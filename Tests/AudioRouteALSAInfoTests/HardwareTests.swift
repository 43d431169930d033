// A report's cards as the watcher's records: uid base, bus, parent, jacks from controls.
@testable import AudioRouteALSAInfo
import AudioRouteCore
import AudioRouteSystem
@testable import AudioRouteWatchers
import Testing

@Suite struct HardwareTests {
    func cards(_ sections: [(String, String)]) throws -> [ALSAInfoCardHardware] {
        try ALSAInfoReport.parse(report(sections)).hardware()
    }

    @Test func theCardRecordCarriesWhatTheControlDeviceSays() throws {
        let card = try #require(try cards([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Amixer output", sofAmixer)]).first)
        #expect(card.record.syspath == "/sys/class/sound/card0" && card.record.sysname == "card0")
        #expect(card.record.attributes == ["id": "sofsoundwire", "number": "0"])
        #expect(
            card.record.info
                == ALSACardInfo(
                    id: "sofsoundwire", driver: "sof-soundwire", name: "sof-soundwire", longName: "Intel Soundwire SOF", mixerName: "Intel Kabylake HDMI",
                    components: "HDA:8086280b,80860101,00100000 cfg-spk:4 cfg-amp:2 hs:rt711 spk:rt1308 mic:rt715"))
        #expect(card.record.pcms.map { "\($0.device)\($0.playback ? "p" : "c") \($0.id ?? "")" } == ["0p Jack Out (*)", "1c Jack In (*)", "2p Speaker (*)", "4c Microphone (*)", "5p HDMI1 (*)"])
        #expect(card.record.hasControl)
    }

    @Test func udevsByPathNameIsTheUidBase() throws {
        let nodes = "/dev/snd/by-path:\nlrwxrwxrwx 1 root root 12 Jan 1 10:00 pci-0000:00:1f.3-platform-sof_sdw -> ../controlC0\nlrwxrwxrwx 1 root root 12 Jan 1 10:00 pci-0000:00:14.0-usb-0:2:1.0 -> ../controlC1"
        let list = try cards([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("ALSA Device nodes", nodes)])
        #expect(list[0].record.properties == ["ID_PATH": "pci-0000:00:1f.3-platform-sof_sdw", "ID_BUS": "pci"])
        #expect(list[1].record.properties == ["ID_PATH": "pci-0000:00:14.0-usb-0:2:1.0", "ID_BUS": "usb"])
        let result = list[0].classify()
        #expect(result.ports.first?.uid.hasPrefix("pci-0000:00:1f.3-platform-sof_sdw/") == true)
    }

    @Test func aPCIParentGivesPathIDAndTheDatabaseModel() throws {
        let sysfs = "!!Card: /sys/class/sound/card0\nDriver: /sys/bus/pci/drivers/snd_hda_intel\nTree:\n\t/sys/class/sound/card0\n\t|-- device -> ../../../0000:01:00.1\n"
        let pci = "01:00.1 Audio device [0403]: NVIDIA Corporation GF119 HDMI Audio Controller [10de:0e08] (rev a1)\n"
        let cardsText = " 0 [NVidia         ]: HDA-Intel - HDA NVidia\n                      HDA NVidia at 0xfe87c000 irq 19"
        let pcms = "APLAY\n\n**** List of PLAYBACK Hardware Devices ****\ncard 0: NVidia [HDA NVidia], device 3: HDMI 0 [HDMI 0]\n\nARECORD\n\n**** List of CAPTURE Hardware Devices ****\n"
        let card = try #require(try cards([("Soundcards recognised by ALSA", cardsText), ("Aplay/Arecord output", pcms), ("Sysfs card info", sysfs), ("PCI Soundcards installed in the system", pci)]).first)
        #expect(card.record.properties == ["ID_PATH": "pci-0000:01:00.1", "ID_BUS": "pci", "ID_MODEL_FROM_DATABASE": "GF119 HDMI Audio Controller"])
        #expect(card.record.parent == CardParent(subsystem: "pci", driver: "snd_hda_intel", pciClass: "0x040300"))
    }

    @Test func withoutSysfsOrByPathTheUidIsTheCardIDsAndTheBusTheDriversOwn() throws {
        let list = try cards([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs)])
        #expect(list[0].record.properties.isEmpty)
        #expect(list[1].record.properties == ["ID_BUS": "usb"])
        #expect(list[1].classify().ports.map(\.uid) == ["card-USB/output", "card-USB/input"])
        // The parent too: USB-Audio is snd-usb-audio's card driver, on a USB interface; sof-soundwire
        // names no single bus.
        #expect(list[1].record.parent == CardParent(subsystem: "usb", driver: "snd-usb-audio"))
        #expect(list[0].record.parent == CardParent())
        #expect(list[1].provenance.map { "\($0.field) <- \($0.source)" } == [
            "parent bus usb, driver snd-usb-audio <- card driver USB-Audio (no sysfs section in the report)",
            "ID_BUS usb <- card driver USB-Audio (no sysfs or by-path in the report)",
        ])
        // HDA-Intel: snd_hda_intel on PCI, whose parent driver numbers HDMI PCMs 3, 7, 8...
        let hda = " 0 [PCH            ]: HDA-Intel - HDA Intel PCH\n                      HDA Intel PCH at 0xf7f10000 irq 32"
        let hdaPCMs = "APLAY\n\n**** List of PLAYBACK Hardware Devices ****\ncard 0: PCH [HDA Intel PCH], device 3: HDMI 0 [HDMI 0]\n\nARECORD\n\n**** List of CAPTURE Hardware Devices ****\n"
        let pch = try #require(try cards([("Soundcards recognised by ALSA", hda), ("Aplay/Arecord output", hdaPCMs)]).first)
        #expect(pch.record.parent == CardParent(subsystem: "pci", driver: "snd_hda_intel"))
        #expect(pch.record.properties == ["ID_BUS": "pci"])
        #expect(CardClassifier.hdaNumberingDriver(pch.record) == "snd_hda_intel")
    }

    /// An `aplay -l` listing alone (a report's framing reconstructed around it): each card's name is
    /// the one aplay prints beside its id, which says what the card is where nothing else does.
    @Test func anAplayListingAloneGivesEachCardTheNameAplayPrints() throws {
        let pcms = """
            APLAY

            **** List of PLAYBACK Hardware Devices ****
            card 0: NVidia [HDA NVidia], device 0: CS4206 Analog [CS4206 Analog]
            card 1: Headset [Logitech G35 Headset], device 0: USB Audio [USB Audio]

            ARECORD

            **** List of CAPTURE Hardware Devices ****
            """
        let list = try cards([("Aplay/Arecord output", pcms)])
        #expect(list.map { $0.record.info?.name } == ["HDA NVidia", "Logitech G35 Headset"])
        #expect(list.map { $0.record.info?.driver } == ["", ""])
        #expect(list[0].provenance.map(\.source) == ["Aplay/Arecord output card line (no cards section in the report)"])
        // No bus is rebuilt from it: the classifier reads the names (CardClassifier.saidBus).
        #expect(list.allSatisfy { $0.record.properties.isEmpty && $0.record.parent == CardParent() })
        #expect(list.map { CardClassifier.busName($0.record) } == ["pci", "usb"])
        #expect(list[1].classify().ports.map(\.type) == [.usbAudio])
    }

    @Test func jacksAreTheCardInterfaceBooleanJackControlsWithTheirValues() throws {
        let card = try #require(try cards([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Alsactl output", sofAlsactl)]).first)
        // Not the phantom jack, not the mixer switch; the headset mic's value is on.
        #expect(card.jacks.map(\.name) == ["Headphone Jack", "Headset Mic Jack", "HDMI/DP,pcm=5 Jack"])
        #expect(card.jacks.map(\.source) == [.control, .control, .control])
        #expect(card.jacks.map(\.state) == [[], .microphoneInsert, []])
        #expect(card.jacks[0].syspath == "/sys/class/sound/card0/controlC0#1")
        let result = card.classify()
        #expect(result.usablePorts.contains { $0.type == .headsetMic && $0.alsa == "dsnoop:CARD=sofsoundwire,DEV=1" })
        // The headphone and HDMI jacks are readable and off: their ports are listed, unavailable.
        #expect(result.ports.filter { $0.type == .headphones }.map(\.availability) == [.unavailable])
        #expect(result.ports.filter { $0.type == .HDMI }.map { "\($0.uid) \($0.availability.rawValue)" } == ["card-sofsoundwire/hdmi-5 unavailable"])
        #expect(!result.usablePorts.contains { $0.type == .headphones || $0.type == .HDMI })
        #expect(card.controls.count == 8 && card.hasControls)
        // The phantom jack is kept apart: it names a pin that is always there.
        #expect(card.record.phantomJacks == ["Speaker Phantom Jack"])
    }

    @Test func aWritableDriverControlIsNoJack() throws {
        let writable = sofAlsactl.replacing("\t\t\taccess read\n\t\t\ttype BOOLEAN\n\t\t\tcount 1\n\t\t}\n\t}\n\tcontrol.2", with: "\t\t\taccess 'read write'\n\t\t\ttype BOOLEAN\n\t\t\tcount 1\n\t\t}\n\t}\n\tcontrol.2")
        let card = try #require(try cards([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Alsactl output", writable)]).first)
        #expect(!card.jacks.contains { $0.name == "Headphone Jack" })
    }

    @Test func aSecondCodecIsPlacedByTheComponentsWordAlone() throws {
        // The ThinkPad report of four cards: the PCH card's mixer name is the ALC257's; the
        // Kabylake HDMI codec (address 2, pins 0x05-0x07) is named only by its Components.
        let cards = try ALSAInfoReport.parse(Corpus.report("laptop-lenovo-thinkpad-alc257-virmidi-boss-ms3")).hardware()
        let pch = try #require(cards.first { $0.record.attributes["id"] == "PCH" })
        #expect(pch.record.hdaPins.filter { $0.codec == 2 }.map { [$0.node, Int($0.defaultConfig)] } == [5, 6, 7].map { [$0, 0x1856_0010] })
        #expect(pch.record.hdaPins.contains { $0.codec == 0 && $0.defaultConfig == 0x9017_0110 })
        #expect(cards.filter { $0.record.attributes["id"] != "PCH" }.allSatisfy { $0.record.hdaPins.isEmpty })
    }
}
