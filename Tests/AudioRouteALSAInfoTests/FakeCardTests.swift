// A report's card rendered as the UCM tests' fake card (Sources/AudioRouteFakeCard/fake-card-ctl.c).
@testable import AudioRouteALSAInfo
import Testing

@Suite struct FakeCardTests {
    func rendered() throws -> FakeCardConfiguration {
        let card = try #require(
            try ALSAInfoReport.parse(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Amixer output", sofAmixer), ("Alsactl output", sofAlsactl)]))
                .hardware().first)
        return FakeCardConfiguration.render(card)
    }

    @Test func theCardsIdentityIsWhatUCMMatches() throws {
        let text = try rendered().text
        #expect(text.contains("audioroute_fakecard.sofsoundwire {\n"))
        #expect(text.contains("\tdriver \"sof-soundwire\" name \"sof-soundwire\" longname \"Intel Soundwire SOF\"\n"))
        #expect(text.contains("\tcomponents \"HDA:8086280b,80860101,00100000 cfg-spk:4 cfg-amp:2 hs:rt711 spk:rt1308 mic:rt715\" mixername \"Intel Kabylake HDMI\"\n"))
    }

    @Test func eachControlHasItsTypeLimitsAndValues() throws {
        let lines = try rendered().text.split(separator: "\n").map { $0.trimmingSpace() }
        #expect(lines.contains("\"Headphone Jack\" { iface card type boolean jack true value [ off ] }"))
        #expect(lines.contains("\"Headset Mic Jack\" { iface card type boolean jack true value [ on ] }"))
        #expect(lines.contains("\"Speaker Switch\" { type boolean value [ on ] }"))
        #expect(lines.contains("\"rt711 FU0F Capture Volume\" { type integer count 2 min 0 max 63 value [ 63 63 ] }"))
        // Not a jack for the watcher (phantom), but a card control all the same.
        #expect(lines.contains("\"Speaker Phantom Jack\" { iface card type boolean value [ on ] }"))
    }

    @Test func aControlWithAnIndexIsKeyedApartAndNamed() throws {
        let lines = try rendered().text.split(separator: "\n").map { $0.trimmingSpace() }
        #expect(lines.contains("\"PGA5.0 5 Master Capture Route,1\" { name \"PGA5.0 5 Master Capture Route\" index 1 type enumerated items [ \"Mic\" \"Line In\" ] value [ \"Line In\" ] }"))
    }

    @Test func typesAndInterfacesTheFakeCardCannotHoldAreSkippedWithANote() throws {
        let result = try rendered()
        #expect(result.skipped == ["\"ELD\": type bytes, which the fake card cannot hold"])
        #expect(result.text.contains("# skipped \"ELD\": type bytes"))
        #expect(!result.text.contains("\"ELD\" {"))
    }

    /// A control of more values than the fake card holds (a DSP's table of 32) is skipped with
    /// a note: kept, the plugin would refuse the whole card.
    @Test func aControlOfMoreChannelsThanTheFakeCardHoldsIsSkipped() throws {
        var card = try #require(
            try ALSAInfoReport.parse(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Amixer output", sofAmixer), ("Alsactl output", sofAlsactl)]))
                .hardware().first)
        var table = try #require(card.controls.first { $0.type == "INTEGER" })
        table.name = "EQIIR1.0 Coefficients"
        table.count = 32
        table.values = Array(repeating: "0", count: 32)
        card.controls.append(table)
        let result = FakeCardConfiguration.render(card)
        #expect(result.skipped.contains("\"EQIIR1.0 Coefficients\": 32 channels, over the 16 the fake card holds"), "\(result.skipped)")
        #expect(!result.text.contains("\"EQIIR1.0 Coefficients\" {"))
    }

    @Test func theTextReadsBackAsTheSameControls() throws {
        // Read with this target's reader of ALSA's syntax: every control comes back with its fields.
        let text = try rendered().text
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { ReportLine(number: $0.offset + 1, text: $0.element) }
        let (root, fault) = ConfigReader.parse(lines)
        #expect(fault == nil)
        let controls = try #require(root.first { $0.key == "audioroute_fakecard" }?.node["sofsoundwire"]?["controls"])
        #expect(controls.members.map(\.key) == [
            "Headphone Jack", "Headset Mic Jack", "Speaker Switch", "rt711 FU0F Capture Volume", "PGA5.0 5 Master Capture Route,1", "HDMI/DP,pcm=5 Jack",
            "Speaker Phantom Jack",
        ])
        #expect(controls["PGA5.0 5 Master Capture Route,1"]?["value"]?["0"]?.leaf == "Line In")
    }

    @Test func namesWithQuotesAreEscaped() {
        #expect(FakeCardConfiguration.quoted("a \"b\" \\c") == "\"a \\\"b\\\" \\\\c\"")
        #expect(FakeCardConfiguration.quotedKey("PCH") == "PCH")
        #expect(FakeCardConfiguration.quotedKey("a b") == "\"a b\"")
    }
}
