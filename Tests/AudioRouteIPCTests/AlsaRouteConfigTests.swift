// The configuration text: what it defines, parsed back by the real libasound
// parser, and that hostile port names and PCM strings cannot inject definitions.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import AudioRouteALSA
import Testing

private let headphones = Port(uid: "pci-0000:00:1f.3-hp", type: .headphones, device: "pci-0000:00:1f.3", alsa: "dmix:CARD=PCH,DEV=0")
private let headsetMic = Port(uid: "pci-0000:00:1f.3-mic", type: .headsetMic, device: "pci-0000:00:1f.3", alsa: "dsnoop:CARD=PCH,DEV=0")
private let a2dp = Port(
    uid: "bt-00:11:22:33:44:55-a2dp", type: .bluetoothA2DP, device: "bt:00:11:22:33:44:55",
    alsa: "bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp")

/// A parsed tree behind a class, because #expect cannot take ~Copyable operands.
private final class Parsed {
    let tree: ALSAConfiguration
    init(_ tree: consuming ALSAConfiguration) { self.tree = tree }
    func string(at key: String) -> String? { tree.string(at: key) }
    func contains(_ key: String) -> Bool { tree.contains(key) }
}

private func parsed(_ config: AlsaRouteConfig) throws -> Parsed {
    var tree = try ALSAConfiguration()
    try tree.load(text: config.text)
    return Parsed(tree)
}

@Suite struct AlsaRouteConfigTests {
    @Test func cardPortsGetPlugDevicesAndTheirCardsControl() throws {
        let config = AlsaRouteConfig(output: headphones, input: headsetMic)
        let tree = try parsed(config)
        #expect(tree.string(at: "pcm.audioroute_route.type") == "plug")
        #expect(tree.string(at: "pcm.audioroute_route.slave.pcm") == "dmix:CARD=PCH,DEV=0")
        #expect(tree.string(at: "pcm.audioroute_route_capture.type") == "plug")
        #expect(tree.string(at: "pcm.audioroute_route_capture.slave.pcm") == "dsnoop:CARD=PCH,DEV=0")
        // Where nothing defined them before (no plugin), the public names are the same plugs.
        #expect(tree.string(at: "pcm.audioroute.type") == "plug")
        #expect(tree.string(at: "pcm.audioroute.slave.pcm") == "dmix:CARD=PCH,DEV=0")
        #expect(tree.string(at: "pcm.audioroute_capture.slave.pcm") == "dsnoop:CARD=PCH,DEV=0")
        #expect(tree.string(at: "ctl.audioroute.type") == "hw")
        #expect(tree.string(at: "ctl.audioroute.card") == "PCH")
        #expect(tree.string(at: "ctl.audioroute_capture.card") == "PCH")
        #expect(!tree.contains("ctl.audioroute_route"))
        #expect(config.problems.isEmpty)
    }

    /// A multiRoute route: the first output is `audioroute_route`, as for any route; each further
    /// one a plug of its own, numbered from 1 in the route's order, which the plugin plays to too.
    @Test func aMultiRouteRouteNamesEveryOutput() throws {
        let usb = Port(uid: "usb-QEMU_QEMU_USB_Audio-2/output", type: .usbAudio, device: "usb-QEMU", alsa: "dmix:CARD=Audio,DEV=0")
        let config = AlsaRouteConfig(route: RoutePorts(outputs: [headphones, usb, a2dp], inputs: [headsetMic]))
        let tree = try parsed(config)
        #expect(tree.string(at: "pcm.audioroute_route.slave.pcm") == "dmix:CARD=PCH,DEV=0")
        #expect(tree.string(at: "pcm.audioroute.slave.pcm") == "dmix:CARD=PCH,DEV=0")
        #expect(tree.string(at: "pcm.audioroute_route_output_1.type") == "plug")
        #expect(tree.string(at: "pcm.audioroute_route_output_1.slave.pcm") == "dmix:CARD=Audio,DEV=0")
        #expect(tree.string(at: "pcm.audioroute_route_output_2.slave.pcm") == "bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp")
        #expect(!tree.contains("pcm.audioroute_route_output_3"))
        #expect(tree.string(at: "pcm.audioroute_route_capture.slave.pcm") == "dsnoop:CARD=PCH,DEV=0")
        #expect(config.problems.isEmpty)
        // A one-output route names no further output.
        #expect(try !parsed(AlsaRouteConfig(route: RoutePorts(outputs: [headphones], inputs: []))).contains("pcm.audioroute_route_output_1"))
    }

    /// Where a sound server with the pulse protocol owns the cards, the ports on cards play
    /// through its `pulse` PCM (the server's default, which follows the route); the card's control
    /// stays; a Bluetooth PCM (BlueALSA's, no card) is left as it is; a multiRoute route's further
    /// output on a card cannot be the server's default and is left out, said.
    @Test func withASoundServerTheCardsPortsPlayThroughIt() throws {
        let pipewire = SoundEngine(server: .pipewire, pulseProtocol: true, heldCards: [0], rule: .pipewireAnswers, signal: "")
        let server = try #require(ServerPCM.forEngine(pipewire))
        let usb = Port(uid: "usb-QEMU_QEMU_USB_Audio-2/output", type: .usbAudio, device: "usb-QEMU", alsa: "dmix:CARD=Audio,DEV=0")
        let config = AlsaRouteConfig(route: RoutePorts(outputs: [headphones, usb, a2dp], inputs: [headsetMic]), server: server)
        let tree = try parsed(config)
        #expect(tree.string(at: "pcm.audioroute_route.slave.pcm") == "pulse")
        #expect(tree.string(at: "pcm.audioroute.slave.pcm") == "pulse")
        #expect(tree.string(at: "pcm.audioroute_route_capture.slave.pcm") == "pulse")
        #expect(tree.string(at: "ctl.audioroute.card") == "PCH")
        #expect(tree.string(at: "pcm.audioroute_route_output_1.slave.pcm") == "bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp")
        #expect(!tree.contains("pcm.audioroute_route_output_2"))
        #expect(config.problems == ["port \(usb.uid): a further output of a multiRoute route on a card PipeWire holds: left out"])
        #expect(config.text.contains("through PipeWire: pulse, the server's default sink, which follows the route"))
        // The Bluetooth port first: BlueALSA's PCM, not the server's.
        let bluetooth = AlsaRouteConfig(route: RoutePorts(outputs: [a2dp], inputs: []), server: server)
        #expect(try parsed(bluetooth).string(at: "pcm.audioroute_route.slave.pcm") == "bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp")
        // No pulse protocol (PipeWire without pipewire-pulse), or no server: the cards directly.
        #expect(ServerPCM.forEngine(SoundEngine(server: .pipewire, pulseProtocol: false, heldCards: [0], rule: .pipewireAnswers, signal: "")) == nil)
        #expect(ServerPCM.forEngine(.none) == nil)
        #expect(ServerPCM.forEngine(SoundEngine(server: .pulseaudio, pulseProtocol: true, heldCards: [], rule: .pulseAnswers, signal: ""))?.serverName == "PulseAudio")
    }

    /// Further outputs with nothing to play to (no PCM) are left out, and the numbering has no
    /// gap (the plugin stops at the first missing number); past eight outputs, the rest are left
    /// out and said.
    @Test func furtherOutputsAreNumberedWithoutAGapAndBounded() throws {
        let silent = Port(uid: "no-pcm", type: .builtInSpeaker, device: "x")
        let many = (0..<10).map { Port(uid: "out\($0)", type: .usbAudio, device: "usb\($0)", alsa: .named("plug\($0)")) }
        let config = AlsaRouteConfig(outputs: [many[0], silent] + many.dropFirst(), input: nil)
        let tree = try parsed(config)
        #expect(tree.string(at: "pcm.audioroute_route.slave.pcm") == "plug0")
        for index in 1...7 { #expect(tree.string(at: "pcm.audioroute_route_output_\(index).slave.pcm") == "plug\(index)") }
        #expect(!tree.contains("pcm.audioroute_route_output_8"))
        #expect(config.problems == ["port out8: more than 8 outputs in the route: left out", "port out9: more than 8 outputs in the route: left out"])
    }

    /// A USB card's surround output (dmix at its channels, docs/ports.md): the plug in front of it
    /// takes the name whole, CHANNELS and all, and the card's control is still found.
    @Test func aSurroundPortsDmixKeepsItsChannels() throws {
        let surround = Port(uid: "usb-QEMU_QEMU_USB_Audio-2/output", type: .usbAudio, device: "usb-QEMU", alsa: "dmix:CARD=Audio,DEV=0,CHANNELS=8")
        let config = AlsaRouteConfig(output: surround, input: nil)
        let tree = try parsed(config)
        #expect(tree.string(at: "pcm.audioroute_route.type") == "plug")
        #expect(tree.string(at: "pcm.audioroute_route.slave.pcm") == "dmix:CARD=Audio,DEV=0,CHANNELS=8")
        #expect(tree.string(at: "ctl.audioroute.card") == "Audio")
        #expect(config.problems.isEmpty)
    }

    /// Issue 17: the route's own names replace earlier definitions (`pcm.!`); the public names
    /// (the ALSA plugin's `audioroute`, or a user's) are kept whole where they exist (`pcm.?`),
    /// neither replaced nor merged into.
    @Test func thePublicNamesAreDefinedOnlyWhereNothingDefinesThem() throws {
        var tree = try ALSAConfiguration()
        try tree.load(text: """
            pcm.audioroute { type null comment "the plugin's" }
            pcm.audioroute_route { type hw card 9 }

            """)
        try tree.load(text: AlsaRouteConfig(output: headphones, input: headsetMic).text)
        let result = Parsed(tree)
        #expect(result.string(at: "pcm.audioroute.type") == "null")
        #expect(result.string(at: "pcm.audioroute.comment") == "the plugin's")
        #expect(!result.contains("pcm.audioroute.slave"))
        #expect(result.string(at: "pcm.audioroute_route.type") == "plug")
        #expect(!result.contains("pcm.audioroute_route.card"))
        #expect(result.string(at: "pcm.audioroute_capture.slave.pcm") == "dsnoop:CARD=PCH,DEV=0")
    }

    @Test func emptySidesPointAtNullAndSaySo() throws {
        let config = AlsaRouteConfig(route: .empty, ports: [headphones])
        let tree = try parsed(config)
        #expect(tree.string(at: "pcm.audioroute_route.slave.pcm") == "null")
        #expect(tree.string(at: "pcm.audioroute_route_capture.slave.pcm") == "null")
        #expect(tree.string(at: "pcm.audioroute.slave.pcm") == "null")
        #expect(!tree.contains("ctl.audioroute"))
        #expect(!tree.contains("ctl.audioroute_capture"))
        #expect(config.text.contains("# no output port in the current route: the null device"))
        #expect(config.text.contains("# no input port in the current route: the null device"))
    }

    @Test func theRoutesFirstPortsAreUsed() throws {
        let usb = Port(uid: "usb-dac", type: .usbAudio, device: "usb-dac", direction: .output, alsa: "dmix:CARD=DAC,DEV=0")
        let config = AlsaRouteConfig(
            route: Route(inputs: [headsetMic.uid], outputs: [usb.uid, headphones.uid]), ports: [headphones, headsetMic, usb])
        let tree = try parsed(config)
        #expect(tree.string(at: "pcm.audioroute_route.slave.pcm") == "dmix:CARD=DAC,DEV=0")
        #expect(tree.string(at: "ctl.audioroute.card") == "DAC")
        #expect(tree.string(at: "ctl.audioroute_capture.card") == "PCH")
    }

    @Test func bluetoothPCMsHaveNoCardControl() throws {
        let tree = try parsed(AlsaRouteConfig(output: a2dp, input: nil))
        #expect(tree.string(at: "pcm.audioroute_route.slave.pcm") == "bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp")
        #expect(!tree.contains("ctl.audioroute"))
    }

    @Test func aPortWithoutAPCMIsTheNullDevice() throws {
        let bare = Port(uid: "hdmi", type: .HDMI, device: "gpu")
        let config = AlsaRouteConfig(output: bare, input: nil)
        #expect(try parsed(config).string(at: "pcm.audioroute_route.slave.pcm") == "null")
        #expect(config.text.contains("has no ALSA PCM"))
    }

    @Test(arguments: [
        ("plughw:CARD=PCH,DEV=0", "PCH"), ("hw:CARD=Headset,DEV=1", "Headset"), ("hw:1,0", "1"),
        ("plughw:CARD=\"USB\",DEV=0", "USB"), ("plughw:DEV=0,CARD=X", "X"),
        ("dmix:CARD=PCH,DEV=0", "PCH"), ("dsnoop:CARD=Pro,DEV=0", "Pro"), ("dmix:2,0", "2"), ("dsnoop:3,1", "3"), ("dmix:CARD=PCH", "PCH"),
        ("hdmi:CARD=vc4hdmi0,DEV=0", "vc4hdmi0"), ("hdmi:1,0", "1"), ("dmix:CARD=Audio,DEV=0,CHANNELS=8", "Audio"),
        ("dmix:CARD=ICUSBAUDIO7D,DEV=0,CHANNELS=6", "ICUSBAUDIO7D"), ("hw:X,0,1", "X"), ("dmix:CARD=Y,DEV=0,RATE=48000", "Y"),
    ])
    func cardControlsAreDerivedFromHardwarePCMs(_ pcm: String, _ card: String) throws {
        let device = try ALSADevice(parsing: pcm)
        #expect(AlsaRouteConfig.controlCard(for: device) == card)
        #expect(AlsaRouteConfig.controlName(for: device) == "hw:CARD=" + card)
    }

    @Test(arguments: ["bluealsa:DEV=00:11:22:33:44:55,PROFILE=sco", "routetest_a", "default", "dmix", "dmix:DEV=0", "hw:DEV=0", "null", "front:CARD=PCH"])
    func otherPCMsHaveNoControl(_ pcm: String) throws {
        #expect(AlsaRouteConfig.controlCard(for: try ALSADevice(parsing: pcm)) == nil)
    }

    @Test func quotesAndBackslashesInAPCMAreEscapedNotInterpreted() throws {
        let hostile = #"x" } pcm.evil { type null } pcm.y { slave.pcm "\"#
        let port = Port(uid: "p", type: .usbAudio, device: "d", direction: .output, alsa: try ALSADevice(parsing: hostile))
        let config = AlsaRouteConfig(output: port, input: nil)
        let tree = try parsed(config)
        #expect(tree.string(at: "pcm.audioroute_route.slave.pcm") == hostile)
        #expect(tree.string(at: "pcm.audioroute.slave.pcm") == hostile)
        #expect(!tree.contains("pcm.evil"))
        #expect(!tree.contains("pcm.y"))
        #expect(config.problems.isEmpty)
    }

    @Test(arguments: ["plughw:CARD=PCH\n}\npcm.evil { type null", "a\rb", "tab\there", "", "del\u{7F}"])
    func controlCharactersInAPCMAreRefusedAndTheSideIsNull(_ hostile: String) throws {
        // Parsing refuses these (ALSADeviceTests); a device built in code must still not reach the file.
        let port = Port(uid: "usb-1", type: .usbAudio, device: "d", direction: .input, alsa: .named(hostile))
        let config = AlsaRouteConfig(output: headphones, input: port)
        let tree = try parsed(config)
        #expect(tree.string(at: "pcm.audioroute_route_capture.slave.pcm") == "null")
        #expect(!tree.contains("pcm.evil"))
        #expect(config.problems.count == 1)
        #expect(config.problems.first?.hasPrefix("port usb-1: ALSA PCM refused: ") == true)
        // The other side is unaffected.
        #expect(tree.string(at: "pcm.audioroute_route.slave.pcm") == "dmix:CARD=PCH,DEV=0")
    }

    @Test func aHostilePortNameStaysInsideItsComment() throws {
        let port = Port(
            uid: "u\npcm.evil2 { type null }", type: .usbAudio, device: "d", name: "USB\npcm.evil { type null }\n#",
            direction: .output, alsa: "dmix:CARD=U,DEV=0")
        let config = AlsaRouteConfig(output: port, input: nil)
        let tree = try parsed(config)
        #expect(!tree.contains("pcm.evil"))
        #expect(!tree.contains("pcm.evil2"))
        #expect(tree.string(at: "pcm.audioroute_route.slave.pcm") == "dmix:CARD=U,DEV=0")
        for line in config.text.split(separator: "\n") where line.contains("evil") { #expect(line.hasPrefix("#")) }
    }
}
