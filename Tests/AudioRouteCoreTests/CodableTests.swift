import AudioRouteCore
import FoundationEssentials
import Testing

@Suite struct CodableTests {
    @Test func optionsEncodeAsNamesAndRoundTrip() throws {
        let configuration = try SessionConfiguration(category: .playAndRecord, mode: .voiceChat, options: [.allowBluetooth, .defaultToSpeaker])
        let data = try JSONEncoder().encode(configuration)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""options":["allowBluetooth","defaultToSpeaker"]"#))
        #expect(try JSONDecoder().decode(SessionConfiguration.self, from: data) == configuration)
    }

    @Test func decodingAnInvalidCombinationFailsLikeSetCategory() {
        let data = Data(#"{"category": "playback", "options": ["defaultToSpeaker"]}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(SessionConfiguration.self, from: data) }
    }

    @Test func anUnknownOptionNameIsADecodingError() {
        let data = Data(#"["mixWithOthers", "allowBluetooh"]"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(CategoryOptions.self, from: data) }
    }

    @Test func portsAndRoutesUseTheSpecNames() throws {
        let port = Port(uid: "hp", type: .headphones, device: "jack", alsa: "plughw:CARD=PCH,DEV=0")
        let decoded = try JSONDecoder().decode(Port.self, from: JSONEncoder().encode(port))
        #expect(decoded == port)
        let change = RouteChange(reason: .newDeviceAvailable, previous: Route(outputs: ["spk"]), current: Route(outputs: ["hp"]))
        let text = String(decoding: try JSONEncoder().encode(change), as: UTF8.self)
        #expect(text.contains(#""reason":"newDeviceAvailable""#))
        #expect(RouteChangeReason.allCases.map(\.rawNumber) == [0, 1, 2, 3, 4, 6, 7, 8])
    }

    /// A port's data sources round-trip; a port without any has no `dataSources` key.
    @Test func aPortsDataSourcesRoundTrip() throws {
        var mic = Port(uid: "mic", type: .builtInMic, device: "card", alsa: "dsnoop:CARD=X,DEV=0")
        #expect(!String(decoding: try JSONEncoder().encode(mic), as: UTF8.self).contains("dataSources"))
        mic.dataSources = [DataSource(id: "Mic1", name: "Digital Microphone", alsa: "dsnoop:CARD=X,DEV=6"), DataSource(id: "Mic2")]
        #expect(try JSONDecoder().decode(Port.self, from: JSONEncoder().encode(mic)) == mic)
    }

    /// The port's ALSA device is its text in JSON, exactly as given; text that is no PCM name
    /// is a decoding error that names the fault.
    @Test func aPortsALSADeviceIsItsTextInJSON() throws {
        for alsa in ["dmix:CARD=PCH,DEV=0", "hw:PinePhone,0", "plughw:DEV=0,CARD=X", "bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp", "my_eq"] {
            let document = #"{"uid":"p","name":"P","type":"usbAudio","direction":"output","device":"d","priority":0,"sequence":0,"alsa":"\#(alsa)"}"#
            let port = try JSONDecoder().decode(Port.self, from: Data(document.utf8))
            #expect(port.alsa?.description == alsa)
            #expect(String(decoding: try JSONEncoder().encode(port), as: UTF8.self).contains(#""alsa":"\#(alsa)""#))
        }
        let bad = #"{"uid":"p","name":"P","type":"usbAudio","direction":"output","device":"d","priority":0,"sequence":0,"alsa":"a\nb"}"#
        do {
            _ = try JSONDecoder().decode(Port.self, from: Data(bad.utf8))
            Issue.record("a newline in a PCM name was decoded")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.debugDescription == "control character in ALSA PCM name at byte 1")
        }
    }
}
