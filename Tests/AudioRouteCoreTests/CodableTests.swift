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
}
