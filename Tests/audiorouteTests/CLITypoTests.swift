import AudioRouteTestKit
import Testing

/// A mistyped command or value: the nearest name ("did you mean"), every valid one, and the
/// usage error's status, before anything is opened.
@Suite struct CLITypoTests {
    @Test func aMistypedCommandGetsItsNearestName() throws {
        let typo = try CLI.run(["stauts"])
        #expect(typo.status == 64)
        #expect(typo.err.hasPrefix(#"Error: unknown command "stauts" (did you mean "status"?); one of: status, ports, monitor,"#), "\(typo.err)")
        // Hidden commands are not offered.
        #expect(!typo.err.contains("demo-sink"))
        let far = try CLI.run(["frobnicate"])
        #expect(far.status == 64 && far.err.hasPrefix(#"Error: unknown command "frobnicate"; one of: status,"#), "\(far.err)")
        // Real commands, help and options are the parser's as before.
        #expect(try CLI.run(["help", "status"]).status == 0)
        #expect(try CLI.run(["--help"]).status == 0)
    }

    @Test(arguments: [
        (["play", "--category", "playbak", "x.wav"], #"unknown category "playbak" (did you mean "playback"?); one of: ambient, soloAmbient, playback,"#),
        (["session", "--category", "playback", "--mode", "voicechat", "--", "true"], #"unknown mode "voicechat" (did you mean "voiceChat"?); one of: default,"#),
        (["session", "--category", "playback", "--options", "duckOther", "--", "true"], #"unknown category option "duckOther" (did you mean "duckOthers"?); one of: mixWithOthers,"#),
        (["session", "--category", "karaoke", "--", "true"], #"unknown category "karaoke"; one of: ambient,"#),
    ])
    func aMistypedValueGetsItsNearestNameAndTheList(arguments: [String], message: String) throws {
        let result = try CLI.run(arguments + ["--bus-address", "unix:path=/nonexistent"])
        #expect(result.status == 64)
        #expect(result.err.contains("Error: " + message), "\(result.err)")
    }
}
