import AudioRouteCore
import Testing

/// A UCM profile's `CaptureSwitch` for a built-in mic: the names the helper passes on, the hello
/// member the daemon reads, and which control counts for the state the helper reported.
@Suite struct UCMCaptureSwitchTests {
    @Test func controlNamesAreBoundedPrintableMixerElements() {
        func name(_ value: String) -> String? { try? UCMControlName.mixerElement(value).get() }
        // alsa-ucm-conf 1.2.8's forms: Intel/sof-hda-dsp/HiFi.conf, HDA/HiFi-acp.conf, Librem_5/HiFi.conf.
        #expect(name("Dmic0 Capture Switch") == "Dmic0 Capture Switch")
        #expect(name("Mic ACP LED Capture Switch") == "Mic ACP LED Capture Switch")
        #expect(name("name='MIXINR IN3R Switch'") == "MIXINR IN3R Switch")
        #expect(name("iface=MIXER,name='Capture Switch',index=0") == "Capture Switch")
        #expect(name("name=\"Capture Switch\"") == "Capture Switch")
        #expect(name("") == nil)
        #expect(name(String(repeating: "x", count: 44)) == nil, "longer than a control's name")
        #expect(name(String(repeating: "x", count: 43)) != nil)
        #expect(name(String(repeating: "x", count: 100_000)) == nil)
        #expect(name("Capture\u{7}Switch") == nil)
        #expect(name("Mikrofon Schalter \u{e9}") == nil, "not ASCII")
        #expect(name("name='Capture Switch',index=1") == nil, "another element of the name")
        #expect(name("iface=CARD,name='Capture Switch'") == nil)
        #expect(name("numid=5") == nil)
        #expect(name("name='Capture Switch") == nil, "unterminated")
        #expect(name("index=0") == nil, "no name")
        #expect(name("name=''") == nil)
        #expect(UCMControlName.mixerElement("").map { _ in "" } == .failure(UCMControlNameFault("an empty name")))
    }

    static func hello(_ switches: String) -> [UInt8] {
        Array(
            """
            {"card": "hw:0", "verbs": ["HiFi", "Voice Call"], "ports": [\
            {"uid": "ucm:hw:0:builtInMic", "type": "builtInMic", "direction": "input", "device": "ucm:hw:0", "alsa": "hw:0,6", \
            "devices": {"HiFi": ["Mic1", "Mic2"], "Voice Call": ["Mic2"]}\(switches)}], "jacks": {}}
            """.utf8)
    }

    @Test func theHelloGivesEachDataSourcesSwitch() throws {
        let card = try UCMCard.parseHello(
            Self.hello(#", "captureSwitch": {"HiFi": {"Mic1": "Dmic0 Capture Switch", "Mic2": "Capture Switch"}, "Voice Call": {"Mic2": "Capture Switch"}}"#))
        #expect(card.ports[0].captureSwitches == ["HiFi": ["Mic1": "Dmic0 Capture Switch", "Mic2": "Capture Switch"], "Voice Call": ["Mic2": "Capture Switch"]])
        #expect(card.followedSwitches == ["Capture Switch", "Dmic0 Capture Switch"])
        // The hello's state: no verb, so no mute control counts.
        #expect(card.enabled == UCMState())
        #expect(card.enabledCaptureSwitch(of: card.ports[0]) == nil)
        var set = card
        set.enabled = UCMState(verb: "HiFi", devices: ["Mic1"])
        #expect(set.enabledCaptureSwitch(of: set.ports[0]) == "Dmic0 Capture Switch")
        set.enabled = UCMState(verb: "HiFi", devices: ["Mic2"])
        #expect(set.enabledCaptureSwitch(of: set.ports[0]) == "Capture Switch")
        set.enabled = UCMState(verb: "Voice Call", devices: ["Mic2"])
        #expect(set.enabledCaptureSwitch(of: set.ports[0]) == "Capture Switch")
        set.enabled = UCMState(verb: "HiFi", devices: [])
        #expect(set.enabledCaptureSwitch(of: set.ports[0]) == nil, "the mic not enabled")
        set.enabled = nil
        #expect(set.enabledCaptureSwitch(of: set.ports[0]) == nil, "a request on its way")
        // A hello without the member (every port before this, and a mic without one).
        #expect(try UCMCard.parseHello(Self.hello("")).ports[0].captureSwitches == [:])
    }

    @Test func badSwitchesNameTheFault() {
        func fault(_ switches: String) -> String {
            do {
                _ = try UCMCard.parseHello(Self.hello(switches))
                return "accepted"
            } catch { return error.description }
        }
        #expect(fault(#", "captureSwitch": {"Karaoke": {"Mic1": "Capture Switch"}}"#).hasSuffix("not one of the port's verbs"))
        #expect(fault(#", "captureSwitch": {"Voice Call": {"Mic1": "Capture Switch"}}"#).hasSuffix("not one of the port's devices in Voice Call"))
        #expect(fault(#", "captureSwitch": {"HiFi": {"Mic1": ""}}"#).hasSuffix("not a control name: an empty name"))
        #expect(fault(#", "captureSwitch": {"HiFi": {"Mic1": "\#(String(repeating: "x", count: 300))"}}"#).hasSuffix("not a control name: a value of 300 bytes"))
        #expect(fault(#", "captureSwitch": {"HiFi": {"Mic1": 5}}"#) != "accepted")
        #expect(fault(#", "captureSwitch": ["Capture Switch"]"#) != "accepted")
    }
}
