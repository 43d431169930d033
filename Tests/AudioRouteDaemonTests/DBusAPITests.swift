// The D-Bus API end to end: the built audiorouted on a private dbus-daemon, and
// client processes (Tests/Fixtures/dbus/client.py, dbus-python) calling it and
// recording its signals.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteDaemon
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import FoundationEssentials
import Testing

#if canImport(Glibc)
import Glibc
#endif

private let manager = DBusAPI.managerPath
private let properties = DBusAPI.propertiesInterface

/// The string inside a `{"reply": "…"}` line.
private func replyString(_ line: String) throws -> String {
    struct Reply: Decodable { var reply: String }
    return try JSONDecoder().decode(Reply.self, from: Data(line.utf8)).reply
}

@Suite(.serialized) struct DBusIntrospectionTests {
    static let xmlPath = fixturesDirectory + "/../../dbus/org.audioroute.AudioRoute1.xml"

    @Test func liveIntrospectionServesTheCheckedInInterfaces() throws {
        let daemon = try RunningDaemon()
        let client = try APIClient(address: daemon.bus.address)
        let file = try readText(Self.xmlPath)
        let session = try client.openSession("intro", category: "playback")

        let managerXML = try replyString(client.call(manager, DBusAPI.introspectableInterface, "Introspect"))
        let sessionXML = try replyString(client.call(session, DBusAPI.introspectableInterface, "Introspect"))
        let managerBlock = DBusAPI.interfaceBlock(DBusAPI.managerInterface, in: managerXML)
        let sessionBlock = DBusAPI.interfaceBlock(DBusAPI.sessionInterface, in: sessionXML)
        #expect(managerBlock != nil && managerBlock == DBusAPI.interfaceBlock(DBusAPI.managerInterface, in: file))
        #expect(sessionBlock != nil && sessionBlock == DBusAPI.interfaceBlock(DBusAPI.sessionInterface, in: file))
        let monitorBlock = DBusAPI.interfaceBlock(DBusAPI.monitorInterface, in: managerXML)
        #expect(monitorBlock != nil && monitorBlock == DBusAPI.interfaceBlock(DBusAPI.monitorInterface, in: file))
        // The file describes exactly these three API interfaces; each object serves only its own
        // (the manager: its own and the monitors' broadcast).
        #expect(file.split(separator: "<interface name=\"org.audioroute.").count == 4)
        #expect(DBusAPI.interfaceBlock(DBusAPI.sessionInterface, in: managerXML) == nil)
        #expect(DBusAPI.interfaceBlock(DBusAPI.monitorInterface, in: sessionXML) == nil)
        #expect(DBusAPI.interfaceBlock(DBusAPI.managerInterface, in: sessionXML) == nil)
        #expect(managerXML.contains("<node name=\"session\"/>"))
        #expect(managerXML.contains("<interface name=\"org.freedesktop.DBus.Properties\">"))
        let nodeXML = try replyString(client.call(DBusAPI.sessionsPath, DBusAPI.introspectableInterface, "Introspect"))
        #expect(nodeXML.contains("<node name=\"\(session.split(separator: "/").last!)\"/>"))
    }
}

@Suite(.serialized) struct DBusPropertyTests {
    @Test func everyManagerPropertyReadsWithItsType() throws {
        let daemon = try RunningDaemon()
        let client = try APIClient(address: daemon.bus.address)
        #expect(client.property(manager, DBusAPI.managerInterface, "Version") == "{\"reply\": \(DBusAPI.version)}")
        #expect(client.property(manager, DBusAPI.managerInterface, "Route") == "{\"reply\": [[], []]}")
        #expect(client.property(manager, DBusAPI.managerInterface, "Ports") == "{\"reply\": []}")
        #expect(client.property(manager, DBusAPI.managerInterface, "SilentMode") == "{\"reply\": false}")
        #expect(client.property(manager, DBusAPI.managerInterface, "Sessions") == "{\"reply\": []}")
        #expect(client.property(manager, DBusAPI.managerInterface, "AllPorts") == "{\"reply\": []}")
        let session = try client.openSession("music", category: "playback", options: ["mixWithOthers"])
        #expect(
            client.property(manager, DBusAPI.managerInterface, "Sessions")
                == "{\"reply\": [[\"\(session)\", \"\(client.uniqueName)\", \"music\", \"playback\", \"default\", [\"mixWithOthers\"], false]]}")
        #expect(client.manager("SetSilentMode", "b", "[true]") == "{\"reply\": null}")
        #expect(client.signal("SilentModeChanged", args: "[true]") != nil)
        #expect(
            client.call(manager, properties, "GetAll", "s", "[\"org.audioroute.AudioRoute1\"]").hasPrefix(
                "{\"reply\": {\"Version\": \(DBusAPI.version), \"Route\": [[], []], \"Ports\": [], \"SilentMode\": true, \"Sessions\": [[\"\(session)\", \"\(client.uniqueName)\", \"music\", \"playback\", \"default\", [\"mixWithOthers\"], false]], \"AllPorts\": [], \"ScreenLocked\": false, \"SoundServer\": [\"\", \"no sound server: AudioRoute drives ALSA directly\", false, [], \"noServer\", ")
        )
        // The explanation of the empty route.
        #expect(client.manager("Explain") == "{\"reply\": [\"noSuitableRoute\", \"notUsedByCategory\", []]}")
    }

    /// `SessionStates` (revision 7): each session's process and program as the bus and /proc
    /// said, and where it stands: a music session ducked by a prompt, then interrupted by a call,
    /// which takes the route.
    @Test func sessionStatesSayProcessProgramAndState() throws {
        let daemon = try RunningDaemon()
        let musicClient = try APIClient(address: daemon.bus.address)
        let promptClient = try APIClient(address: daemon.bus.address)
        let callClient = try APIClient(address: daemon.bus.address)
        let music = try musicClient.openSession("music", category: "playback")
        let prompt = try promptClient.openSession("navigation", category: "playback", mode: "voicePrompt", options: ["duckOthers"])
        let call = try callClient.openSession("call", category: "playAndRecord", mode: "voiceChat")
        func states() -> String { musicClient.property(manager, DBusAPI.managerInterface, "SessionStates") }
        func entry(_ path: String, _ client: APIClient, _ state: String, _ marks: [String]) -> String {
            "[\"\(path)\", \(client.process.pid), \"python3\", \"\(state)\", [\(marks.map(json).joined(separator: ", "))]]"
        }
        #expect(
            states()
                == "{\"reply\": [\(entry(music, musicClient, "inactive", [])), \(entry(prompt, promptClient, "inactive", [])), \(entry(call, callClient, "inactive", []))]}")
        #expect(musicClient.session(music, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
        #expect(promptClient.session(prompt, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
        // The prompt mixes (duckOthers): the music keeps the route, ducked.
        #expect(
            states()
                == "{\"reply\": [\(entry(music, musicClient, "active", ["controlsRoute", "ducked"])), \(entry(prompt, promptClient, "active", [])), \(entry(call, callClient, "inactive", []))]}")
        #expect(callClient.session(call, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
        // The prompt ducks the call too.
        #expect(
            states()
                == "{\"reply\": [\(entry(music, musicClient, "interrupted", [])), \(entry(prompt, promptClient, "active", [])), \(entry(call, callClient, "active", ["controlsRoute", "ducked"]))]}")
        // The call ends with notifyOthers: the music's interruption ends; it is inactive until it resumes.
        #expect(callClient.session(call, "SetActive", "bb", "[false, true]") == "{\"reply\": null}")
        #expect(
            states()
                == "{\"reply\": [\(entry(music, musicClient, "inactive", [])), \(entry(prompt, promptClient, "active", ["controlsRoute"])), \(entry(call, callClient, "inactive", []))]}")
    }

    @Test func everySessionPropertyReadsWithItsType() throws {
        let daemon = try RunningDaemon()
        let client = try APIClient(address: daemon.bus.address)
        let other = try APIClient(address: daemon.bus.address)
        let session = try client.openSession("call", category: "playAndRecord", mode: "voiceChat", options: ["allowBluetooth"])
        let music = try other.openSession("music", category: "playback")
        #expect(other.session(music, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
        #expect(
            client.call(session, properties, "GetAll", "s", "[\"org.audioroute.Session1\"]")
                == "{\"reply\": {\"Category\": \"playAndRecord\", \"Mode\": \"voiceChat\", \"Options\": [\"allowBluetooth\"], \"Active\": false, \"PreferredInput\": \"\", \"OtherAudioPlaying\": true, \"SecondaryAudioShouldBeSilencedHint\": true}}"
        )
        #expect(client.property(session, DBusAPI.sessionInterface, "Active") == "{\"reply\": false}")
        #expect(client.property(music, DBusAPI.sessionInterface, "Active") == "{\"reply\": true}")
        #expect(client.property(session, DBusAPI.sessionInterface, "Nope").hasPrefix("{\"error\": \"org.freedesktop.DBus.Error.UnknownProperty\""))
        #expect(
            client.call(session, properties, "Set", "ssv", "[\"org.audioroute.Session1\", \"Active\", true]")
                .hasPrefix("{\"error\": \"org.freedesktop.DBus.Error.PropertyReadOnly\""))
    }
}

@Suite(.serialized) struct DBusArbitrationTests {
    @Test func aCallInterruptsMusicAndNotifyOthersLetsItResume() throws {
        let daemon = try RunningDaemon()
        let music = try APIClient(address: daemon.bus.address)
        let phone = try APIClient(address: daemon.bus.address)
        let song = try music.openSession("music", category: "playback")
        #expect(music.session(song, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
        let call = try phone.openSession("phone", category: "playAndRecord", mode: "voiceChat")
        #expect(phone.session(call, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
        #expect(music.signal("Interruption", path: song, args: "[\"began\", \"default\", false]") != nil)
        #expect(music.property(song, DBusAPI.sessionInterface, "Active") == "{\"reply\": false}")
        // Sent to the owner only: the phone saw no Interruption of its own.
        #expect(phone.signals("Interruption", seconds: 0.3).isEmpty)
        #expect(phone.session(call, "SetActive", "bb", "[false, true]") == "{\"reply\": null}")
        #expect(music.signal("Interruption", path: song, args: "[\"ended\", \"\", true]") != nil)
    }

    @Test func navigationDucksMusicAndItsDeathUnducks() throws {
        let daemon = try RunningDaemon()
        let music = try APIClient(address: daemon.bus.address)
        let navigation = try APIClient(address: daemon.bus.address)
        let song = try music.openSession("music", category: "playback")
        #expect(music.session(song, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
        let directions = try navigation.openSession("nav", category: "playback", mode: "spokenAudio", options: ["duckOthers"])
        #expect(navigation.session(directions, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
        #expect(music.signal("Ducked", path: song) != nil)
        #expect(music.property(song, DBusAPI.sessionInterface, "Active") == "{\"reply\": true}")
        // Killed while ducking: its session is deactivated as if with notifyOthers, and closed.
        navigation.process.kill(SIGKILL)
        #expect(music.signal("Unducked", path: song) != nil)
        #expect(
            music.property(manager, DBusAPI.managerInterface, "Sessions")
                == "{\"reply\": [[\"\(song)\", \"\(music.uniqueName)\", \"music\", \"playback\", \"default\", [], true]]}")
    }

    @Test func aKilledCallerLetsTheInterruptedResume() throws {
        let daemon = try RunningDaemon()
        let music = try APIClient(address: daemon.bus.address)
        let phone = try APIClient(address: daemon.bus.address)
        let song = try music.openSession("music", category: "playback")
        #expect(music.session(song, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
        let call = try phone.openSession("phone", category: "playAndRecord")
        #expect(phone.session(call, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
        #expect(music.signal("Interruption", path: song, args: "[\"began\", \"default\", false]") != nil)
        phone.process.kill(SIGKILL)
        #expect(music.signal("Interruption", path: song, args: "[\"ended\", \"\", true]") != nil)
    }

    @Test func ambientAudioHearsHintsAndSilentMode() throws {
        let daemon = try RunningDaemon()
        let game = try APIClient(address: daemon.bus.address)
        let music = try APIClient(address: daemon.bus.address)
        let ambient = try game.openSession("game", category: "ambient")
        #expect(game.session(ambient, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
        let song = try music.openSession("music", category: "playback")
        #expect(music.session(song, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
        #expect(game.signal("SilenceSecondaryAudioHint", path: ambient, args: "[\"begin\"]") != nil)
        #expect(game.property(ambient, DBusAPI.sessionInterface, "SecondaryAudioShouldBeSilencedHint") == "{\"reply\": true}")
        #expect(music.session(song, "SetActive", "bb", "[false, false]") == "{\"reply\": null}")
        #expect(game.signal("SilenceSecondaryAudioHint", path: ambient, args: "[\"end\"]") != nil)
        // Silent mode silences ambient sessions only, and everyone hears it switched.
        #expect(music.manager("SetSilentMode", "b", "[true]") == "{\"reply\": null}")
        #expect(game.signal("Silenced", path: ambient) != nil)
        #expect(game.signal("SilentModeChanged", args: "[true]") != nil)
        #expect(music.signal("SilentModeChanged", args: "[true]") != nil)
        #expect(music.signals("Silenced", seconds: 0.3).isEmpty)
        #expect(music.manager("SetSilentMode", "b", "[false]") == "{\"reply\": null}")
        #expect(game.signal("Unsilenced", path: ambient) != nil)
    }

    @Test func onlyTheOwnerMayUseASession() throws {
        let daemon = try RunningDaemon()
        let owner = try APIClient(address: daemon.bus.address)
        let intruder = try APIClient(address: daemon.bus.address)
        let song = try owner.openSession("music", category: "playback")
        for (member, signature, arguments) in [
            ("SetActive", "bb", "[true, false]"), ("SetCategory", "ssas", "[\"ambient\", \"default\", []]"), ("Close", "", "[]"),
        ] {
            let reply = intruder.session(song, member, signature, arguments)
            #expect(reply.hasPrefix("{\"error\": \"org.audioroute.Error.NotOwner\""), "\(member): \(reply)")
        }
        #expect(owner.property(song, DBusAPI.sessionInterface, "Active") == "{\"reply\": false}")
        #expect(owner.property(song, DBusAPI.sessionInterface, "Category") == "{\"reply\": \"playback\"}")
        // Reading is not using.
        #expect(intruder.property(song, DBusAPI.sessionInterface, "Category") == "{\"reply\": \"playback\"}")
        #expect(owner.session(song, "Close") == "{\"reply\": null}")
        #expect(owner.property(song, DBusAPI.sessionInterface, "Category").hasPrefix("{\"error\": \"org.freedesktop.DBus.Error.UnknownObject\""))
    }
}

@Suite(.serialized) struct DBusBadInputTests {
    @Test func refusedCallsGetNamedErrorsAndChangeNothing() throws {
        let daemon = try RunningDaemon()
        let client = try APIClient(address: daemon.bus.address)
        let song = try client.openSession("music", category: "playback")
        let cases: [(String, String, String, String, String)] = [
            // member, signature, arguments, error, message fragment
            ("SetCategory", "s", "[\"playback\"]", "org.freedesktop.DBus.Error.InvalidArgs", "expected signature \\\"ssas\\\", got \\\"s\\\""),
            ("SetCategory", "ssas", "[\"playbak\", \"default\", []]", "org.audioroute.Error.UnknownName", "unknown category \\\"playbak\\\""),
            ("SetCategory", "ssas", "[\"playback\", \"loud\", []]", "org.audioroute.Error.UnknownName", "unknown mode \\\"loud\\\""),
            ("SetCategory", "ssas", "[\"playback\", \"default\", [\"x\"]]", "org.audioroute.Error.UnknownName", "unknown option \\\"x\\\""),
            (
                "SetCategory", "ssas", "[\"playback\", \"default\", [\"defaultToSpeaker\"]]", "org.audioroute.Error.InvalidOption",
                "option defaultToSpeaker is not valid with category playback"
            ),
            ("SetCategory", "ssas", "[{\"big\": 1048576}, \"default\", []]", "org.freedesktop.DBus.Error.InvalidArgs", "a string of more than 4096 bytes; at most 4096 are accepted"),
            ("SetActive", "b", "[true]", "org.freedesktop.DBus.Error.InvalidArgs", "expected signature \\\"bb\\\""),
            ("OverrideOutput", "s", "[\"speaker\"]", "org.audioroute.Error.InvalidOverride", "only valid with playAndRecord"),
            ("OverrideOutput", "s", "[\"loud\"]", "org.audioroute.Error.UnknownName", "unknown override \\\"loud\\\""),
            ("SetPreferredInput", "s", "[\"no-such-mic\"]", "org.audioroute.Error.UnknownPort", "no port \\\"no-such-mic\\\""),
            ("SetPreferredDataSource", "ss", "[\"no-such-mic\", \"Mic1\"]", "org.audioroute.Error.UnknownPort", "no port \\\"no-such-mic\\\""),
            ("SetPreferredDataSource", "s", "[\"no-such-mic\"]", "org.freedesktop.DBus.Error.InvalidArgs", "expected signature \\\"ss\\\", got \\\"s\\\""),
            ("SetPreferredDataSource", "ss", "[\"mic\", {\"big\": 1048576}]", "org.freedesktop.DBus.Error.InvalidArgs", "at most 4096 are accepted"),
            ("PreferredDataSource", "s", "[\"no-such-mic\"]", "org.audioroute.Error.UnknownPort", "no port \\\"no-such-mic\\\""),
            ("PreferredDataSource", "s", "[{\"big\": 1048576}]", "org.freedesktop.DBus.Error.InvalidArgs", "at most 4096 are accepted"),
            ("Dance", "", "[]", "org.freedesktop.DBus.Error.UnknownMethod", "has no method Dance"),
        ]
        for (member, signature, arguments, error, fragment) in cases {
            let reply = client.session(song, member, signature, arguments)
            #expect(reply.hasPrefix("{\"error\": \"\(error)\""), "\(member) \(arguments): \(reply)")
            #expect(reply.contains(fragment), "\(member) \(arguments): \(reply)")
        }
        let managerCases: [(String, String, String, String, String)] = [
            ("SetPortPriority", "s", "[\"spk\"]", "org.freedesktop.DBus.Error.InvalidArgs", "expected signature \\\"si\\\", got \\\"s\\\""),
            ("SetPortPriority", "si", "[\"spk\", 5000]", "org.freedesktop.DBus.Error.InvalidArgs", "priority 5000 is outside -1000"),
            ("SetPortPriority", "si", "[\"spk\", 10]", "org.audioroute.Error.UnknownPort", "no port \\\"spk\\\""),
            ("OpenSession", "s", "[{\"big\": 1048576}]", "org.freedesktop.DBus.Error.InvalidArgs", "at most 4096"),
            ("OpenSession", "i", "[3]", "org.freedesktop.DBus.Error.InvalidArgs", "expected signature \\\"s\\\""),
            ("SetSilentMode", "s", "[\"on\"]", "org.freedesktop.DBus.Error.InvalidArgs", "expected signature \\\"b\\\""),
            ("DataSources", "s", "[\"no-such-mic\"]", "org.audioroute.Error.UnknownPort", "no port \\\"no-such-mic\\\""),
            ("DataSources", "", "[]", "org.freedesktop.DBus.Error.InvalidArgs", "expected signature \\\"s\\\""),
            ("DataSources", "s", "[{\"big\": 1048576}]", "org.freedesktop.DBus.Error.InvalidArgs", "at most 4096 are accepted"),
        ]
        for (member, signature, arguments, error, fragment) in managerCases {
            let reply = client.manager(member, signature, arguments)
            #expect(reply.hasPrefix("{\"error\": \"\(error)\""), "\(member) \(arguments): \(reply)")
            #expect(reply.contains(fragment), "\(member) \(arguments): \(reply)")
        }
        let unknownObject = client.call(manager + "/session/99", DBusAPI.sessionInterface, "Close")
        #expect(unknownObject.hasPrefix("{\"error\": \"org.freedesktop.DBus.Error.UnknownObject\""))
        let unknownInterface = client.call(manager, "org.example.Nope", "Close")
        #expect(unknownInterface.hasPrefix("{\"error\": \"org.freedesktop.DBus.Error.UnknownInterface\""))
        // Nothing changed.
        #expect(
            client.call(song, properties, "GetAll", "s", "[\"org.audioroute.Session1\"]")
                == "{\"reply\": {\"Category\": \"playback\", \"Mode\": \"default\", \"Options\": [], \"Active\": false, \"PreferredInput\": \"\", \"OtherAudioPlaying\": false, \"SecondaryAudioShouldBeSilencedHint\": false}}"
        )
        #expect(
            client.call(manager, properties, "GetAll", "s", "[\"org.audioroute.AudioRoute1\"]").hasPrefix(
                "{\"reply\": {\"Version\": \(DBusAPI.version), \"Route\": [[], []], \"Ports\": [], \"SilentMode\": false, \"Sessions\": [[\"\(song)\", \"\(client.uniqueName)\", \"music\", \"playback\", \"default\", [], false]], \"AllPorts\": [], \"ScreenLocked\": false, \"SoundServer\": [\"\", \"no sound server: AudioRoute drives ALSA directly\", false, [], \"noServer\", ")
        )
    }

    @Test func sessionsPerNameAreCapped() throws {
        let daemon = try RunningDaemon()
        let client = try APIClient(address: daemon.bus.address)
        for index in 1...DBusAPI.maxSessionsPerName {
            let reply = client.manager("OpenSession", "s", "[\"app\(index)\"]")
            #expect(reply.hasPrefix("{\"reply\": \"/org/audioroute/AudioRoute1/session/"), "\(index): \(reply)")
        }
        let refused = client.manager("OpenSession", "s", "[\"one-too-many\"]")
        #expect(refused.hasPrefix("{\"error\": \"org.freedesktop.DBus.Error.LimitsExceeded\""), "\(refused)")
        // Another name is not affected.
        let other = try APIClient(address: daemon.bus.address)
        #expect(other.manager("OpenSession", "s", "[\"other\"]").hasPrefix("{\"reply\": "))
    }

    @Test func aFloodingOrVanishingClientDoesNotWedgeTheDaemon() throws {
        let daemon = try RunningDaemon()
        let flood = try ScriptedProcess("/usr/bin/python3", [APIClient.script, daemon.bus.address, "flood", "10000"])
        #expect(flood.take(seconds: 60) { $0.hasPrefix("{\"flooded\"") } != nil)
        let hangups = try (0..<5).map { _ in try ScriptedProcess("/usr/bin/python3", [APIClient.script, daemon.bus.address, "hangup"]) }
        for hangup in hangups { #expect(hangup.take(seconds: 30) { $0.hasPrefix("{\"hungup\"") } != nil) }
        // A second client is still answered (each answer awaited at most 20 s: a wedge fails, speed is the benchmark's business).
        let client = try APIClient(address: daemon.bus.address)
        #expect(client.property(manager, DBusAPI.managerInterface, "Version") == "{\"reply\": \(DBusAPI.version)}")
        let song = try client.openSession("music", category: "playback")
        #expect(client.session(song, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
        flood.kill()
        #expect(client.property(manager, DBusAPI.managerInterface, "Version") == "{\"reply\": \(DBusAPI.version)}")
        #expect(daemon.child.wait(seconds: 0) == nil)
    }
}

@Suite(.serialized) struct DBusStartupTests {
    @Test func aMissingSessionBusIsAClearStartupError() async throws {
        try await withTemporaryDirectory { dir in
            let child = try ChildProcess(
                RunningDaemon.binary, ["--state-dir", dir + "/state", "--runtime-dir", dir + "/run"],
                environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(dir)/no-bus"])
            #expect(child.wait(seconds: 20) == 69)
            #expect(
                child.availableStderr().contains(
                    "audiorouted: cannot serve the D-Bus API on the session bus: connect to the session bus: No such file or directory"))
        }
    }

    @Test func aMissingSystemBusIsAClearStartupError() async throws {
        try await withTemporaryDirectory { dir in
            let child = try ChildProcess(
                RunningDaemon.binary, ["--system", "--state-dir", dir + "/state", "--runtime-dir", dir + "/run"],
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(dir)/no-bus"])
            #expect(child.wait(seconds: 20) == 69)
            #expect(child.availableStderr().contains("audiorouted: cannot serve the D-Bus API on the system bus: open the system bus: No such file or directory"))
        }
    }

    @Test func losingTheBusStopsTheDaemonWithAnError() throws {
        let daemon = try RunningDaemon()
        let client = try APIClient(address: daemon.bus.address)
        #expect(client.property(manager, DBusAPI.managerInterface, "Version") == "{\"reply\": \(DBusAPI.version)}")
        daemon.bus.close()
        // Non-zero, so a service manager restarts it.
        #expect(daemon.child.wait(seconds: 20) == 69)
        #expect(daemon.child.availableStderr().contains("lost the bus"))
    }

    @Test func aTakenNameIsAClearStartupError() async throws {
        let daemon = try RunningDaemon()
        try await withTemporaryDirectory { dir in
            let child = try ChildProcess(
                RunningDaemon.binary, ["--state-dir", dir + "/state", "--runtime-dir", dir + "/run"],
                environment: ["DBUS_SESSION_BUS_ADDRESS": daemon.bus.address])
            #expect(child.wait(seconds: 20) == 69)
            #expect(child.availableStderr().contains("org.audioroute.AudioRoute1 on the session bus: it is owned by another connection"))
        }
        // The first daemon still serves.
        let client = try APIClient(address: daemon.bus.address)
        #expect(client.property(manager, DBusAPI.managerInterface, "Version") == "{\"reply\": \(DBusAPI.version)}")
    }
}
