import AudioRouteCore
import Testing

// The daemon's substring search stands in for _StringProcessing's (scripts/build-daemon turns
// that module's import off): the same answers, which this test target still imports.
@Suite struct TextSearchTests {
    static let cases: [(String, String)] = [
        ("HDA Intel PCH HDMI/DP,pcm=3 Jack", "DP,pcm="),
        ("HDA Intel PCH HDMI/DP,pcm=3 Jack", "pcm="),
        ("aaab", "aab"),  // a partial match to step back from
        ("abcabd", "abd"),
        ("/devices/pci0000:00/0000:00:14.0/usb1", "/usb"),
        ("/devices/platform/sound", "/usb"),
        ("short", "longer than short"),
        ("ends with HDM", "HDMI"),
        ("", "x"),
        ("cafe\u{301} au lait", "cafe"),  // é as e + a combining accent: one Character, not "e"
        ("caf\u{E9}", "cafe\u{301}"),  // the same Character either way
    ]

    @Test(arguments: cases)
    func findsWhatStringProcessingFinds(text: String, part: String) {
        let ours = text.firstRange(ofText: part)
        let theirs = text.firstRange(of: part)
        #expect(ours == theirs)
        #expect(text.contains(text: part) == text.contains(part))
    }

    @Test func aSubstringSearchesOnlyItself() {
        let xml = "<interface name=\"a\"></interface><interface name=\"b\"></interface>"
        let first = xml.firstRange(ofText: "</interface>")!
        let rest = xml[first.upperBound...]
        #expect(rest.firstRange(ofText: "</interface>").map { xml.distance(from: xml.startIndex, to: $0.lowerBound) } == 52)
        #expect(rest.firstRange(ofText: "name=\"a\"") == nil)
    }

    @Test func replacesEveryNewline() {
        #expect("one\ntwo\n\nthree".replacing(character: "\n", with: " ") == "one two  three")
        #expect("crlf\r\nstays".replacing(character: "\n", with: " ") == "crlf\r\nstays")  // \r\n is one Character
    }
}
