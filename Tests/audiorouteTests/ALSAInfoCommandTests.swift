// End to end: the built `audioroute ports --alsa-info` on reports written here and on the
// corpus's (Tests/Fixtures/alsa-info), its JSON, its explanation and its errors.
import AudioRouteCore
import Testing

private let audioroute = Subprocess.product("audioroute")
private let corpus = Subprocess.packageRoot + "/Tests/Fixtures/alsa-info/"

/// A USB headset (snd-usb-audio's card driver, no sysfs section) and an HDA card whose udev
/// by-path link and HDMI jack control the report shows.
private let twoCards = """
    !!ALSA Information Script v 0.5.3

    !!Soundcards recognised by ALSA
    !!-----------------------------

     0 [PCH            ]: HDA-Intel - HDA Intel PCH
                          HDA Intel PCH at 0xf7f10000 irq 32
     1 [Headset        ]: USB-Audio - Jabra Headset
                          Jabra Headset at usb-0000:00:14.0-2, full speed

    !!ALSA Device nodes
    !!-----------------

    /dev/snd/by-path:
    lrwxrwxrwx 1 root root 12 Jan  1 10:00 pci-0000:00:1f.3 -> ../controlC0

    !!Aplay/Arecord output
    !!--------------------

    APLAY

    **** List of PLAYBACK Hardware Devices ****
    card 0: PCH [HDA Intel PCH], device 0: ALC289 Analog [ALC289 Analog]
    card 0: PCH [HDA Intel PCH], device 3: HDMI 0 [HDMI 0]
    card 1: Headset [Jabra Headset], device 0: USB Audio [USB Audio]

    ARECORD

    **** List of CAPTURE Hardware Devices ****
    card 0: PCH [HDA Intel PCH], device 0: ALC289 Analog [ALC289 Analog]
    card 1: Headset [Jabra Headset], device 0: USB Audio [USB Audio]

    !!Alsactl output
    !!--------------

    --startcollapse--
    state.PCH {
    \tcontrol.1 {
    \t\tiface CARD
    \t\tname 'HDMI/DP,pcm=3 Jack'
    \t\tvalue true
    \t\tcomment {
    \t\t\taccess read
    \t\t\ttype BOOLEAN
    \t\t\tcount 1
    \t\t}
    \t}
    }
    --endcollapse--

    """

/// scripts/build-alsa-plugin, once: the fake card the CLI gives the UCM helper for a report's
/// cards, found in .build/alsa-plugin beside the built CLI.
private let plugin: Result<Void, TestFailure> = {
    guard let result = try? Subprocess.run(Subprocess.packageRoot + "/scripts/build-alsa-plugin", []), result.status == 0 else {
        return .failure(TestFailure("scripts/build-alsa-plugin failed"))
    }
    return .success(())
}()

@Suite struct ALSAInfoCommandTests {
    func run(_ arguments: [String], report: String? = nil) throws -> ProcessResult {
        try plugin.get()
        return try withSyncTemporaryDirectory { directory in
            var arguments = arguments
            if let report {
                try writeFile(directory + "/alsa-info.txt", report)
                arguments = arguments.map { $0 == "REPORT" ? directory + "/alsa-info.txt" : $0 }
            }
            return try Subprocess.run(audioroute, arguments)
        }
    }

    @Test func jsonListsEachCardsPortsWithTheirPCMs() throws {
        let result = try run(["ports", "--alsa-info", "REPORT", "--json"], report: twoCards)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        guard case .array(let ports) = try JSON.parse(result.stdout) else { Issue.record("not an array: \(result.stdout)"); return }
        let summary = ports.map { "\($0["uid"]?.stringValue ?? "") \($0["type"]?.stringValue ?? "") \($0["alsa"]?.stringValue ?? "")" }
        #expect(
            summary == [
                "pci-0000:00:1f.3/speaker builtInSpeaker dmix:CARD=PCH,DEV=0", "pci-0000:00:1f.3/mic builtInMic dsnoop:CARD=PCH,DEV=0",
                "pci-0000:00:1f.3/hdmi-3 HDMI dmix:CARD=PCH,DEV=3", "card-Headset/output usbAudio dmix:CARD=Headset,DEV=0",
                "card-Headset/input usbAudio dsnoop:CARD=Headset,DEV=0",
            ])
        #expect(ports.map { $0["sequence"] } == (1...5).map { .integer(Int64($0)) })
    }

    /// The listing is `ports --direct`'s: every line ends in the port's availability, every JSON
    /// object has it, and only usable ports are numbered. The XPS 17's report: its headphone and
    /// headset jacks are out (the saved controls say so), HDMI pcm=7 is connected.
    @Test func theListingIsTheDirectOnesWithEachPortsAvailability() throws {
        let report = corpus + "laptop-dell-xps17-9700-sof-soundwire-usb-headset-wd19-dock.txt"
        let text = try run(["ports", "--alsa-info", report])
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdoutLines.map(String.init)
        // A port's line ends in its availability; its data sources' lines follow it, indented: the
        // profile's one built-in mic device (rt715's "Mic", "SoundWire microphones"), in use.
        let portLines = lines.filter { !$0.hasPrefix("  ") }
        #expect(!portLines.isEmpty && portLines.allSatisfy { $0.contains(" availability=") }, "\(lines)")
        #expect(lines.filter { $0.hasPrefix("  ") } == [#"  * data source Mic "SoundWire microphones" alsa=dsnoop:CARD=sofsoundwire,DEV=4"#], "\(lines)")
        #expect(lines.firstIndex { $0.contains("/mic  builtInMic") }.map { $0 + 1 } == lines.firstIndex { $0.hasPrefix("  * data source") })
        #expect(lines.contains { $0.contains("/headphones ") && $0.hasSuffix(" availability=unavailable") }, "\(lines)")
        let json = try run(["ports", "--alsa-info", report, "--json"])
        guard case .array(let ports) = try JSON.parse(json.stdout) else { Issue.record("not an array: \(json.stdout)"); return }
        #expect(ports.allSatisfy { $0["availability"] != nil }, "\(json.stdout)")
        let unavailable = ports.filter { $0["availability"]?.stringValue == "unavailable" }
        #expect(!unavailable.isEmpty && unavailable.allSatisfy { $0["sequence"] == .integer(0) }, "\(json.stdout)")
    }

    @Test func explainShowsTheReportsFieldsJacksAndSignals() throws {
        let result = try run(["ports", "--alsa-info", "REPORT", "--explain"], report: twoCards)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdoutLines.map(String.init)
        #expect(lines.contains("card0 id=PCH /sys/class/sound/card0"))
        #expect(lines.contains("  report: ID_PATH pci-0000:00:1f.3  <- ALSA Device nodes /dev/snd/by-path"))
        #expect(lines.contains("  jack \"HDMI/DP,pcm=3 Jack\" switches=[videoout] state=[videoout] source=control"))
        #expect(lines.contains { $0.hasPrefix("  pci-0000:00:1f.3/hdmi-3: HDMI output on PCM 3, availability connected  <- ") })
        #expect(lines.contains("  report: ID_BUS usb  <- card driver USB-Audio (no sysfs or by-path in the report)"))
        #expect(lines.contains("  report: no saved controls for the card (no \"Alsactl output\"): its jacks are unknown"))
    }

    @Test func explainJSONCarriesTheReportFieldsBesideTheDecisions() throws {
        let result = try run(["ports", "--alsa-info", corpus + "laptop-dell-xps17-9700-sof-soundwire-usb-headset-wd19-dock.txt", "--explain", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        guard case .array(let cards) = try JSON.parse(result.stdout) else { Issue.record("not an array"); return }
        #expect(cards.compactMap { $0["id"]?.stringValue } == ["sofsoundwire", "USB", "Dock"])
        guard case .array(let report)? = cards.first?["report"] else { Issue.record("no report fields"); return }
        #expect(report.contains { $0["field"]?.stringValue == "ID_PATH pci-0000:00:1f.3-platform-sof_sdw" })
        guard case .array(let jacks)? = cards.first?["jacks"] else { Issue.record("no jacks"); return }
        // The report's five jack controls (HDMI pcm=7 on), read from its "Alsactl output".
        #expect(jacks.count == 5)
        #expect(jacks.filter { $0["state"]?.stringValue == "[videoout]" }.compactMap { $0["name"]?.stringValue } == ["HDMI/DP,pcm=7 Jack"])
    }

    @Test func aCutReportWarnsAndStillListsItsPorts() throws {
        // No "Soundcards recognised by ALSA": the cards come from aplay -l, with a warning.
        let result = try run(["ports", "--alsa-info", corpus + "laptop-geminilake-sof-essx8336.txt"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("warning:") && result.stderr.contains("Soundcards recognised by ALSA"), "\(result.stderr)")
        #expect(result.stdoutLines.count == 3)
    }

    @Test func garbageAndMissingFilesFailWithTheirReason() throws {
        let garbage = try run(["ports", "--alsa-info", "REPORT"], report: "this is not a report\n\u{1}\u{2}\n")
        #expect(garbage.status == 65)
        #expect(garbage.stderr.contains("not an alsa-info.sh report"), "\(garbage.stderr)")
        let cut = try run(["ports", "--alsa-info", "REPORT"], report: "!!Soundcards recognised by ALSA\n!!-----------------------------\n\n 0 [PCH            ]: HDA-Intel - HDA Intel PCH\n")
        #expect(cut.status == 65)
        #expect(cut.stderr.contains("section \"Soundcards recognised by ALSA\""), "\(cut.stderr)")
        let missing = try run(["ports", "--alsa-info", "/nonexistent/alsa-info.txt"])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("/nonexistent/alsa-info.txt"), "\(missing.stderr)")
    }

    @Test func alsaInfoExcludesDirectAndUcmRootNeedsIt() throws {
        let both = try run(["ports", "--alsa-info", corpus + "laptop-geminilake-sof-essx8336.txt", "--direct"])
        #expect(both.status != 0 && both.stderr.contains("--alsa-info"), "\(both.stderr)")
        let ucm = try run(["ports", "--ucm-root", "/usr/share/alsa/ucm2"])
        #expect(ucm.status != 0 && ucm.stderr.contains("--ucm-root and --ucm-helper go with --direct or --alsa-info"), "\(ucm.stderr)")
    }
}

extension JSON {
    fileprivate var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }
}
