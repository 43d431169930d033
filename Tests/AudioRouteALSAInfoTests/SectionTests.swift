// Each section's parser on excerpts of real reports (sources in Tests/Fixtures/alsa-info/README.md).
@testable import AudioRouteALSAInfo
import AudioRouteWatchers
import Testing

/// A report of the given sections, as alsa-info.sh prints them.
func report(_ sections: [(String, String)], banner: String = "upload=true&script=true&cardinfo=\n!!################################\n!!ALSA Information Script v 0.5.3\n!!################################\n") -> String {
    var text = banner + "\n"
    for (title, body) in sections {
        text += "!!\(title)\n!!\(String(repeating: "-", count: title.count))\n\n\(body)\n\n"
    }
    return text
}

/// Cards and PCMs of a Dell laptop with a SoundWire codec, a Razer USB headset and a WD19 dock
/// (alsa-project/alsa-utils issue 100).
let sofCards = """
     0 [sofsoundwire   ]: sof-soundwire - sof-soundwire
                          Intel Soundwire SOF
     1 [USB            ]: USB-Audio - Razer Kraken X USB
                          Razer Kraken X USB at usb-0000:00:14.0-2, full speed
    """
let sofPCMs = """
    APLAY

    **** List of PLAYBACK Hardware Devices ****
    card 0: sofsoundwire [sof-soundwire], device 0: Jack Out (*) []
      Subdevices: 1/1
      Subdevice #0: subdevice #0
    card 0: sofsoundwire [sof-soundwire], device 2: Speaker (*) []
      Subdevices: 1/1
      Subdevice #0: subdevice #0
    card 0: sofsoundwire [sof-soundwire], device 5: HDMI1 (*) [HDMI 1]
      Subdevices: 1/1
      Subdevice #0: subdevice #0
    card 1: USB [Razer Kraken X USB], device 0: USB Audio [USB Audio]
      Subdevices: 1/1
      Subdevice #0: subdevice #0

    ARECORD

    **** List of CAPTURE Hardware Devices ****
    card 0: sofsoundwire [sof-soundwire], device 1: Jack In (*) []
      Subdevices: 1/1
      Subdevice #0: subdevice #0
    card 0: sofsoundwire [sof-soundwire], device 4: Microphone (*) []
      Subdevices: 1/1
      Subdevice #0: subdevice #0
    card 1: USB [Razer Kraken X USB], device 0: USB Audio [USB Audio]
      Subdevices: 0/1
      Subdevice #0: subdevice #0
    """
let sofAmixer = """
    !!-------Mixer controls for card sofsoundwire

    Card sysdefault:0 'sofsoundwire'/'Intel Soundwire SOF'
      Mixer name\t: 'Intel Kabylake HDMI'
      Components\t: 'HDA:8086280b,80860101,00100000 cfg-spk:4 cfg-amp:2 hs:rt711 spk:rt1308 mic:rt715'
      Controls      : 73
      Simple ctrls  : 43
    Simple mixer control 'Headphone',0
      Capabilities: pswitch pswitch-joined
      Playback channels: Mono
      Mono: Playback [off]
    Simple mixer control 'IEC958',1
      Capabilities: pswitch pswitch-joined

    """
let sofAlsactl = """
    --startcollapse--
    state.sofsoundwire {
    \tcontrol.1 {
    \t\tiface CARD
    \t\tname 'Headphone Jack'
    \t\tvalue false
    \t\tcomment {
    \t\t\taccess read
    \t\t\ttype BOOLEAN
    \t\t\tcount 1
    \t\t}
    \t}
    \tcontrol.2 {
    \t\tiface CARD
    \t\tname 'Headset Mic Jack'
    \t\tvalue true
    \t\tcomment {
    \t\t\taccess read
    \t\t\ttype BOOLEAN
    \t\t\tcount 1
    \t\t}
    \t}
    \tcontrol.3 {
    \t\tiface MIXER
    \t\tname 'Speaker Switch'
    \t\tvalue true
    \t\tcomment {
    \t\t\taccess 'read write'
    \t\t\ttype BOOLEAN
    \t\t\tcount 1
    \t\t}
    \t}
    \tcontrol.4 {
    \t\tiface MIXER
    \t\tname 'rt711 FU0F Capture Volume'
    \t\tvalue.0 63
    \t\tvalue.1 63
    \t\tcomment {
    \t\t\taccess 'read write'
    \t\t\ttype INTEGER
    \t\t\tcount 2
    \t\t\trange '0 - 63 (step 1)'
    \t\t\tdbmin -1725
    \t\t\tdbmax 3000
    \t\t}
    \t}
    \tcontrol.5 {
    \t\tiface MIXER
    \t\tname 'PGA5.0 5 Master Capture Route'
    \t\tindex 1
    \t\tvalue 'Line In'
    \t\tcomment {
    \t\t\taccess 'read write'
    \t\t\ttype ENUMERATED
    \t\t\tcount 1
    \t\t\titem.0 Mic
    \t\t\titem.1 'Line In'
    \t\t}
    \t}
    \tcontrol.6 {
    \t\tiface PCM
    \t\tdevice 5
    \t\tname ELD
    \t\tvalue ''
    \t\tcomment {
    \t\t\taccess 'read volatile'
    \t\t\ttype BYTES
    \t\t\tcount 0
    \t\t}
    \t}
    \tcontrol.7 {
    \t\tiface CARD
    \t\tname 'HDMI/DP,pcm=5 Jack'
    \t\tvalue false
    \t\tcomment {
    \t\t\taccess read
    \t\t\ttype BOOLEAN
    \t\t\tcount 1
    \t\t}
    \t}
    \tcontrol.8 {
    \t\tiface CARD
    \t\tname 'Speaker Phantom Jack'
    \t\tvalue true
    \t\tcomment {
    \t\t\taccess read
    \t\t\ttype BOOLEAN
    \t\t\tcount 1
    \t\t}
    \t}
    }
    --endcollapse--
    """

@Suite struct SectionTests {
    @Test func cardsGiveNumberIDDriverNameAndLongName() throws {
        let parsed = try ALSAInfoReport.parse(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs)]))
        #expect(parsed.scriptVersion == "0.5.3")
        #expect(parsed.cards.count == 2)
        #expect(parsed.cards[0] == ALSAInfoCard(number: 0, id: "sofsoundwire", driver: "sof-soundwire", name: "sof-soundwire", longName: "Intel Soundwire SOF"))
        #expect(parsed.cards[1].id == "USB" && parsed.cards[1].driver == "USB-Audio" && parsed.cards[1].name == "Razer Kraken X USB")
        #expect(parsed.cards[1].longName == "Razer Kraken X USB at usb-0000:00:14.0-2, full speed")
    }

    @Test func aplayAndArecordGivePCMIdsNamesAndDirections() throws {
        let parsed = try ALSAInfoReport.parse(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs)]))
        let playback = parsed.pcms.filter(\.playback).map { "\($0.card):\($0.device) \($0.id)|\($0.name)" }
        let capture = parsed.pcms.filter { !$0.playback }.map { "\($0.card):\($0.device) \($0.id)|\($0.name)" }
        #expect(playback == ["0:0 Jack Out (*)|", "0:2 Speaker (*)|", "0:5 HDMI1 (*)|HDMI 1", "1:0 USB Audio|USB Audio"])
        #expect(capture == ["0:1 Jack In (*)|", "0:4 Microphone (*)|", "1:0 USB Audio|USB Audio"])
    }

    @Test func aPCMNameWithBracketsIsTheLastBracketedGroup() {
        let pcm = PCMSection.parseLine("card 2: Dock [WD19 Dock], device 1: USB Audio [USB Audio #1]")
        #expect(pcm?.card == 2 && pcm?.cardID == "Dock" && pcm?.device == 1 && pcm?.id == "USB Audio" && pcm?.name == "USB Audio #1")
        let nested = PCMSection.parseLine("card 0: vc4hdmi0 [vc4-hdmi-0], device 0: MAI PCM i2s-hifi-0 [MAI PCM i2s-hifi-0 [x]]")
        #expect(nested?.id == "MAI PCM i2s-hifi-0" && nested?.name == "MAI PCM i2s-hifi-0 [x]")
        let bracketedID = PCMSection.parseLine("card 1: Dock [WD19 Dock], device 0: USB Audio [A] [USB Audio]")
        #expect(bracketedID?.id == "USB Audio [A]" && bracketedID?.name == "USB Audio")
    }

    @Test func amixerInfoGivesMixerNameComponentsAndControlCount() throws {
        let parsed = try ALSAInfoReport.parse(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Amixer output", sofAmixer)]))
        let mixer = try #require(parsed.mixers.first)
        #expect(mixer.cardID == "sofsoundwire")
        #expect(mixer.longName == "Intel Soundwire SOF")
        #expect(mixer.mixerName == "Intel Kabylake HDMI")
        #expect(mixer.components == "HDA:8086280b,80860101,00100000 cfg-spk:4 cfg-amp:2 hs:rt711 spk:rt1308 mic:rt715")
        #expect(mixer.controlCount == 73)
        #expect(mixer.simpleControls == ["Headphone", "IEC958,1"])
    }

    @Test func alsactlGivesEveryControlWithItsTypeRangeItemsAndValues() throws {
        let parsed = try ALSAInfoReport.parse(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Alsactl output", sofAlsactl)]))
        let controls = try #require(parsed.controls["sofsoundwire"])
        #expect(controls.map(\.numid) == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(controls[0] == ALSAInfoControl(numid: 1, iface: "CARD", name: "Headphone Jack", type: "BOOLEAN", access: ["read"], values: ["false"]))
        #expect(controls[3].min == 0 && controls[3].max == 63 && controls[3].step == 1 && controls[3].count == 2 && controls[3].values == ["63", "63"])
        #expect(controls[4].index == 1 && controls[4].items == ["Mic", "Line In"] && controls[4].values == ["Line In"])
        #expect(controls[5].iface == "PCM" && controls[5].device == 5 && controls[5].type == "BYTES" && controls[5].access == ["read", "volatile"])
        #expect(parsed.warnings.isEmpty)
    }

    @Test func sysfsCardInfoGivesTheParentsBusDriverAndAddress() throws {
        let sysfs = """
            !!Card: /sys/class/sound/card0
            Driver: /sys/bus/pci/drivers/snd_hda_intel
            Tree:
            \t/sys/class/sound/card0
            \t|-- controlC0
            \t|   |-- dev
            \t|   |-- device -> ../../card0
            \t|-- device -> ../../../0000:00:1f.3
            \t|-- id
            \t|-- pcmC0D0c
            \t|-- pcmC0D0p
            \t`-- uevent

            !!Card: /sys/class/sound/card1
            Driver: /sys/bus/usb/drivers/snd-usb-audio
            Tree:
            \t/sys/class/sound/card1
            \t\u{251C}\u{2500}\u{2500} device -> ../../../1-2:1.0
            \t\u{2514}\u{2500}\u{2500} pcmC1D0p
            """
        let parsed = try ALSAInfoReport.parse(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Sysfs card info", sysfs)]))
        #expect(parsed.sysfs[0] == ALSAInfoSysfsCard(number: 0, bus: "pci", driver: "snd_hda_intel", parent: "0000:00:1f.3", pcms: ["pcmC0D0c", "pcmC0D0p"]))
        #expect(parsed.sysfs[1] == ALSAInfoSysfsCard(number: 1, bus: "usb", driver: "snd-usb-audio", parent: "1-2:1.0", pcms: ["pcmC1D0p"]))
    }

    @Test func deviceNodesGiveUdevsByPathAndByIDNames() throws {
        // The Raspberry Pi report pasted into a page: its arrow became `-gt;`.
        let nodes = """
            crw-rw---T+ 1 root audio 116,  0 Nov  3 22:17 /dev/snd/controlC0

            /dev/snd/by-path:
            total 0
            drwxr-xr-x 2 root root  60 Nov  3 22:17 .
            lrwxrwxrwx 1 root root  12 Nov  3 22:17 platform-bcm2835_AUD0.0 -gt; ../controlC0

            /dev/snd/by-id:
            lrwxrwxrwx 1 root root 12 Jan  1 10:00 usb-Generic_USB_Audio_200901010001-00 -> ../controlC1
            """
        let parsed = try ALSAInfoReport.parse(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("ALSA Device nodes", nodes)]))
        #expect(parsed.byPath == [0: "platform-bcm2835_AUD0.0"])
        #expect(parsed.byID == [1: "usb-Generic_USB_Audio_200901010001-00"])
    }

    @Test func codecSectionGivesEachPinsDefaultConfiguration() throws {
        let codecs = """
            Codec: Intel Kabylake HDMI
            Address: 2
            AFG Function Id: 0x1 (unsol 0)
            Vendor Id: 0x8086280b
            Subsystem Id: 0x80860101
            Revision Id: 0x100000
            Node 0x04 [Audio Output] wcaps 0x6611: 8-Channels Digital
              Converter: stream=3, channel=0
            Node 0x05 [Pin Complex] wcaps 0x40778d: 8-Channels Digital Amp-Out CP
              Pincap 0x0b000094: OUT Detect HBR HDMI DP
              Pin Default 0x18560010: [Jack] Digital Out at Int HDMI
                Conn = Digital, Color = Unknown
            Node 0x06 [Pin Complex] wcaps 0x40778d: 8-Channels Digital Amp-Out CP
              Pin Default 0x18560020: [Jack] Digital Out at Int HDMI
            """
        let parsed = try ALSAInfoReport.parse(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Amixer output", sofAmixer), ("HDA-Intel Codec information", codecs)]))
        let codec = try #require(parsed.codecs.first)
        #expect(codec.name == "Intel Kabylake HDMI" && codec.address == 2 && codec.componentWord == "HDA:8086280b,80860101,00100000")
        #expect(codec.pinList.map(\.node) == [5, 6] && codec.pinList.map(\.config) == [0x1856_0010, 0x1856_0020])
        // Its Components word names the card it belongs to.
        let card = try #require(parsed.hardware().first)
        // The pin's capabilities when the dump gives them (node 6's does not), as the daemon reads /proc.
        #expect(
            card.record.hdaPins == [
                HDAPin(codec: 2, node: 5, defaultConfig: 0x1856_0010, capabilities: 0x0b00_0094), HDAPin(codec: 2, node: 6, defaultConfig: 0x1856_0020),
            ])
        #expect(parsed.hardware()[1].record.hdaPins.isEmpty)
    }

    @Test func lspciGivesTheAddressClassAndDeviceName() throws {
        let pci = """
            00:1f.3 Audio device [0403]: Intel Corporation Tiger Lake-LP Smart Sound Technology Audio Controller [8086:a0c8] (rev 20)
            \tSubsystem: Dell Device [1028:0a1f]
            01:00.1 Audio device: NVIDIA Corporation GF119 HDMI Audio Controller (rev a1)
            """
        let parsed = try ALSAInfoReport.parse(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("PCI Soundcards installed in the system", pci)]))
        #expect(parsed.pciDevices.map(\.address) == ["0000:00:1f.3", "0000:01:00.1"])
        #expect(parsed.pciDevices.map(\.classCode) == ["0403", nil])
        #expect(parsed.pciDevices.map(\.deviceName) == ["Tiger Lake-LP Smart Sound Technology Audio Controller", "GF119 HDMI Audio Controller"])
    }

    @Test func dmiNamesTheMachine() throws {
        let dmi = "Manufacturer:      Dell Inc.\nProduct Name:      XPS 13 9300\nProduct Version:   \nBoard Name:        077Y9N\n"
        let parsed = try ALSAInfoReport.parse(report([("DMI Information", dmi), ("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs)]))
        #expect(parsed.machine == "Dell Inc. XPS 13 9300 (board 077Y9N)")
    }

    @Test func markdownFencesHTMLAndCarriageReturnsAreNotPartOfTheReport() throws {
        let plain = report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs)])
        let wrapped = "<details><summary>alsa-info</summary>\n\n```text\n" + plain + "```\n</details>\n"
        let parsed = try ALSAInfoReport.parse(wrapped.replacing("\n", with: "\r\n"))
        #expect(parsed.cards.count == 2 && parsed.pcms.count == 7)
        #expect(parsed.cards[1].longName == "Razer Kraken X USB at usb-0000:00:14.0-2, full speed")
        let entities = try ALSAInfoReport.parse(
            report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("ALSA Device nodes", "/dev/snd/by-path:\nlrwxrwxrwx 1 root root 12 Jan 1 10:00 pci-0000:00:1f.3 -&gt; ../controlC0")]))
        #expect(entities.byPath == [0: "pci-0000:00:1f.3"])
    }

    @Test func aReportQuotedInAMailReplyIsRead() throws {
        let quoted = "On Monday someone wrote:\n" + report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs)])
            .split(separator: "\n", omittingEmptySubsequences: false).map { "> " + $0 }.joined(separator: "\n")
        let parsed = try ALSAInfoReport.parse(quoted)
        #expect(parsed.cards.map(\.id) == ["sofsoundwire", "USB"] && parsed.pcms.count == 7)
    }

    @Test func a04ReportsMixerHeaderNamesTheCardByNumberAndID() throws {
        let amixer = "!!-------Mixer controls for card 0 [ALSA]\n\nCard hw:0 'ALSA'/'bcm2835 ALSA'\n  Mixer name\t: 'Broadcom Mixer'\n  Components\t: ''\n"
        let parsed = try ALSAInfoReport.parse(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Amixer output", amixer)]))
        #expect(parsed.mixers.first?.cardID == "ALSA" && parsed.mixers.first?.mixerName == "Broadcom Mixer" && parsed.mixers.first?.components == "")
    }
}
