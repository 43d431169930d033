import AudioRouteCore
import Testing

/// The daemon's side of a UCM card: the helper's hello line, and the verb and devices a
/// route asks of the card (docs/ucm.md).
@Suite struct UCMCardTests {
    static let hello = """
        {"card": "hw:PinePhone", "verbs": ["HiFi", "Voice Call"], "ports": [\
        {"uid": "ucm:hw:PinePhone:Speaker:output", "type": "builtInSpeaker", "direction": "output", "device": "ucm:hw:PinePhone", \
        "name": "Internal speaker", "alsa": "hw:PinePhone,0", "devices": {"HiFi": ["Speaker"], "Voice Call": ["Speaker"]}, "jackControl": null}, \
        {"uid": "ucm:hw:PinePhone:Earpiece:output", "type": "builtInReceiver", "direction": "output", "device": "ucm:hw:PinePhone", \
        "alsa": "hw:PinePhone,0", "devices": {"Voice Call": ["Earpiece"]}}, \
        {"uid": "ucm:hw:PinePhone:builtInMic", "type": "builtInMic", "direction": "input", "device": "ucm:hw:PinePhone", \
        "alsa": "hw:PinePhone,0", "devices": {"HiFi": ["Mic1", "Mic2"], "Voice Call": ["Mic2", "Mic1"]}}], \
        "jacks": {"Headphone Jack": true}}
        """

    static func card() throws -> UCMCard { try UCMCard.parseHello(Array(hello.utf8)) }

    @Test func theHelloGivesPortsDevicesAndJacks() throws {
        let card = try Self.card()
        #expect(card.card == "hw:PinePhone")
        #expect(card.verbs == ["HiFi", "Voice Call"])
        #expect(card.ports.map(\.port.type) == [.builtInSpeaker, .builtInReceiver, .builtInMic])
        #expect(card.ports[0].port.name == "Internal speaker")
        #expect(card.ports[0].port.alsa == "hw:PinePhone,0")
        #expect(card.ports[0].jackControl == nil)
        #expect(card.ports[2].devices["Voice Call"] == ["Mic2", "Mic1"])
        #expect(card.jacks == ["Headphone Jack": true])
    }

    @Test func aCallTakesVoiceCallAndMusicHiFi() throws {
        let card = try Self.card()
        let call = try SessionConfiguration(category: .playAndRecord, mode: .voiceChat)
        let route = Route(inputs: ["ucm:hw:PinePhone:builtInMic"], outputs: ["ucm:hw:PinePhone:Earpiece:output"])
        #expect(card.target(route: route, configuration: call) == UCMState(verb: "Voice Call", devices: ["Earpiece", "Mic2"]))
        // The same call on the speaker: still Voice Call (the verb follows the session, the devices the route).
        let speaker = Route(inputs: ["ucm:hw:PinePhone:builtInMic"], outputs: ["ucm:hw:PinePhone:Speaker:output"])
        #expect(card.target(route: speaker, configuration: call) == UCMState(verb: "Voice Call", devices: ["Speaker", "Mic2"]))
        let video = try SessionConfiguration(category: .playAndRecord, mode: .videoChat)
        #expect(card.target(route: speaker, configuration: video).verb == "Voice Call")
        // Music, a recording app without voiceChat, and no session at all: HiFi.
        for configuration in [try SessionConfiguration(category: .playback), try SessionConfiguration(category: .playAndRecord), nil] {
            #expect(card.target(route: speaker, configuration: configuration) == UCMState(verb: "HiFi", devices: ["Speaker", "Mic1"]))
        }
    }

    @Test func aRouteElsewhereTurnsTheCardOff() throws {
        let card = try Self.card()
        let headset = Route(inputs: ["bt:00:11:22:33:44:55:hfp"], outputs: ["bt:00:11:22:33:44:55:hfp"])
        #expect(card.target(route: headset, configuration: nil) == UCMState())
        #expect(UCMState().request(card: "hw:PinePhone").text == #"{"card": "hw:PinePhone", "verb": null, "devices": []}"#)
        #expect(UCMState(verb: "HiFi", devices: ["Speaker"]).request(card: "hw:X").text == #"{"card": "hw:X", "verb": "HiFi", "devices": ["Speaker"]}"#)
    }

    @Test func aPortMissingFromTheVerbAsksForNoDevice() throws {
        // The earpiece exists in Voice Call only: under HiFi it enables nothing.
        let card = try Self.card()
        let route = Route(outputs: ["ucm:hw:PinePhone:Earpiece:output"])
        #expect(card.target(route: route, configuration: nil) == UCMState(verb: "HiFi", devices: []))
    }

    @Test func aCardWithoutHiFiUsesItsFirstVerb() {
        let card = UCMCard(card: "hw:X", verbs: ["Play", "Voice Call"], ports: [])
        #expect(card.verb(for: nil) == "Play")
        #expect(UCMCard(card: "hw:X", verbs: [], ports: []).verb(for: nil) == nil)
    }

    @Test func badHellosNameTheFault() {
        let cases: [(String, String)] = [
            (#"{"error": "no UCM configuration for hw:X: No such file or directory"}"#, "no UCM configuration for hw:X"),
            ("{\"card\": ", "invalid JSON"),
            (#"{"card": "hw:X", "verbs": [], "ports": [], "extra": 1}"#, "unknown key \"extra\""),
            (#"{"verbs": [], "ports": []}"#, "missing key \"card\""),
            (#"{"card": "hw:X", "verbs": ["HiFi"], "ports": [{"uid": "a", "type": "speakerphone", "device": "d", "devices": {}}]}"#, "port type"),
            (#"{"card": "hw:X", "verbs": ["HiFi"], "ports": [{"uid": "a", "type": "builtInSpeaker", "device": "d"}]}"#, "missing key \"devices\""),
            (#"{"card": "hw:X", "verbs": ["HiFi"], "ports": [{"uid": "a", "type": "builtInSpeaker", "device": "d", "devices": {"Voice": ["S"]}}]}"#, "ports[0].devices.Voice: not one of the verbs"),
            (#"{"card": "hw:X", "verbs": ["HiFi"], "ports": [{"uid": "a", "type": "builtInSpeaker", "device": "d", "devices": {}}, {"uid": "a", "type": "builtInMic", "device": "d", "devices": {}}]}"#, "duplicate port uid"),
            (#"{"card": "hw:X", "verbs": ["HiFi"], "ports": [], "jacks": {"Headphone Jack": 1}}"#, "jacks.Headphone Jack"),
        ]
        for (text, fault) in cases {
            #expect(throws: ScenarioError.self, "\(text)") { try UCMCard.parseHello(Array(text.utf8)) }
            do {
                _ = try UCMCard.parseHello(Array(text.utf8))
            } catch {
                #expect(error.description.contains(fault), "\(text): \(error)")
            }
        }
        let huge = [UInt8](repeating: UInt8(ascii: " "), count: UCMCard.maximumHelloBytes + 1)
        #expect(throws: ScenarioError.self) { try UCMCard.parseHello(huge) }
    }

    @Test func theHelpersLinesAreToldApart() throws {
        func line(_ text: String) throws(ScenarioError) -> UCMHelperLine { try UCMHelperLine.parse(Array(text.utf8)) }
        #expect(try line(#"{"card": "hw:X", "jack": "Headphone Jack", "plugged": true}"#) == .jack(card: "hw:X", control: "Headphone Jack", plugged: true))
        #expect(try line(#"{"card": "hw:X", "verb": "HiFi", "devices": [], "steps": []}"#) == .reply(card: "hw:X", state: UCMState(verb: "HiFi")))
        #expect(try line(#"{"card": "hw:X", "error": "no", "closed": true}"#) == .closed(card: "hw:X", message: "no", noProfile: false))
        #expect(try line(#"{"card": "hw:X", "error": "no", "closed": true, "noProfile": true}"#) == .closed(card: "hw:X", message: "no", noProfile: true))
        #expect(try line(#"{"card": "hw:X", "closed": true}"#) == .closed(card: "hw:X", message: nil, noProfile: false))
        #expect(try line(#"{"card": "hw:X", "error": "no", "verb": null, "devices": []}"#) == .failure(card: "hw:X", message: "no", state: UCMState()))
        #expect(try line(#"{"error": "malformed"}"#) == .error("malformed"))
        let hello = try line(Self.hello)
        #expect(hello == .hello(try Self.card()))
        let bad: [(String, String)] = [
            (#"{"card": "hw:X", "jack": "Headphone Jack", "plugged": "yes"}"#, "plugged: expected true or false"),
            (#"{"card": "hw:X", "jack": "J", "plugged": true, "extra": 1}"#, "unknown key \"extra\""),
            (#"{"card": "hw:X"}"#, "no hello, jack, reply or error"),
            (#"{"verb": "HiFi"}"#, "without \"card\" or \"error\""),
            (#"{"card": "hw:X", "closed": false}"#, "only ever true"),
            (#"{"card": "hw:X", "closed": true, "noProfile": true}"#, "\"noProfile\" without an \"error\""),
            ("not json", "invalid JSON"),
        ]
        for (text, fault) in bad {
            do {
                _ = try line(text)
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.description.contains(fault), "\(text): \(error)")
            }
        }
    }

    /// The ports take the uids udev gives the same ports, and one card's profile priorities
    /// order its ports of one type (docs/ucm.md).
    @Test func publicUIDsAndPriorities() throws {
        func port(_ device: String, _ type: PortType, _ alsa: ALSADevice, _ priority: Int?) -> UCMCardPort {
            let direction: PortDirection = type.allowedDirections.contains(.output) ? .output : .input
            return UCMCardPort(
                port: Port(uid: "ucm:hw:X:\(device)", type: type, device: "ucm:hw:X", direction: direction, alsa: alsa),
                devices: ["HiFi": [device]], profilePriority: priority)
        }
        let card = UCMCard(card: "hw:X", verbs: ["HiFi"], ports: [
            port("Speaker", .builtInSpeaker, "hw:X,2", 100), port("Headphones", .headphones, "hw:X,0", 200),
            port("Mic2", .headsetMic, "hw:X,1", 200), port("builtInMic", .builtInMic, "hw:X,4", 100),
            port("HDMI1", .HDMI, "hw:X,5", 500), port("HDMI2", .HDMI, "hw:X,6", 500), port("Line1", .lineOut, "hw:X", 50),
            port("Line2", .lineOut, "hw:X,9", 80), port("Earpiece", .builtInReceiver, "hw:X", nil),
        ]).withPublicUIDs(base: "pci-0000:00:1f.3")
        #expect(card.ports.map { "\($0.port.uid) \($0.port.device) \($0.port.priority)" } == [
            "pci-0000:00:1f.3/speaker pci-0000:00:1f.3 0",
            "pci-0000:00:1f.3/headphones pci-0000:00:1f.3/jack 100",
            "pci-0000:00:1f.3/headset-mic pci-0000:00:1f.3/jack 100",
            "pci-0000:00:1f.3/mic pci-0000:00:1f.3 0",
            "pci-0000:00:1f.3/hdmi-5 pci-0000:00:1f.3/hdmi-5 50",
            "pci-0000:00:1f.3/hdmi-6 pci-0000:00:1f.3/hdmi-6 50",
            "pci-0000:00:1f.3/line-out pci-0000:00:1f.3/line 90",
            "pci-0000:00:1f.3/line-out-2 pci-0000:00:1f.3/line 91",
            "pci-0000:00:1f.3/receiver pci-0000:00:1f.3 0",
        ])
        #expect(UCMCard.pcmDevice("hw:X") == 0)
        #expect(UCMCard.pcmDevice("hw:CARD=X,DEV=3") == 3)
        for bad in ["hw:", "hw:X,", "hw:X,-1", "plughw:X,0", "hw:X,0,1"] { #expect(UCMCard.pcmDevice(try ALSADevice(parsing: bad)) == nil, "\(bad)") }
    }
}
