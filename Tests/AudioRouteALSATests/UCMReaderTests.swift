// UCM read through libasound (snd_use_case_*) from the configurations that
// alsa-ucm-conf installs in /usr/share/alsa/ucm2, unchanged, with no sound card:
// the bench of UCMBench.swift.
import AudioRouteALSA
import AudioRouteCore
import Testing

private func read(_ card: String) throws -> UCMConfiguration {
    try UCMBench.with { try UCMReader.read(card: card) }
}

private func summary(_ ports: [UCMPort]) -> [String] {
    ports.map {
        let devices = $0.dataSources.map(\.device).joined(separator: "+")
        return "\($0.port.type.rawValue) \(devices) \($0.port.alsa ?? "-") \($0.jackControl ?? "-")"
    }
}

@Suite(.serialized) struct UCMReaderTests {
    @Test func pinePhone() throws {
        let config = try read("hw:PinePhone")
        #expect(config.verbs.map(\.name) == ["HiFi", "Voice Call"])
        for verb in config.verbs {
            #expect(verb.devices.map(\.name) == ["Speaker", "Earpiece", "DigitalMic", "HeadsetMic", "Headphone"])
            #expect(summary(UCMPortMapping.ports(card: "PinePhone", verb: verb)) == [
                "builtInSpeaker Speaker hw:PinePhone,0 -",
                "builtInReceiver Earpiece hw:PinePhone,0 -",
                "headsetMic HeadsetMic hw:PinePhone,0 Headset Microphone Jack",
                "headphones Headphone hw:PinePhone,0 Headphone Jack",
                "builtInMic DigitalMic hw:PinePhone,0 -",
            ])
        }
        // The call verb prefers the earpiece, HiFi the speaker (PlaybackPriority).
        let hifi = try #require(config.verb("HiFi")), call = try #require(config.verb("Voice Call"))
        #expect(hifi.devices[0].values["PlaybackPriority"] == "300")
        #expect(hifi.devices[1].values["PlaybackPriority"] == "100")
        #expect(call.devices[0].values["PlaybackPriority"] == "100")
        #expect(call.devices[1].values["PlaybackPriority"] == "300")
    }

    @Test func librem5() throws {
        let config = try read("hw:L5")
        #expect(config.verbs.map(\.name) == ["HiFi"])
        let hifi = try #require(config.verb("HiFi"))
        #expect(summary(UCMPortMapping.ports(card: "L5", verb: hifi)) == [
            "builtInReceiver Handset hw:L5,0 -",
            "builtInSpeaker Speaker hw:L5,0 -",
            "headphones Headphones hw:L5,0 Headphones Jack",
            "headsetMic Headset hw:L5,0 Headphones Jack",
            "builtInMic Mic hw:L5,0 -",
        ])
    }

    /// conf.d/sof-hda-dsp/sof-hda-dsp.conf, found by the card's driver name as on
    /// a real laptop. Its devices depend on the card's controls (ControlExists)
    /// and components ("cfg-dmics:"); the fake card has neither, so only the
    /// unconditional ones appear: the headphone jack and its mic.
    @Test func sofLaptopWithoutControls() throws {
        let config = try read("hw:sofhdadsp")
        #expect(config.verbs.map(\.name) == ["HiFi"])
        let hifi = try #require(config.verb("HiFi"))
        #expect(summary(UCMPortMapping.ports(card: "sofhdadsp", verb: hifi)) == [
            "headphones Headphones hw:sofhdadsp Headphone Jack",
            "headsetMic Mic hw:sofhdadsp Mic Jack",
        ])
    }

    /// A card name without "hw:" is matched against the cards present (none
    /// here), and a fake card whose driver has no configuration finds none:
    /// both are errors, not empty configurations.
    @Test func noMatchingConfigurationIsAnError() throws {
        try UCMBench.with {
            #expect(throws: ALSAError.self) { try UCMReader.read(card: "PinePhone") }
            #expect(throws: ALSAError.self) { try UCMReader.read(card: "hw:NoSuchCard") }
        }
    }
}
