// A port's data sources (a UCM card's several built-in mics): which one is used, whose
// preference counts, and what the route and the UCM card are told.
@testable import AudioRouteCore
import Testing

/// A laptop whose built-in mic has two data sources on different PCMs (a SOF laptop's DMIC
/// array on PCM 6 and its analog mic on PCM 0), the DMIC first by priority.
private func laptopWithTwoMics() throws -> [Port] {
    var mic = port("mic", .builtInMic, device: "internal", sequence: 2, alsa: try ALSADevice(parsing: "dsnoop:CARD=sofhdadsp,DEV=6"))
    mic.dataSources = [
        DataSource(id: "Mic1", name: "Digital Microphone", alsa: try ALSADevice(parsing: "dsnoop:CARD=sofhdadsp,DEV=6")),
        DataSource(id: "Mic2", name: "Stereo Microphone", alsa: try ALSADevice(parsing: "dsnoop:CARD=sofhdadsp,DEV=0")),
    ]
    return [port("spk", .builtInSpeaker, device: "internal", sequence: 1), mic]
}

@Suite struct DataSourceSelectionTests {
    @Test func aPortWithoutDataSourcesHasNoSelection() {
        #expect(DataSourceSelection.select(port: port("mic", .builtInMic), preferred: nil) == nil)
        #expect(DataSourceSelection.select(port: port("mic", .builtInMic), preferred: "Mic1") == nil)
    }

    @Test func withoutAPreferenceTheProfilesHighestPriorityIsUsed() throws {
        let mic = try laptopWithTwoMics()[1]
        let selection = try #require(DataSourceSelection.select(port: mic, preferred: nil))
        #expect(selection.source.id == "Mic1")
        #expect(selection.rule == .profilePriority)
    }

    @Test func thePreferenceIsUsedWhenThePortHasIt() throws {
        let mic = try laptopWithTwoMics()[1]
        let selection = try #require(DataSourceSelection.select(port: mic, preferred: "Mic2"))
        #expect(selection.source.id == "Mic2")
        #expect(selection.rule == .preferredDataSource)
    }

    @Test func aPreferenceThePortNoLongerHasFallsBackAndSaysSo() throws {
        let mic = try laptopWithTwoMics()[1]
        let selection = try #require(DataSourceSelection.select(port: mic, preferred: "Mic9"))
        #expect(selection.source.id == "Mic1")
        #expect(selection.rule == .profilePriority)
        #expect(selection.reason.contains(text: "Mic9"))
    }
}

@Suite struct TowerDataSourceTests {
    /// A tower with the laptop and an active recording session "call" controlling the route.
    private func recording() throws -> Tower {
        var tower = try makeTower(try laptopWithTwoMics(), sessions: [("call", .playAndRecord, .voiceChat, []), ("other", .playAndRecord, .default, .mixWithOthers)])
        _ = try tower.setActive(true, session: "call")
        return tower
    }

    @Test func theControllingSessionsPreferenceMovesTheRouteToItsPCM() throws {
        var tower = try recording()
        #expect(tower.route.inputs == ["mic"])
        #expect(tower.routeDataSources == ["mic": "Mic1"])
        #expect(tower.routePort("mic")?.alsa?.description == "dsnoop:CARD=sofhdadsp,DEV=6")
        let outcome = try tower.setPreferredDataSource("Mic2", port: "mic", session: "call")
        let change = try #require(outcome.change)
        // Same route, another configuration: announced, with the PCM the card records from.
        #expect(change.reason == .routeConfigurationChange)
        #expect(change.current == change.previous)
        #expect(change.currentPorts.inputs.first?.alsa?.description == "dsnoop:CARD=sofhdadsp,DEV=0")
        #expect(tower.routeDataSources == ["mic": "Mic2"])
        #expect(tower.selectedDataSource("mic")?.rule == .preferredDataSource)
        // The port itself is unchanged: its first data source's PCM.
        #expect(tower.port("mic")?.alsa?.description == "dsnoop:CARD=sofhdadsp,DEV=6")
        // Cleared: the first comes back, announced again.
        let cleared = try tower.setPreferredDataSource(nil, port: "mic", session: "call")
        #expect(cleared.change?.currentPorts.inputs.first?.alsa?.description == "dsnoop:CARD=sofhdadsp,DEV=6")
        #expect(tower.routeDataSources == ["mic": "Mic1"])
    }

    @Test func anotherSessionsPreferenceCountsOnlyWhileItControls() throws {
        var tower = try recording()
        let outcome = try tower.setPreferredDataSource("Mic2", port: "mic", session: "other")
        #expect(outcome.change == nil)
        #expect(tower.routeDataSources == ["mic": "Mic1"])
        #expect(tower.session("other")?.preferredDataSources == ["mic": "Mic2"])
        // It activates mixable: the non-mixable call still controls, and its (none) counts.
        _ = try tower.setActive(true, session: "other")
        #expect(tower.controllingSession?.id == "call")
        #expect(tower.routeDataSources == ["mic": "Mic1"])
        // The call ends: the other session controls, and its preference counts.
        let ended = try tower.setActive(false, session: "call")
        #expect(tower.routeDataSources == ["mic": "Mic2"])
        #expect(ended.change?.currentPorts.inputs.first?.alsa?.description == "dsnoop:CARD=sofhdadsp,DEV=0")
    }

    @Test func anotherDataSourceOnTheSamePCMIsStillANewConfiguration() throws {
        // The bench's card: two mics on one PCM, told apart by their enable sequences only.
        var mic = port("mic", .builtInMic, device: "internal", alsa: try ALSADevice(parsing: "hw:Intel,0"))
        mic.dataSources = [DataSource(id: "Mic", alsa: mic.alsa), DataSource(id: "Mic2", alsa: mic.alsa)]
        var tower = try makeTower([port("spk", .builtInSpeaker, device: "internal"), mic], sessions: [("call", .playAndRecord, .voiceChat, [])])
        _ = try tower.setActive(true, session: "call")
        let outcome = try tower.setPreferredDataSource("Mic2", port: "mic", session: "call")
        #expect(outcome.change?.reason == .routeConfigurationChange)
        #expect(tower.routeDataSources == ["mic": "Mic2"])
    }

    @Test func theSamePreferenceTwiceAnnouncesNothing() throws {
        var tower = try recording()
        _ = try tower.setPreferredDataSource("Mic2", port: "mic", session: "call")
        #expect(try tower.setPreferredDataSource("Mic2", port: "mic", session: "call").change == nil)
    }

    @Test func badPreferencesAreRefusedAndChangeNothing() throws {
        var tower = try recording()
        #expect(throws: SessionError.unknownDataSource(port: "mic", source: "Mic9")) {
            try tower.setPreferredDataSource("Mic9", port: "mic", session: "call")
        }
        #expect(throws: SessionError.unknownDataSource(port: "spk", source: "Mic1")) {
            try tower.setPreferredDataSource("Mic1", port: "spk", session: "call")
        }
        #expect(throws: SessionError.unknownPort("nope")) { try tower.setPreferredDataSource("Mic1", port: "nope", session: "call") }
        #expect(throws: SessionError.unknownSession("ghost")) { try tower.setPreferredDataSource("Mic1", port: "mic", session: "ghost") }
        #expect(tower.session("call")?.preferredDataSources == [:])
        #expect(SessionError.unknownDataSource(port: "mic", source: "Mic9").description == #"port "mic" has no data source "Mic9""#)
    }

    @Test func thePreferenceIsForgottenWhenThePortGoes() throws {
        var tower = try recording()
        _ = try tower.setPreferredDataSource("Mic2", port: "mic", session: "call")
        _ = try tower.setPreferredDataSource("Mic2", port: "mic", session: "other")
        _ = try tower.removePorts(["mic"])
        #expect(tower.session("call")?.preferredDataSources == [:])
        #expect(tower.session("other")?.preferredDataSources == [:])
        _ = try tower.addPorts([try laptopWithTwoMics()[1]])
        #expect(tower.route.inputs == ["mic"])
        #expect(tower.routeDataSources == ["mic": "Mic1"])
    }
}

@Suite struct UCMCardDataSourceTests {
    static let hello = """
        {"card": "hw:sofhdadsp", "verbs": ["HiFi", "Voice Call"], "ports": [\
        {"uid": "ucm:hw:sofhdadsp:builtInMic", "type": "builtInMic", "direction": "input", "device": "ucm:hw:sofhdadsp", \
        "name": "Digital Microphone", "alsa": "hw:sofhdadsp,6", \
        "dataSources": [{"id": "Mic1", "name": "Digital Microphone", "alsa": "hw:sofhdadsp,6"}, \
        {"id": "Mic2", "name": "Stereo Microphone", "alsa": "hw:sofhdadsp,0"}], \
        "devices": {"HiFi": ["Mic1", "Mic2"], "Voice Call": ["Mic1"]}}]}
        """

    @Test func theHelloCarriesTheDataSources() throws {
        let card = try UCMCard.parseHello(Array(Self.hello.utf8))
        let mic = try #require(card.ports.first)
        #expect(mic.port.dataSources.map(\.id) == ["Mic1", "Mic2"])
        #expect(mic.port.dataSources.map(\.name) == ["Digital Microphone", "Stereo Microphone"])
        #expect(mic.port.dataSources[1].alsa?.description == "hw:sofhdadsp,0")
        // And Port.json writes them back as read.
        #expect(mic.port.json.text.contains(text: #""dataSources": [{"id": "Mic1", "name": "Digital Microphone", "alsa": "hw:sofhdadsp,6"}"#))
    }

    @Test func theSelectedDataSourceIsEnabledWhereTheVerbHasIt() throws {
        let card = try UCMCard.parseHello(Array(Self.hello.utf8))
        let route = Route(inputs: ["ucm:hw:sofhdadsp:builtInMic"])
        #expect(card.target(route: route, configuration: nil) == UCMState(verb: "HiFi", devices: ["Mic1"]))
        #expect(card.target(route: route, configuration: nil, dataSources: ["ucm:hw:sofhdadsp:builtInMic": "Mic2"]) == UCMState(verb: "HiFi", devices: ["Mic2"]))
        // Voice Call has Mic1 only: its first.
        let call = try SessionConfiguration(category: .playAndRecord, mode: .voiceChat)
        #expect(
            card.target(route: route, configuration: call, dataSources: ["ucm:hw:sofhdadsp:builtInMic": "Mic2"])
                == UCMState(verb: "Voice Call", devices: ["Mic1"]))
    }

    @Test func badDataSourcesNameTheFault() {
        func hello(_ sources: String) -> [UInt8] {
            Array("""
                {"card": "hw:X", "verbs": ["HiFi"], "ports": [{"uid": "m", "type": "builtInMic", "device": "d", \
                "devices": {"HiFi": ["Mic1"]}, "dataSources": \(sources)}]}
                """.utf8)
        }
        let many = "[" + (0...DataSource.maximumPerPort).map { #"{"id": "Mic\#($0)"}"# }.joined(separator: ", ") + "]"
        let cases: [(String, String)] = [
            (#"{"id": "Mic1"}"#, "ports[0].dataSources: expected an array"),
            (#"[{"id": ""}]"#, "ports[0].dataSources[0].id: must not be empty"),
            (#"[{"name": "x"}]"#, "missing key \"id\""),
            (#"[{"id": "Mic1"}, {"id": "Mic1"}]"#, "ports[0].dataSources[1].id: duplicate data source \"Mic1\""),
            (#"[{"id": "Mic1", "alsa": "hw:X,0\nx"}]"#, "ports[0].dataSources[0].alsa"),
            (#"[{"id": "Mic1", "where": "front"}]"#, "unknown key \"where\""),
            (many, "17 data sources (at most 16)"),
        ]
        for (sources, fault) in cases {
            #expect {
                try UCMCard.parseHello(hello(sources))
            } throws: { error in
                "\(error)".contains(text: fault)
            }
        }
    }
}
