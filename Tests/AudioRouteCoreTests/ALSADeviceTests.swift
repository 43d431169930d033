// The ALSA device as a value: what each shape of PCM name is taken apart into (alsa-lib's
// syntax: `<type>:<args>`, positional args in the plugin's @args order, src/conf/pcm/*.conf),
// that every text renders back byte for byte, random texts and random values round-trip,
// names we do not take apart pass through, and bad input is an error that names the fault.
import AudioRouteCore
import Testing

@Suite struct ALSADeviceTests {
    private func card(_ text: String) throws -> ALSACardPCM? { try ALSADevice(parsing: text).cardPCM }

    @Test func theClassifiersSharedNamesAreTakenApart() throws {
        let pch = try #require(try card("dmix:CARD=PCH,DEV=3"))
        #expect(pch.plugin == .dmix && pch.card == .id("PCH") && pch.device == 3 && pch.channels == nil && pch.arguments == .keywords)
        #expect(pch.plugin.isShared)
        let mic = try #require(try card("dsnoop:CARD=sofhdadsp,DEV=6"))
        #expect(mic.plugin == .dsnoop && mic.card == .id("sofhdadsp") && mic.device == 6)
        let surround = try #require(try card("dmix:CARD=ICUSBAUDIO7D,DEV=0,CHANNELS=6"))
        #expect(surround.card == .id("ICUSBAUDIO7D") && surround.device == 0 && surround.channels == 6)
        let pi = try #require(try card("hdmi:CARD=vc4hdmi0,DEV=0"))
        #expect(pi.plugin == .hdmi && !pi.plugin.isShared && pi.card == .id("vc4hdmi0"))
        let exclusive = try #require(try card("plughw:CARD=sun50ia64audio,DEV=0"))
        #expect(exclusive.plugin == .plughw && !exclusive.plugin.isShared)
        // The fallback on the card's index, when its id is unusable.
        let byIndex = try #require(try card("dmix:2,0"))
        #expect(byIndex.card == .index(2) && byIndex.device == 0 && byIndex.arguments == .positional)
    }

    @Test func whatTheCodeBuildsRendersTodaysNames() {
        #expect(ALSADevice.card(ALSACardPCM(plugin: .dmix, card: .id("PCH"), device: 0)).description == "dmix:CARD=PCH,DEV=0")
        #expect(ALSADevice.card(ALSACardPCM(plugin: .dsnoop, card: .id("Pro"), device: 1)).description == "dsnoop:CARD=Pro,DEV=1")
        #expect(ALSACardPCM(plugin: .dmix, card: .id("Audio"), device: 0, channels: 8).description == "dmix:CARD=Audio,DEV=0,CHANNELS=8")
        #expect(ALSACardPCM(plugin: .dmix, card: .index(1), device: 3, arguments: .positional).description == "dmix:1,3")
        #expect(ALSACardPCM(plugin: .hdmi, card: .id("vc4hdmi1"), device: 0).description == "hdmi:CARD=vc4hdmi1,DEV=0")
        #expect(ALSADevice.bluealsa(BlueALSAPCM(address: "00:11:22:33:44:55", profile: .sco)).description == "bluealsa:DEV=00:11:22:33:44:55,PROFILE=sco")
        #expect(ALSADevice.bluealsa(BlueALSAPCM(address: "00:11:22:33:44:55", profile: .a2dp)).alsaName == "bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp")
    }

    /// A UCM profile's `hw:` PCM, shared as udev's ports are: the card and device stay, the
    /// plugin changes, written with keywords (and dmix's channel count is dmix's alone).
    @Test func aHardwarePCMThroughASharingPlugin() throws {
        #expect(try #require(try card("hw:PinePhone,0")).through(.dsnoop).description == "dsnoop:CARD=PinePhone,DEV=0")
        #expect(try #require(try card("hw:PCH")).through(.dmix).description == "dmix:CARD=PCH,DEV=0")
        #expect(try #require(try card("hw:1,2")).through(.plughw).description == "plughw:CARD=1,DEV=2")
        #expect(try #require(try card("dmix:CARD=A,DEV=0,CHANNELS=6")).through(.plughw).description == "plughw:CARD=A,DEV=0")
    }

    @Test func bluealsaNamesAreTakenApart() throws {
        guard case .bluealsa(let pcm) = try ALSADevice(parsing: "bluealsa:DEV=00:1A:7D:DA:71:13,PROFILE=sco") else {
            Issue.record("not BlueALSA's")
            return
        }
        #expect(pcm.address == "00:1A:7D:DA:71:13" && pcm.profile == .sco)
        for other in ["bluealsa:DEV=00:1A:7D:DA:71,PROFILE=sco", "bluealsa:DEV=00:1A:7D:DA:71:13,PROFILE=hfp", "bluealsa:PROFILE=sco,DEV=00:1A:7D:DA:71:13", "bluealsa"] {
            #expect(try ALSADevice(parsing: other) == .named(other), "\(other)")
        }
    }

    /// A name this program does not take apart is passed on as it was written: a UCM profile's
    /// own word, an administrator's PCM, a spelling we would not write ourselves.
    @Test(arguments: [
        "default", "null", "routetest_a", "_ucm0001.hw:sofhdadsp,6", "front:CARD=PCH", "hw:Intel,x", "hw:,0", "hw:Intel,-1",
        "dmix", "dmix:DEV=0", "plug:'dmix:CARD=PCH,DEV=0'", "file:/tmp/out.wav,raw",
        "hw:CARD=a=b", "équaliseur", "hw:CARD=X,DEV=0,DEV=1",
    ])
    func namesNotTakenApartPassThroughVerbatim(_ text: String) throws {
        let device = try ALSADevice(parsing: text)
        #expect(device.description == text)
        #expect(device.cardPCM == nil)
        #expect(device == .named(text))
    }

    /// Arguments beyond the card, device and dmix's channels are kept as written, in their
    /// place; the card and device are still said.
    @Test(arguments: [
        ("hw:X,0,1", ALSACardPCM.Plugin.hw, 0 as Int?, nil as Int?, ["1"]), ("hw:CARD=X,SUBDEV=1", .hw, nil, nil, ["SUBDEV=1"]),
        ("dsnoop:CARD=X,CHANNELS=2", .dsnoop, nil, nil, ["CHANNELS=2"]), ("dmix:CARD=X,DEV=0,CHANNELS=6,RATE=48000", .dmix, 0, 6, ["RATE=48000"]),
        ("hdmi:CARD=X,DEV=0,AES0=0x06", .hdmi, 0, nil, ["AES0=0x06"]),
    ])
    func furtherArgumentsAreKept(_ text: String, _ plugin: ALSACardPCM.Plugin, _ device: Int?, _ channels: Int?, _ others: [String]) throws {
        let pcm = try #require(try card(text))
        #expect(pcm.description == text)
        #expect(pcm.plugin == plugin && pcm.card == .id("X") && pcm.device == device && pcm.channels == channels && pcm.otherArguments == others)
        // Sharing takes the card and device alone.
        #expect(pcm.through(.dsnoop).description == "dsnoop:CARD=X,DEV=\(device ?? 0)")
    }

    /// Spellings of a card's PCM that the value would write otherwise keep their text, and
    /// still say their card and device.
    @Test(arguments: [
        ("plughw:CARD=\"USB\",DEV=0", ALSACard.id("USB"), 0), ("plughw:DEV=0,CARD=X", .id("X"), 0), ("hw:X,DEV=3", .id("X"), 3),
        ("hw:CARD=X,3", .id("X"), 3), ("hw:X,007", .id("X"), 7), ("hw:01,0", .id("01"), 0), ("hw:CARD=1,DEV=0", .index(1), 0),
    ])
    func otherSpellingsKeepTheirText(_ text: String, _ card: ALSACard, _ device: Int) throws {
        let pcm = try #require(try self.card(text))
        #expect(pcm.description == text)
        #expect(pcm.card == card && pcm.device == device)
    }

    @Test func devicesAreEqualWhenTheirTextsAre() throws {
        #expect(try ALSADevice(parsing: "dmix:CARD=PCH,DEV=0") == .card(ALSACardPCM(plugin: .dmix, card: .id("PCH"), device: 0)))
        #expect(ALSADevice.named("dmix:CARD=PCH,DEV=0") == .card(ALSACardPCM(plugin: .dmix, card: .id("PCH"), device: 0)))
        #expect(try ALSADevice(parsing: "hw:PCH,0") != ALSADevice(parsing: "hw:CARD=PCH,DEV=0"))
        #expect(Set([try ALSADevice(parsing: "hw:PCH,0"), .named("hw:PCH,0")]).count == 1)
    }

    @Test func badInputIsAnErrorThatNamesTheFault() {
        #expect(throws: ALSADeviceError.empty) { try ALSADevice(parsing: "") }
        #expect(throws: ALSADeviceError.controlCharacter(offset: 13)) { try ALSADevice(parsing: "plughw:CARD=X\n}\npcm.evil { type null") }
        #expect(throws: ALSADeviceError.controlCharacter(offset: 3)) { try ALSADevice(parsing: "del\u{7F}") }
        #expect(throws: ALSADeviceError.controlCharacter(offset: 0)) { try ALSADevice(parsing: "\thw:0") }
        #expect(throws: ALSADeviceError.tooLong(bytes: 257)) { try ALSADevice(parsing: "dmix:CARD=" + String(repeating: "x", count: 247)) }
        #expect(throws: ALSADeviceError.tooLong(bytes: 1 << 20)) { try ALSADevice(parsing: String(repeating: "é", count: 1 << 19)) }
        #expect((try? ALSADevice(parsing: "dmix:CARD=" + String(repeating: "x", count: 246)))?.description.utf8.count == 256)
        #expect(ALSADeviceError.controlCharacter(offset: 13).description == "control character in ALSA PCM name at byte 13")
        #expect(ALSADeviceError.tooLong(bytes: 300).description == "ALSA PCM name of 300 bytes, longer than 256")
        #expect(ALSADeviceError.empty.description == "empty ALSA PCM name")
    }

    /// A scenario's port (the simulation format) carries its text; a bad one names the fault.
    @Test func aScenariosPortParsesItsPCM() throws {
        func scenario(_ alsa: String) throws(ScenarioError) -> Scenario {
            try Scenario.parse(Array(#"{"ports": [{"uid": "u", "type": "usbAudio", "device": "d", "alsa": "\#(alsa)"}]}"#.utf8))
        }
        let good = try scenario("hw:X,0,1")
        #expect(good.ports.first?.alsa == .named("hw:X,0,1"))
        #expect(good.ports.first?.alsa?.description == "hw:X,0,1")
        #expect(try scenario("dmix:CARD=PCH,DEV=0").ports.first?.alsa?.cardPCM?.card == .id("PCH"))
        for (alsa, message) in [(#"a\u0001b"#, "control character in ALSA PCM name at byte 1"), ("", "must not be empty")] {
            let error = #expect(throws: ScenarioError.self) { try scenario(alsa) }
            #expect(error?.path == "ports[0].alsa" && error?.message == message, "\(String(describing: error))")
        }
    }

    // MARK: Round trips

    /// Random texts over the characters PCM names are made of: whatever is parsed renders the
    /// same bytes, and parsing the rendering gives an equal value.
    @Test func randomTextsRoundTripByteForByte() throws {
        let pieces = [
            "hw", "plughw", "dmix", "dsnoop", "hdmi", "bluealsa", "front", "_ucm0001.", ":", ",", "=", "CARD", "DEV", "CHANNELS", "SUBDEV",
            "PROFILE", "a2dp", "sco", "0", "1", "07", "-1", "+2", "PCH", "\"", " ", "é", "00:11:22:33:44:55", "${CardId}", "x",
        ]
        let plugins = ["hw", "plughw", "dmix", "dsnoop", "hdmi", "bluealsa", "front", "_ucm0001.hw"]
        let arguments = [
            "CARD=PCH", "CARD=1", "CARD=\"USB\"", "CARD=", "DEV=0", "DEV=12", "DEV=x", "CHANNELS=6", "CHANNELS=0", "SUBDEV=0", "PROFILE=sco",
            "DEV=00:11:22:33:44:55", "PCH", "2", "03", "", "a b", "=",
        ]
        var random = SplitMix(state: 0xA15A_DE71_CE00_0028)
        var parsedAsCard = 0
        for _ in 0..<20_000 {
            // Half of them shaped like a plugin's name and its arguments, half any sequence of pieces.
            let text: String
            if Bool.random(using: &random) {
                let count = Int.random(in: 1...4, using: &random)
                text = plugins.randomElement(using: &random)! + ":" + (0..<count).map { _ in arguments.randomElement(using: &random)! }.joined(separator: ",")
            } else {
                text = (0..<Int.random(in: 1...9, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            }
            let device = try ALSADevice(parsing: text)
            #expect(device.description == text)
            #expect(try ALSADevice(parsing: device.description) == device)
            if device.cardPCM != nil { parsedAsCard += 1 }
        }
        // The generator reaches the card shapes, not only names kept whole.
        #expect(parsedAsCard > 500)
    }

    /// Random values: rendered and parsed back, they are the same card, device, channels,
    /// plugin and argument style, and render the same text.
    @Test func randomValuesRoundTrip() throws {
        var random = SplitMix(state: 0x0A15_ADE7_1CE0_0003)
        let ids = ["PCH", "Intel", "sofhdadsp", "vc4hdmi0", "ICUSBAUDIO7D", "a-b_c", "Pro", "X1"]
        for _ in 0..<5_000 {
            let plugin = ALSACardPCM.Plugin.allCases.randomElement(using: &random)!
            let card: ALSACard = Bool.random(using: &random) ? .id(ids.randomElement(using: &random)!) : .index(Int.random(in: 0...31, using: &random))
            let device = Bool.random(using: &random) ? Int.random(in: 0...31, using: &random) : nil
            let channels = plugin == .dmix && Bool.random(using: &random) ? Int.random(in: 1...8, using: &random) : nil
            let arguments: ALSACardPCM.Arguments = Bool.random(using: &random) ? .keywords : .positional
            let value = ALSACardPCM(plugin: plugin, card: card, device: device, channels: channels, arguments: arguments)
            let back = try #require(try ALSADevice(parsing: value.description).cardPCM, "\(value)")
            #expect(back.plugin == plugin && back.card == card && back.device == device && back.channels == channels && back.arguments == arguments, "\(value)")
            #expect(back.otherArguments.isEmpty, "\(value)")
            #expect(back.description == value.description)
        }
        for profile in BlueALSAPCM.Profile.allCases {
            let value = ALSADevice.bluealsa(BlueALSAPCM(address: "AA:bb:0C:1d:EE:ff", profile: profile))
            #expect(try ALSADevice(parsing: value.description) == value)
            guard case .bluealsa(let back) = try ALSADevice(parsing: value.description) else {
                Issue.record("\(value) not parsed as BlueALSA's")
                continue
            }
            #expect(back.address == "AA:bb:0C:1d:EE:ff" && back.profile == profile)
        }
    }
}
