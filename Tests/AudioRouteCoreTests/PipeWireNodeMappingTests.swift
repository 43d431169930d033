import AudioRouteCore
import Testing

/// A route's port → the PipeWire node that plays it (docs/daemon.md, "The PipeWire helper").
/// The nodes' properties are real PipeWire nodes' (Tests/Fixtures/pipewire/README.md cites them).
@Suite struct PipeWireNodeMappingTests {
    /// alsa-lib issue #245: PipeWire's UCM sink of an AMD laptop's card 1 (id `Generic`), PCM 0,
    /// as `pactl list sinks` printed its properties.
    static let ucmSink = PipeWireNode(
        id: 52,
        properties: [
            "node.name": "alsa_output.pci-0000_06_00.6.HiFi__hw_Generic__sink", "media.class": "Audio/Sink", "device.api": "alsa",
            "alsa.card": "1", "alsa.device": "0", "api.alsa.path": "hw:Generic", "api.alsa.pcm.card": "1",
            "api.alsa.pcm.stream": "playback", "card.profile.device": "0",
        ])
    /// The same card's PCM 3 (an HDMI output), shaped as the UCM HDMI sink of
    /// luisbocanegra/linux-guide-split-audio-ports issue #29 (its `alsa.device` 3).
    static let hdmiSink = PipeWireNode(
        id: 53,
        properties: [
            "node.name": "alsa_output.pci-0000_06_00.1.HiFi__HDMI1__sink", "media.class": "Audio/Sink", "device.api": "alsa",
            "alsa.card": "1", "alsa.device": "3", "card.profile.device": "3",
        ])
    /// Its capture node: the same card and PCM, a source.
    static let ucmSource = PipeWireNode(
        id: 54,
        properties: [
            "node.name": "alsa_input.pci-0000_06_00.6.HiFi__hw_Generic__source", "media.class": "Audio/Source", "device.api": "alsa",
            "alsa.card": "1", "alsa.device": "0", "api.alsa.path": "hw:Generic", "api.alsa.pcm.stream": "capture",
        ])
    static let stream = PipeWireNode(
        id: 80, properties: ["node.name": "paplay", "media.class": "Stream/Output/Audio", "application.name": "paplay", "media.role": "Music"])
    static let nodes = [stream, hdmiSink, ucmSource, ucmSink]

    static func port(_ alsa: ALSADevice, _ type: PortType = .builtInSpeaker, direction: PortDirection? = nil) -> Port {
        Port(uid: "pci-0000:06:00.6/\(type)", type: type, device: "pci-0000:06:00.6", direction: direction, alsa: alsa)
    }

    @Test func aCardsPortIsItsNodeByCardIndexAndDevice() {
        let choice = PipeWireNodeMapping.node(for: Self.port("dmix:CARD=Generic,DEV=0"), among: Self.nodes, cards: ["Generic": 1])
        #expect(choice.node == Self.ucmSink)
        #expect(choice.rule == "alsaCardAndDevice")
        #expect(choice.reason == "alsa.card 1, alsa.device 0")
        let hdmi = PipeWireNodeMapping.node(for: Self.port("hdmi:CARD=Generic,DEV=3", .HDMI), among: Self.nodes, cards: ["Generic": 1])
        #expect(hdmi.node == Self.hdmiSink)
        // A card given by index needs no table.
        #expect(PipeWireNodeMapping.node(for: Self.port("hw:1,3", .HDMI), among: Self.nodes, cards: [:]).node == Self.hdmiSink)
    }

    @Test func anInputPortIsASourceNeverASink() {
        let mic = Self.port("dsnoop:CARD=Generic,DEV=0", .builtInMic)
        let choice = PipeWireNodeMapping.node(for: mic, among: Self.nodes, cards: ["Generic": 1])
        #expect(choice.node == Self.ucmSource)
        // Without the source, the sink on the same PCM is not taken.
        let none = PipeWireNodeMapping.node(for: mic, among: [Self.ucmSink], cards: ["Generic": 1])
        #expect(none.node == nil)
        #expect(none.reason == "no Audio/Source node has alsa.card 1 and alsa.device 0, or api.alsa.path on Generic,0")
    }

    @Test func aCardNotInTheTableIsFoundByTheUCMNodesPath() {
        // api.alsa.path is hw:<id> on a UCM node; its PCM is then alsa.device.
        let choice = PipeWireNodeMapping.node(for: Self.port("hw:Generic,0"), among: Self.nodes, cards: [:])
        #expect(choice.node == Self.ucmSink)
        #expect(choice.rule == "alsaPath")
        #expect(PipeWireNodeMapping.node(for: Self.port("hw:Generic,3", .HDMI), among: Self.nodes, cards: [:]).node == nil, "the HDMI node has no path")
    }

    @Test func anotherCardOrDeviceIsNoMatch() {
        #expect(PipeWireNodeMapping.node(for: Self.port("hw:PCH,0"), among: Self.nodes, cards: ["PCH": 0, "Generic": 1]).node == nil)
        #expect(PipeWireNodeMapping.node(for: Self.port("hw:Generic,7"), among: Self.nodes, cards: ["Generic": 1]).node == nil)
        let named = PipeWireNodeMapping.node(for: Self.port("default"), among: Self.nodes, cards: [:])
        #expect(named.node == nil && named.reason == "PCM default names no card or Bluetooth device")
        let bare = PipeWireNodeMapping.node(for: Port(uid: "x", type: .builtInSpeaker, device: "x"), among: Self.nodes, cards: [:])
        #expect(bare.node == nil && bare.reason == "port x has no ALSA device to match")
    }

    @Test func severalMatchesTakeTheLowestIdAndSaySo() {
        var twin = Self.ucmSink
        twin.id = 40
        twin.properties["node.name"] = "twin"
        let choice = PipeWireNodeMapping.node(for: Self.port("hw:1,0"), among: Self.nodes + [twin], cards: [:])
        #expect(choice.node?.name == "twin")
        #expect(choice.reason == "alsa.card 1, alsa.device 0; 2 nodes matched, the lowest id taken")
    }

    @Test func aBluetoothPortIsItsDevicesNodeOfTheSameProfile() {
        // PipeWire's bluez5 nodes (spa/plugins/bluez5): address and profile as properties.
        let a2dp = PipeWireNode(
            id: 90,
            properties: [
                "node.name": "bluez_output.00_11_22_33_44_55.a2dp-sink", "media.class": "Audio/Sink", "device.api": "bluez5",
                "api.bluez5.address": "00:11:22:33:44:55", "api.bluez5.profile": "a2dp-sink",
            ])
        let hfp = PipeWireNode(
            id: 91,
            properties: [
                "node.name": "bluez_output.00_11_22_33_44_55.headset-head-unit", "media.class": "Audio/Sink", "device.api": "bluez5",
                "api.bluez5.address": "00:11:22:33:44:55", "api.bluez5.profile": "headset-head-unit",
            ])
        let music = Self.port("bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp", .bluetoothA2DP)
        let call = Self.port("bluealsa:DEV=00:11:22:33:44:55,PROFILE=sco", .bluetoothHFP, direction: .output)
        #expect(PipeWireNodeMapping.node(for: music, among: [hfp, a2dp], cards: [:]).node == a2dp)
        #expect(PipeWireNodeMapping.node(for: call, among: [a2dp, hfp], cards: [:]).node == hfp)
        let other = Self.port("bluealsa:DEV=66:11:22:33:44:55,PROFILE=a2dp", .bluetoothA2DP)
        #expect(PipeWireNodeMapping.node(for: other, among: [a2dp, hfp], cards: [:]).node == nil)
    }

    @Test func theDefaultsAreTheRoutesNodesNamesOrLeftAlone() {
        let result = PipeWireNodeMapping.defaults(
            output: Self.port("hw:Generic,0"), input: Self.port("hw:PCH,0", .builtInMic), among: Self.nodes, cards: ["Generic": 1])
        #expect(result.defaults == PipeWireDefaults(sink: "alsa_output.pci-0000_06_00.6.HiFi__hw_Generic__sink", source: nil))
        #expect(result.input?.node == nil)
        #expect(PipeWireNodeMapping.defaults(output: nil, input: nil, among: Self.nodes, cards: [:]).defaults == PipeWireDefaults(sink: nil, source: nil))
    }
}
