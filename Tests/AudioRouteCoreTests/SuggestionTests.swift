import AudioRouteCore
import Testing

/// "Did you mean": the nearest known name to a typo, or none when nothing is close.
@Suite struct SuggestionTests {
    static let categories = Category.allCases.map(\.rawValue)

    @Test(arguments: [
        ("playbak", "playback"), ("plyaback", "playback"), ("Playback", "playback"), ("playbacks", "playback"),
        ("playAndRecrod", "playAndRecord"), ("ambinet", "ambient"), ("recrd", "record"),
    ])
    func aTypoFindsItsCategory(typed: String, meant: String) {
        #expect(Suggestion.closest(to: typed, among: Self.categories) == meant)
    }

    @Test(arguments: ["karaoke", "", "x", "play", "recordings", "multi"])
    func farFromEveryNameIsNoGuess(typed: String) {
        #expect(Suggestion.closest(to: typed, among: Self.categories) == nil)
    }

    @Test func commandsAndOptionsToo() {
        let commands = ["status", "ports", "monitor", "explain", "priority", "silent", "session", "play"]
        #expect(Suggestion.closest(to: "stauts", among: commands) == "status")
        #expect(Suggestion.closest(to: "sesion", among: commands) == "session")
        #expect(Suggestion.closest(to: "plya", among: commands) == "play")
        #expect(Suggestion.closest(to: "pots", among: commands) == "ports")
        #expect(Suggestion.closest(to: "duckOther", among: CategoryOptions.named.map(\.name)) == "duckOthers")
    }

    @Test func theMessageNamesTheGuessAndEveryValidName() {
        #expect(
            Suggestion.unknown("mode", "voicechat", among: ["default", "voiceChat", "videoChat"])
                == #"unknown mode "voicechat" (did you mean "voiceChat"?); one of: default, voiceChat, videoChat"#)
        #expect(Suggestion.unknown("mode", "loud", among: ["default", "voiceChat"]) == #"unknown mode "loud"; one of: default, voiceChat"#)
    }
}
