import AudioRouteCore
import Testing

/// PulseAudio's sinks, sources and streams as the PipeWire helper protocol's nodes, and the
/// PipeWire mapping on them unchanged (docs/daemon.md, "The PulseAudio helper"). The proplists are
/// real PulseAudio objects' (Tests/Fixtures/pulseaudio/README.md cites them).
@Suite struct PulseNodesTests {
    /// savonet/liquidsoap issue #489: a USB headset's sink on PulseAudio (module-alsa-card), card 2,
    /// PCM 0; its device.string reconstructed (the fixture's README says how).
    static let usbSink: [String: String] = [
        "alsa.resolution_bits": "16", "device.api": "alsa", "device.class": "sound", "alsa.class": "generic",
        "alsa.subclass": "generic-mix", "alsa.name": "USB Audio", "alsa.id": "USB Audio", "alsa.subdevice": "0",
        "alsa.subdevice_name": "subdevice #0", "alsa.device": "0", "alsa.card": "2", "alsa.card_name": "Samsung UC Audio",
        "alsa.driver_name": "snd_usb_audio", "device.bus_path": "pci-0000:00:14.0-usb-0:3.4:1.0", "device.string": "front:2",
    ]
    /// wwmm/easyeffects issue #327: an HDMI sink on PulseAudio, card 2, PCM 3.
    static let hdmiSink: [String: String] = [
        "device.api": "alsa", "device.class": "sound", "alsa.name": "HDMI 0", "alsa.id": "HDMI 0", "alsa.device": "3", "alsa.card": "2",
        "alsa.card_name": "HDA NVidia",
    ]

    static func node(_ facility: PulseFacility, _ index: UInt32, _ name: String?, _ props: [String: String]) -> PipeWireNode {
        PulseProperties.node(id: facility.nodeID(index)!, facility: facility, name: name) { props[$0] }
    }

    static func port(_ alsa: ALSADevice, _ type: PortType = .headphones, direction: PortDirection? = nil) -> Port {
        Port(uid: "usb-x/\(type)", type: type, device: "usb-x", direction: direction, alsa: alsa)
    }

    @Test func anALSASinkHasPipeWiresPropertyNames() {
        let node = Self.node(.sink, 0, "alsa_output.usb-UCQ01000_Samsung_UC_Audio-00.analog-stereo", Self.usbSink)
        #expect(node.id == 0)
        #expect(
            node.properties == [
                "node.name": "alsa_output.usb-UCQ01000_Samsung_UC_Audio-00.analog-stereo", "media.class": "Audio/Sink", "device.api": "alsa",
                "alsa.card": "2", "alsa.device": "0", "api.alsa.path": "front:2",
            ])
    }

    @Test func theMappingFindsPulseAudiosSinksByCardAndDevice() {
        let usb = Self.node(.sink, 1, "alsa_output.usb-UCQ01000_Samsung_UC_Audio-00.analog-stereo", Self.usbSink)
        let hdmi = Self.node(.sink, 0, "alsa_output.pci-0000_01_00.1.hdmi-stereo", Self.hdmiSink)
        let nodes = [hdmi, usb]
        let headset = PipeWireNodeMapping.node(for: Self.port("dmix:CARD=Device,DEV=0"), among: nodes, cards: ["Device": 2, "NVidia": 0])
        #expect(headset.node == usb && headset.rule == "alsaCardAndDevice", "\(headset)")
        #expect(PipeWireNodeMapping.node(for: Self.port("hdmi:CARD=Device,DEV=3", .HDMI), among: nodes, cards: ["Device": 2]).node == hdmi)
        // Without the card table, the sink's device.string (api.alsa.path) still names card 2.
        let byPath = PipeWireNodeMapping.node(for: Self.port("hw:2,0"), among: [usb], cards: [:])
        #expect(byPath.node == usb)
    }

    @Test func aMonitorOrAnotherDirectionIsNotASource() {
        // A source on the USB card: the same properties, Audio/Source.
        let source = Self.node(.source, 4, "alsa_input.usb-x.analog-mono", Self.usbSink)
        let sink = Self.node(.sink, 4, "alsa_output.usb-x.analog-stereo", Self.usbSink)
        #expect(source.id == 1 << 30 | 4 && sink.id == 4, "a sink and a source of the same index are two nodes")
        let mic = Self.port("hw:2,0", .headsetMic)
        #expect(PipeWireNodeMapping.node(for: mic, among: [sink], cards: [:]).node == nil)
        #expect(PipeWireNodeMapping.node(for: mic, among: [sink, source], cards: [:]).node == source)
    }

    @Test func streamsKeepTheirApplicationAndRoleAndIdsOfTheirOwn() {
        let props = ["application.name": "paplay", "media.role": "music", "application.process.id": "4242", "media.name": "x.wav"]
        let input = Self.node(.sinkInput, 7, nil, props)
        let output = Self.node(.sourceOutput, 7, nil, props)
        #expect(input.mediaClass == "Stream/Output/Audio" && output.mediaClass == "Stream/Input/Audio")
        #expect(input.properties["application.name"] == "paplay" && input.properties["media.role"] == "music")
        #expect(input.properties["application.process.id"] == "4242" && input.name == nil)
        #expect(Set([Self.node(.sink, 7, "s", [:]).id, Self.node(.source, 7, "s", [:]).id, input.id, output.id]).count == 4)
        #expect(PulseFacility.sink.nodeID(PulseFacility.maximumIndex + 1) == nil, "an index past 2^30 - 1 is not folded onto another kind's")
    }

    @Test func aBluetoothSinkIsFoundByAddressAndProfile() {
        // module-bluez5-device's card properties, merged into its sinks (reconstructed address).
        let card = ["device.api": "bluez", "device.string": "00:11:22:33:44:55", "bluez.path": "/org/bluez/hci0/dev_00_11_22_33_44_55"]
        let a2dp = Self.node(.sink, 5, "bluez_sink.00_11_22_33_44_55.a2dp_sink", card.merging(["bluetooth.protocol": "a2dp_sink"]) { $1 })
        let hfp = Self.node(
            .sink, 6, "bluez_sink.00_11_22_33_44_55.handsfree_head_unit", card.merging(["bluetooth.protocol": "handsfree_head_unit"]) { $1 })
        #expect(a2dp.properties["api.bluez5.address"] == "00:11:22:33:44:55" && a2dp.properties["api.bluez5.profile"] == "a2dp_sink")
        #expect(a2dp.properties["api.alsa.path"] == nil, "a Bluetooth sink's device.string is its address, not a PCM")
        let music = Self.port("bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp", .bluetoothA2DP)
        let call = Self.port("bluealsa:DEV=00:11:22:33:44:55,PROFILE=sco", .bluetoothHFP, direction: .output)
        #expect(PipeWireNodeMapping.node(for: music, among: [hfp, a2dp], cards: [:]).node == a2dp)
        #expect(PipeWireNodeMapping.node(for: call, among: [a2dp, hfp], cards: [:]).node == hfp)
    }

    /// An HDA card as module-alsa-card makes it (the keys alsa-util.c and module-alsa-card set on a
    /// card, no `device.api`: the values of a typical HDA card, not one machine's copy): its
    /// profiles in libpulse's order.
    static let hdaCard: [String: String] = [
        "alsa.card": "0", "alsa.card_name": "HDA Intel PCH", "alsa.driver_name": "snd_hda_intel",
        "device.bus_path": "pci-0000:00:1f.3", "device.description": "Built-in Audio", "device.string": "0", "device.form_factor": "internal",
    ]
    static let hdaProfiles = [
        PulseCardProfile(name: "output:analog-stereo+input:analog-stereo", description: "Analog Stereo Duplex", sinks: 1, sources: 1, priority: 6565),
        PulseCardProfile(name: "output:analog-stereo", description: "Analog Stereo Output", sinks: 1, sources: 0, priority: 6500),
        PulseCardProfile(name: "output:hdmi-stereo", description: "Digital Stereo (HDMI) Output", sinks: 1, sources: 0, priority: 5900, available: false),
        PulseCardProfile(name: "input:analog-stereo", description: "Analog Stereo Input", sinks: 0, sources: 1, priority: 65),
        PulseCardProfile(name: "off", description: "Off"),
    ]

    @Test func anALSACardIsADeviceWithItsProfilesByPosition() throws {
        let device = try #require(
            PulseProperties.device(index: 3, name: "alsa_card.pci-0000_00_1f.3", profiles: Self.hdaProfiles, active: 4) { Self.hdaCard[$0] })
        #expect(device.id == 3 && device.card == 0 && device.name == "alsa_card.pci-0000_00_1f.3")
        #expect(
            device.properties == [
                "device.name": "alsa_card.pci-0000_00_1f.3", "device.api": "alsa", "device.description": "Built-in Audio", "alsa.card": "0",
            ])
        #expect(device.profiles.map(\.index) == [0, 1, 2, 3, 4])
        #expect(device.profiles.map(\.name) == Self.hdaProfiles.map(\.name))
        #expect(device.profiles[0] == PipeWireProfile(
            index: 0, name: "output:analog-stereo+input:analog-stereo", description: "Analog Stereo Duplex", priority: 6565, available: .unknown, sinks: 1, sources: 1))
        #expect(device.profiles[2].available == .no, "libpulse's 0: known useless now")
        #expect(device.activeProfile?.name == "off")
        // The chooser on it: the card off under a route on its speaker gets the duplex profile back.
        let speaker = Port(uid: "hda/speaker", type: .builtInSpeaker, device: "hda", alsa: "hw:0,0")
        let choice = CardProfiles.choose(for: device, route: RoutePorts(outputs: [speaker]), cards: [:], nodesPresent: false)
        #expect(choice.profile?.index == 0, "\(choice)")
    }

    @Test func aCardThatIsNeitherALSAsNorBluezsIsNotReported() {
        let bluezWithoutAddress = ["device.api": "bluez"]
        #expect(PulseProperties.device(index: 1, name: "bluez_card.x", profiles: Self.hdaProfiles, active: 0) { bluezWithoutAddress[$0] } == nil)
        let other = ["device.api": "v4l2", "alsa.card": "0"]
        #expect(PulseProperties.device(index: 1, name: "x", profiles: Self.hdaProfiles, active: 0) { other[$0] } == nil, "device.api not alsa")
        #expect(PulseProperties.device(index: 1, name: "x", profiles: Self.hdaProfiles, active: 0) { _ in nil } == nil, "no alsa.card")
        let said = Self.hdaCard.merging(["device.api": "alsa"]) { $1 }
        #expect(PulseProperties.device(index: 1, name: "x", profiles: Self.hdaProfiles, active: 0) { said[$0] }?.card == 0, "device.api alsa said")
    }

    /// module-bluez5-device's card as PulseAudio 16 lists it (`pactl list cards`): `device.api`
    /// bluez, the remote's address as `device.string`, its A2DP and hands-free profiles.
    @Test func aBluezCardIsADeviceWithItsAddressAndHandsFreeIsChosenForACall() throws {
        let props = ["device.api": "bluez", "device.string": "00:AA:01:00:00:23", "device.description": "Headset", "bluez.path": "/org/bluez/hci0/dev_00_AA_01_00_00_23"]
        let profiles = [
            PulseCardProfile(name: "a2dp_sink", description: "High Fidelity Playback (A2DP Sink)", sinks: 1, sources: 0, priority: 40),
            PulseCardProfile(name: "headset_head_unit", description: "Headset Head Unit (HSP)", sinks: 1, sources: 1, priority: 30),
            PulseCardProfile(name: "handsfree_head_unit", description: "Handsfree Head Unit (HFP)", sinks: 1, sources: 1, priority: 30),
            PulseCardProfile(name: "off", description: "Off"),
        ]
        let device = try #require(PulseProperties.device(index: 2, name: "bluez_card.00_AA_01_00_00_23", profiles: profiles, active: 0) { props[$0] })
        #expect(device.bluetoothAddress == "00:AA:01:00:00:23" && device.card == nil && device.properties["device.api"] == "bluez5")
        #expect(device.activeProfile?.name == "a2dp_sink")
        let address = "00:aa:01:00:00:23"
        let hfp = Port(uid: "bt:00:AA:01:00:00:23:hfp", type: .bluetoothHFP, device: "bt:00:AA:01:00:00:23", direction: .duplex, alsa: .bluealsa(BlueALSAPCM(address: address, profile: .sco)))
        let call = CardProfiles.choose(for: device, route: RoutePorts(outputs: [hfp], inputs: [hfp]), cards: [:], nodesPresent: false)
        #expect(call.rule == .bestProfile && call.profile?.name == "headset_head_unit", "equal priorities: the lower position; \(call)")
    }

    @Test func profilesPastTheBoundOrWithLongNamesAreLeftOutAndTheOthersKeepTheirPositions() throws {
        let long = PulseCardProfile(name: String(repeating: "o", count: PipeWireProfile.maximumTextLength + 1))
        let many = [long, PulseCardProfile(name: "")] + (0..<200).map { PulseCardProfile(name: "output:p\($0)", priority: UInt32.max) }
        let device = try #require(PulseProperties.device(index: 0, name: "c", profiles: many, active: 0) { Self.hdaCard[$0] })
        #expect(device.profiles.count == PipeWireDevice.maximumProfiles - 2)
        #expect(device.profiles.first?.index == 2 && device.profiles.first?.name == "output:p0", "the kept keep their positions")
        #expect(device.profiles.last?.index == PipeWireDevice.maximumProfiles - 1)
        #expect(device.profiles.first?.priority == Int(Int32.max), "a priority within the protocol's range")
        #expect(device.active == nil, "the active profile was left out")
        #expect(try #require(PulseProperties.device(index: 0, name: "c", profiles: many, active: 150) { Self.hdaCard[$0] }).active == nil)
        #expect(try #require(PulseProperties.device(index: 0, name: "c", profiles: many, active: 5) { Self.hdaCard[$0] }).active == 5)
    }
}
