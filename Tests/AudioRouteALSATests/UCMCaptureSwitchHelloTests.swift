import AudioRouteALSA
import AudioRouteCore
import Testing

/// The helper's side of a built-in mic's mute (docs/ucm.md): each data source's `CaptureSwitch`,
/// validated, in the hello; what cannot be followed is a note, and no mute.
@Suite struct UCMCaptureSwitchHelloTests {
    static func device(_ name: String, _ values: [String: String]) -> UCMDevice { UCMDevice(name: name, values: values) }

    @Test func eachDataSourceKeepsItsSwitchAndTheHelloCarriesIt() throws {
        // sof-hda-dsp's DMIC (alsa-ucm-conf 1.2.8 Intel/sof-hda-dsp/HiFi.conf: "Dmic0 Capture Switch"),
        // an analog mic in the id form, and a speaker (whose switch is no mic's).
        let verb = UCMVerb(name: "HiFi", devices: [
            Self.device("Mic1", ["CapturePCM": "hw:x,6", "CapturePriority": "100", "CaptureSwitch": "Dmic0 Capture Switch"]),
            Self.device("Mic2", ["CapturePCM": "hw:x,0", "CapturePriority": "200", "CaptureSwitch": "name='Capture Switch'"]),
            Self.device("Speaker", ["PlaybackPCM": "hw:x,0", "PlaybackSwitch": "Speaker Playback Switch"]),
        ])
        var notes: [String] = []
        let ports = UCMHelperProtocol.ports(UCMConfiguration(card: "hw:x", verbs: [verb]), notes: &notes)
        #expect(notes == [])
        let mic = try #require(ports.first { $0.port.type == .builtInMic })
        #expect(mic.captureSwitches.map(\.verb) == ["HiFi"])
        #expect(mic.captureSwitches[0].switches.map { "\($0.device)=\($0.control)" } == ["Mic2=Capture Switch", "Mic1=Dmic0 Capture Switch"])
        // Through the hello line to the daemon's reading of it.
        let line = UCMHelperProtocol.hello(UCMConfiguration(card: "hw:x", verbs: [verb]), ports: ports, jacks: [:]).text
        let card = try UCMCard.parseHello(Array(line.utf8))
        #expect(card.ports.first { $0.port.type == .builtInMic }?.captureSwitches == ["HiFi": ["Mic1": "Dmic0 Capture Switch", "Mic2": "Capture Switch"]])
        #expect(card.ports.first { $0.port.type == .builtInSpeaker }?.captureSwitches == [:])
        #expect(!line.contains(#""captureSwitch": {}"#), "no member for a port without one")
    }

    @Test func aSwitchThatCannotBeFollowedIsANoteAndNoMute() throws {
        let huge = String(repeating: "x", count: 5000)
        let verb = UCMVerb(name: "HiFi", devices: [
            Self.device("Mic1", ["CapturePCM": "hw:x,6", "CaptureSwitch": ""]),
            Self.device("Mic2", ["CapturePCM": "hw:x,7", "CaptureSwitch": huge]),
            Self.device("Mic3", ["CapturePCM": "hw:x,8", "CaptureSwitch": "name='Capture Switch',index=1"]),
            Self.device("Mic4", ["CapturePCM": "hw:x,9", "CaptureSwitch": "Capture Switch", "CaptureCTL": "_ucm0001.split"]),
            Self.device("Mic5", ["CapturePCM": "hw:x,10", "CaptureSwitch": "Capture Switch", "CaptureCTL": "_ucm0001.hw:x"]),
        ])
        var notes: [String] = []
        let ports = UCMHelperProtocol.ports(UCMConfiguration(card: "hw:x", verbs: [verb]), notes: &notes)
        #expect(notes == [
            "HiFi/Mic1: CaptureSwitch \"\" is an empty name: its mute is not followed",
            "HiFi/Mic2: CaptureSwitch is a value of 5000 bytes: its mute is not followed",
            "HiFi/Mic3: CaptureSwitch \"name='Capture Switch',index=1\" is \"name='Capture Switch',index=1\": index=1 is not the card's mixer element, index 0: its mute is not followed",
            "HiFi/Mic4: CaptureSwitch on control device _ucm0001.split, not the card's: its mute is not followed",
        ], "\(notes)")
        let mic = try #require(ports.first { $0.port.type == .builtInMic })
        #expect(mic.captureSwitches.flatMap(\.switches).map(\.device) == ["Mic5"])
    }
}
