// Bad input: a clear error naming the section and the fault, never a crash; a cut last section
// that leaves the cards readable is a warning.
@testable import AudioRouteALSAInfo
import Testing

@Suite struct ErrorTests {
    func error(_ text: String) -> ALSAInfoError? {
        do {
            _ = try ALSAInfoReport.parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func aCardWithoutItsLongNameLineIsACutCardsSection() {
        let cut = report([("Soundcards recognised by ALSA", " 0 [PCH            ]: HDA-Intel - HDA Intel PCH")])
        let fault = error(cut)
        #expect(fault?.section == "Soundcards recognised by ALSA")
        #expect(fault?.message.contains("long-name") == true, "\(String(describing: fault))")
    }

    @Test func aMalformedCardLineIsNamedWithItsLine() {
        let bad = report([("Soundcards recognised by ALSA", " zero [PCH]: HDA-Intel - HDA Intel PCH\n    at 0x1")])
        let fault = error(bad)
        #expect(fault?.section == "Soundcards recognised by ALSA" && fault?.line == 9, "\(String(describing: fault))")
    }

    @Test func aCutPCMLineIsAnError() {
        let cut = report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", "APLAY\n\ncard 0: sofsoundwire [sof-soundwire], device 2: Spea\n\nARECORD\n")])
        let fault = error(cut)
        #expect(fault?.section == "Aplay/Arecord output" && fault?.message.contains("cut or malformed") == true, "\(String(describing: fault))")
    }

    @Test func aListingCutBeforeArecordIsAnError() {
        let cut = report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", "APLAY\n\n**** List of PLAYBACK Hardware Devices ****\ncard 0: sofsoundwire [sof-soundwire], device 2: Speaker (*) []\n")])
        #expect(error(cut)?.message.contains("ARECORD part is missing") == true)
    }

    @Test func aPCMOfACardTheCardsSectionLacksIsAnError() {
        let text = report([("Soundcards recognised by ALSA", " 1 [USB            ]: USB-Audio - X\n                      X at usb"), ("Aplay/Arecord output", sofPCMs)])
        #expect(error(text)?.message.contains("lists no card 0") == true)
    }

    @Test func twoReportsPastedTogetherAreAnError() {
        let one = report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs)])
        #expect(error(one + one)?.message.contains("appears twice") == true)
    }

    @Test func garbageIsNotAReport() {
        #expect(error("hello\nworld\n\u{0}\u{1}!!\n")?.message.contains("not an alsa-info.sh report") == true)
        #expect(error("")?.message.contains("not an alsa-info.sh report") == true)
        var bytes = [UInt8](repeating: 0xFF, count: 4096)
        bytes[100] = UInt8(ascii: "!")
        #expect(throws: ALSAInfoError.self) { try ALSAInfoReport.parse(bytes) }
    }

    @Test func aMalformedAlsactlStateIsAnErrorNamingTheControl() {
        let bad = sofAlsactl.replacing("range '0 - 63 (step 1)'", with: "range 'zero to 63'")
        let fault = error(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Alsactl output", bad)]))
        #expect(fault?.section == "Alsactl output" && fault?.message.contains("control.4") == true && fault?.message.contains("range") == true, "\(String(describing: fault))")
        let unbalanced = error(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Alsactl output", "state.X {\n}\n}\n}")]))
        #expect(unbalanced?.section == "Alsactl output", "\(String(describing: unbalanced))")
    }

    @Test func anAmixerCardLineWithoutItsLongNameIsAnError() {
        let bad = report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Amixer output", "!!-------Mixer controls for card PCH\n\nCard hw:0 'PCH'/'\n")])
        #expect(error(bad)?.section == "Amixer output")
    }

    @Test func anAlsactlBlockOfTooManyEntriesIsRefused() {
        // Each entry is a fresh key of one compound: quadratic to merge if it were read.
        let entries = (0...ConfigReader.maxEntries).map { "\tk\($0) 1" }.joined(separator: "\n")
        let fault = error(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Alsactl output", "state.X {\n\(entries)\n}")]))
        #expect(fault?.message.contains("more than \(ConfigReader.maxEntries) entries") == true, "\(String(describing: fault))")
    }

    /// A dotted key is as many levels as it has components: 100,000 of them (a 200 KB line)
    /// would recurse as deep, and overflow the stack, if it were read.
    @Test func aDottedKeyDeeperThanTheLimitIsRefused() {
        let key = "state." + Array(repeating: "a", count: 100_000).joined(separator: ".")
        let fault = error(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Alsactl output", "\(key) 1")]))
        #expect(fault?.section == "Alsactl output" && fault?.message.contains("nests deeper than \(ConfigReader.maxDepth) levels") == true, "\(String(describing: fault))")
        // Dotted keys and blocks add up: a key of 10 inside blocks 7 deep is 17.
        let mixed = "state.a { b { c { d { e { f { " + Array(repeating: "k", count: 10).joined(separator: ".") + " 1 } } } } } }"
        let deep = error(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Alsactl output", mixed)]))
        #expect(deep?.message.contains("nests deeper") == true, "\(String(describing: deep))")
    }

    @Test func aCutAlsactlStateKeepsTheControlsBeforeTheCutWithAWarning() throws {
        let lines = sofAlsactl.split(separator: "\n", omittingEmptySubsequences: false)
        // Cut inside control.5 (its name line is the last whole line).
        let cutAt = try #require(lines.firstIndex { $0.contains("PGA5.0 5 Master Capture Route") })
        let cut = lines[...cutAt].joined(separator: "\n")
        let parsed = try ALSAInfoReport.parse(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Alsactl output", cut)]))
        #expect(parsed.controls["sofsoundwire"]?.map(\.numid) == [1, 2, 3, 4])
        #expect(parsed.warnings.count == 1 && parsed.warnings.first?.section == "Alsactl output" && parsed.warnings.first?.message.contains("cut short") == true)
        // The jacks before the cut still count.
        #expect(parsed.hardware().first?.jacks.map(\.name) == ["Headphone Jack", "Headset Mic Jack"])
    }

    @Test func aCutCodecSectionWarnsAndKeepsThePinsBeforeTheCut() throws {
        let codecs = "Codec: Realtek ALC289\nAddress: 0\nNode 0x12 [Pin Complex] wcaps 0x40040b: Stereo Amp-In\n  Pin Default 0x90a60130: [Fixed] Mic at Int N/A\nNode 0x14 [Pin Complex] wcaps 0x40058d: Stereo Amp-Out\n  Pincap 0x00010014: OUT EAPD Detect"
        let text = report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("HDA-Intel Codec information", codecs)])
        let parsed = try ALSAInfoReport.parse(text.trimmingTrailingSpace() + "\n")
        #expect(parsed.codecs.first?.pinList.count == 1)
        #expect(parsed.warnings.contains { $0.section == "HDA-Intel Codec information" && $0.message.contains("0x14") })
        let bad = report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("HDA-Intel Codec information", "Codec: X\nNode 0x14 [Pin Complex]\n  Pin Default 0x9017: [Fixed]")])
        #expect(error(bad)?.section == "HDA-Intel Codec information")
    }

    @Test func anInputOverTheLimitIsRefusedBeforeItIsRead() throws {
        try withSyncTemporaryDirectory { directory -> Void in
            let path = directory + "/huge.txt"
            // A sparse file: its size says too big, and nothing of it needs reading to say so.
            let made = try Subprocess.run("/usr/bin/truncate", ["-s", String(ALSAInfoReport.maxBytes + 1), path])
            #expect(made.status == 0)
            #expect {
                _ = try ALSAInfoReport.read(path: path)
            } throws: { error in
                // Named with the size stat gave: refused before reading, not after reading too much.
                (error as? ALSAInfoError)?.message.contains("has \(ALSAInfoReport.maxBytes + 1) bytes: more than") == true
            }
            #expect(throws: ALSAInfoError.self) { try ALSAInfoReport.parse([UInt8](repeating: 0x41, count: ALSAInfoReport.maxBytes + 1)) }
        }
    }

    @Test func aDirectoryIsNotAReport() throws {
        try withSyncTemporaryDirectory { directory -> Void in
            #expect(throws: ALSAInfoError.self) { try ALSAInfoReport.read(path: directory) }
        }
    }
}
