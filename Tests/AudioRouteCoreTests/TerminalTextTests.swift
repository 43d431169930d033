import AudioRouteCore
import Testing

/// Names from other processes, printed: controls and bidirectional overrides escaped.
@Suite struct TerminalTextTests {
    @Test(arguments: [
        ("plain", "plain"),
        ("caf\u{E9} \u{1F3B5}", "caf\u{E9} \u{1F3B5}"),
        ("a\u{1B}[2Jb", "a\\u{001B}[2Jb"),
        ("bell\u{07}", "bell\\u{0007}"),
        ("cr\rlf\n", "cr\\u{000D}lf\\u{000A}"),
        ("del\u{7F}", "del\\u{007F}"),
        ("c1\u{9B}31m", "c1\\u{009B}31m"),
        ("evil\u{202E}txt.exe", "evil\\u{202E}txt.exe"),
        ("\u{2066}isolate\u{2069}", "\\u{2066}isolate\\u{2069}"),
        ("mark\u{200F}", "mark\\u{200F}"),
        ("arabic\u{061C}", "arabic\\u{061C}"),
        ("back\\u{202E}slash", "back\\\\u{202E}slash"),
    ])
    func unsafeScalarsAreEscaped(input: String, expected: String) {
        #expect(TerminalText.safe(input) == expected)
    }

    @Test func jsonEscapesControlsAndBidirectionalOverrides() throws {
        let name = "a\u{202E}b\u{9B}c\u{2069}d\u{1B}e\u{E9}\u{1F3B5}"
        let text = JSON.string(name).text
        #expect(text == "\"a\\u202eb\\u009bc\\u2069d\\u001be\u{E9}\u{1F3B5}\"")
        // Nothing is lost: the escaped text reads back as the name.
        #expect(try JSON.parse(text) == .string(name))
    }

    @Test func everyScalarEitherPassesOrIsEscapedInJSON() throws {
        // Each unsafe scalar, at each position of a short string, reads back unchanged, and its
        // raw UTF-8 is not in the output.
        let unsafe: [Unicode.Scalar] = ["\u{80}", "\u{9F}", "\u{61C}", "\u{200E}", "\u{202A}", "\u{202E}", "\u{2066}", "\u{2069}"]
        for scalar in unsafe {
            for text in [String(scalar), "x" + String(scalar), String(scalar) + "\u{E9}"] {
                let written = JSON.string(text).text
                #expect(!written.unicodeScalars.contains(scalar), "\(written)")
                #expect(try JSON.parse(written) == .string(text))
            }
        }
        for safe: Unicode.Scalar in ["\u{A0}", "\u{200D}", "\u{2028}", "\u{2070}", "\u{FEFF}"] {
            #expect(JSON.string(String(safe)).text.unicodeScalars.contains(safe))
        }
    }
}
