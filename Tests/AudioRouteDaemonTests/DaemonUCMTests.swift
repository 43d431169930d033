import AudioRouteCore
import AudioRouteTestKit
import Foundation
import Testing

/// audiorouted with a phone card (the PinePhone's udev record under umockdev) that has a UCM
/// profile: the daemon asks the UCM helper about the card, the card's ports come from its
/// hello line, and every route change reaches the helper as the verb and devices it needs
/// (docs/ucm.md). The helper here is mostly a stand-in script that records what it is sent;
/// the real `audioroute-ucm` on the real UCM files is tested in AudioRouteALSATests, and
/// with the daemon at the end.
@Suite(.serialized) struct DaemonUCMTests {
    static var daemonBinary: String { (UmockdevTestbed.binary as NSString).deletingLastPathComponent + "/audiorouted" }

    static let hello = """
        {"card": "hw:5", "verbs": ["HiFi", "Voice Call"], "notes": [], "ports": [\
        {"uid": "ucm:hw:PinePhone:Speaker:output", "type": "builtInSpeaker", "direction": "output", "device": "ucm:hw:PinePhone", \
        "name": "Internal speaker", "priority": 0, "alsa": "hw:PinePhone,0", "devices": {"HiFi": ["Speaker"], "Voice Call": ["Speaker"]}, "jackControl": null}, \
        {"uid": "ucm:hw:PinePhone:Earpiece:output", "type": "builtInReceiver", "direction": "output", "device": "ucm:hw:PinePhone", \
        "name": "Internal earpiece", "alsa": "hw:PinePhone,0", "devices": {"HiFi": ["Earpiece"], "Voice Call": ["Earpiece"]}}, \
        {"uid": "ucm:hw:PinePhone:Headphone:output", "type": "headphones", "direction": "output", "device": "ucm:hw:PinePhone", \
        "name": "Headphones", "alsa": "hw:PinePhone,0", "devices": {"HiFi": ["Headphone"], "Voice Call": ["Headphone"]}, "jackControl": "Headphone Jack"}, \
        {"uid": "ucm:hw:PinePhone:builtInMic", "type": "builtInMic", "direction": "input", "device": "ucm:hw:PinePhone", \
        "name": "Internal microphone", "alsa": "hw:PinePhone,0", "devices": {"HiFi": ["DigitalMic"], "Voice Call": ["DigitalMic"]}}], \
        "jacks": {"Headphone Jack": false}}
        """

    /// A stand-in helper: records its start and environment, answers an open of the PinePhone
    /// with `hello` (a hello, or a failure), any other open with "no profile", then records each
    /// request and answers it as the real one does.
    static func writeHelper(in directory: String, hello: String) throws -> String {
        let path = directory + "/fake-ucm-helper"
        let script = """
            #!/bin/sh
            echo "$$ $* UCM2=$ALSA_CONFIG_UCM2" >> "\(directory)/helper-starts"
            # The headphones plugged in when the test creates the file "plug" (while the helper runs).
            # (It ends with the helper: a killed one is a zombie until the daemon reads its end.)
            ( while [ ! -e "\(directory)/plug" ] && ! grep -q '^State:.*Z' /proc/$$/status 2>/dev/null && [ -e /proc/$$ ]; do sleep 0.05; done
              [ -e "\(directory)/plug" ] && printf '{"card": "hw:5", "jack": "Headphone Jack", "plugged": true}\\n' ) &
            while IFS= read -r line; do
              printf '%s\\n' "$line" >> "\(directory)/helper-lines"
              case "$line" in
                '{"open": "hw:5"}') printf '%s\\n' '\(hello)' ;;
                '{"open": '*) printf '{"card": "%s", "error": "no UCM configuration", "closed": true, "noProfile": true}\\n' "$(echo "$line" | cut -d'"' -f4)" ;;
                '{"close": '*) printf '{"card": "%s", "closed": true}\\n' "$(echo "$line" | cut -d'"' -f4)" ;;
                *) printf '%s\\n' "$line" >> "\(directory)/helper-requests"
                   printf '{"card": "hw:5", "verb": null, "devices": [], "steps": []}\\n' ;;
              esac
            done
            echo "$$ eof" >> "\(directory)/helper-starts"
            """
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    /// A UCM tree whose PinePhone profile names an earpiece, as alsa-ucm-conf's does: what
    /// makes the daemon ask the helper for the card's ports.
    static func writeUCMRoot(in directory: String) throws -> String {
        let root = directory + "/ucm2"
        try FileManager.default.createDirectory(atPath: root + "/PinePhone", withIntermediateDirectories: true)
        try "SectionUseCase.\"HiFi\" { File \"/PinePhone/HiFi.conf\" }\n".write(toFile: root + "/PinePhone/PinePhone.conf", atomically: true, encoding: .utf8)
        try "SectionDevice.\"Earpiece\" { }\nSectionDevice.\"Speaker\" { }\n".write(toFile: root + "/PinePhone/HiFi.conf", atomically: true, encoding: .utf8)
        return root
    }

    struct Bench {
        let bench: UmockdevTestbed
        let bus: PrivateBus
        let daemon: UmockdevTestbed.Running
        let directory: String
        var address: [String] { ["--bus-address", bus.address] }

        /// The uids of the daemon's ports a route may use, sorted; one "error: ..." entry if the CLI failed.
        func ports() -> [String] { portNames().map { String($0.prefix { $0 != " " }) } }

        /// The daemon's ports a route may use as "uid name", sorted: UCM's ports are named by the
        /// profile's comments, udev's by their type ("Speaker"), so the names tell where a port came from.
        func portNames(availability wanted: Set<String> = ["available", "unknown"]) -> [String] {
            guard let run = try? bench.run(["ports", "--json"] + address) else { return ["error: audioroute did not run"] }
            guard case .array(let ports)? = try? JSON.parse(run.stdout) else { return ["error: \(run.stdout) \(run.stderr)"] }
            return ports.compactMap { port in
                guard wanted.contains(port["availability"]?.string ?? "available") else { return nil }
                return port["uid"]?.string.map { "\($0) \(port["name"]?.string ?? "")" }
            }.sorted()
        }

        func requests() -> [String] {
            ((try? String(contentsOfFile: directory + "/helper-requests", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        /// Every line the helper was sent, opens and closes among them.
        func lines() -> [String] {
            ((try? String(contentsOfFile: directory + "/helper-lines", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        func starts() -> [String] {
            ((try? String(contentsOfFile: directory + "/helper-starts", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        /// Waits up to 10 s for `condition`.
        func wait(_ condition: () -> Bool) -> Bool {
            for _ in 0..<500 {
                if condition() { return true }
                usleep(20_000)
            }
            return condition()
        }
    }

    static func withDaemon(
        hello: String, helper: String? = nil, ucmRoot: String? = nil, environment: [String: String] = [:],
        fixture: String = "soc-pinephone-simple-card", _ body: (Bench) throws -> Void
    ) throws {
        let bus = try PrivateBus()
        defer { bus.close() }
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        let directory = bench.root + "/scratch/ucm"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let helperPath = try helper ?? writeHelper(in: directory, hello: hello)
        let root = try ucmRoot ?? writeUCMRoot(in: directory)
        try bench.load(fixture)
        let daemon = try bench.start(
            ["--state-dir", directory + "/state", "--runtime-dir", directory + "/run", "--ucm-root", root, "--ucm-helper", helperPath,
             "--log-level", "info"],
            binary: daemonBinary, environment: environment.merging(["DBUS_SESSION_BUS_ADDRESS": bus.address]) { _, new in new })
        defer { _ = try? daemon.stop(SIGTERM) }
        let context = Bench(bench: bench, bus: bus, daemon: daemon, directory: directory)
        #expect(context.wait { (try? bench.run(["status", "--json"] + context.address).status) == 0 }, "stderr: \(daemon.stderr)")
        try body(context)
    }

    @Test func thePhoneCardsPortsComeFromUCMAndEveryRouteReachesTheHelper() throws {
        try Self.withDaemon(hello: Self.hello) { bench in
            let expected = ["platform-sound/mic Internal microphone", "platform-sound/receiver Internal earpiece", "platform-sound/speaker Internal speaker"]
            // The headphones' jack is out (the helper read its control): the port is listed, unavailable.
            #expect(bench.wait { bench.portNames() == expected }, "\(bench.portNames())\n\(bench.daemon.stderr)")
            #expect(bench.portNames(availability: ["unavailable"]) == ["platform-sound/headphones Headphones"])
            #expect(bench.starts().first?.hasSuffix(" UCM2=\(bench.directory)/ucm2") == true, "\(bench.starts())")
            // No session: HiFi on the speaker.
            #expect(bench.wait { bench.requests().first == #"{"card": "hw:5", "verb": "HiFi", "devices": ["Speaker"]}"# }, "\(bench.requests())")

            // A call (one app's session through the D-Bus API): Voice Call, on the earpiece and the built-in mic.
            let phone = try APIClient(address: bench.bus.address)
            defer { phone.process.kill(SIGKILL) }
            let call = try phone.openSession("phone", category: "playAndRecord", mode: "voiceChat")
            #expect(phone.session(call, "SetActive", "bb", "[true, false]") == #"{"reply": null}"#)
            #expect(
                bench.wait { bench.requests().last == #"{"card": "hw:5", "verb": "Voice Call", "devices": ["Earpiece", "DigitalMic"]}"# },
                "\(bench.requests())\n\(bench.daemon.stderr)")
            // The call put on the speaker (overrideOutputAudioPort(.speaker)) and back: the
            // devices follow, the verb stays.
            #expect(phone.session(call, "OverrideOutput", "s", #"["speaker"]"#) == #"{"reply": null}"#)
            #expect(
                bench.wait { bench.requests().last == #"{"card": "hw:5", "verb": "Voice Call", "devices": ["Speaker", "DigitalMic"]}"# },
                "\(bench.requests())")
            #expect(phone.session(call, "OverrideOutput", "s", #"["none"]"#) == #"{"reply": null}"#)
            #expect(
                bench.wait { bench.requests().last == #"{"card": "hw:5", "verb": "Voice Call", "devices": ["Earpiece", "DigitalMic"]}"# },
                "\(bench.requests())")
            // Headphones plugged in during the call (the helper's jack event): the call moves to them.
            #expect(FileManager.default.createFile(atPath: bench.directory + "/plug", contents: nil))
            #expect(bench.wait { bench.ports().contains("platform-sound/headphones") }, "\(bench.ports())")
            #expect(
                bench.wait { bench.requests().last == #"{"card": "hw:5", "verb": "Voice Call", "devices": ["Headphone", "DigitalMic"]}"# },
                "\(bench.requests())")
            // The call ends: music's verb on the headphones.
            #expect(phone.session(call, "SetActive", "bb", "[false, false]") == #"{"reply": null}"#)
            #expect(bench.wait { bench.requests().last == #"{"card": "hw:5", "verb": "HiFi", "devices": ["Headphone"]}"# }, "\(bench.requests())")
            // Each state once: a route that does not change the card's state sends nothing.
            let requests = bench.requests()
            #expect(zip(requests, requests.dropFirst()).allSatisfy { $0 != $1 }, "\(requests)")
        }
    }

    /// The phone's hello with a second built-in mic on another PCM: the mic port's data sources.
    static let helloWithTwoMics = hello.replacingOccurrences(
        of: #""name": "Internal microphone", "alsa": "hw:PinePhone,0", "devices": {"HiFi": ["DigitalMic"], "Voice Call": ["DigitalMic"]}}"#,
        with: #""name": "Internal microphone", "alsa": "hw:PinePhone,0", "dataSources": [{"id": "DigitalMic", "name": "Internal microphone", "alsa": "hw:PinePhone,0"}, {"id": "Mic2", "name": "Bottom microphone", "alsa": "hw:PinePhone,1"}], "devices": {"HiFi": ["DigitalMic", "Mic2"], "Voice Call": ["DigitalMic", "Mic2"]}}"#)

    @Test func aPreferredDataSourceIsEnabledAndTheRouteFileOpensItsPCM() throws {
        #expect(Self.helloWithTwoMics != Self.hello)
        try Self.withDaemon(hello: Self.helloWithTwoMics) { bench in
            let mic = "platform-sound/mic"
            #expect(bench.wait { bench.ports().contains(mic) }, "\(bench.portNames())\n\(bench.daemon.stderr)")
            let routeFile = bench.directory + "/run/audioroute/asound.conf"
            func routeFileHas(_ text: String) -> Bool { ((try? String(contentsOfFile: routeFile, encoding: .utf8)) ?? "").contains(text) }
            // Listed with its data sources, the first (the profile's highest priority) in use.
            let listing = try bench.bench.run(["ports", "--json"] + bench.address)
            func elements(_ json: JSON?) -> [JSON] { if case .array(let items)? = json { items } else { [] } }
            let port = try #require(elements(try JSON.parse(listing.stdout)).first { $0["uid"]?.string == mic })
            #expect(port["dataSources"]?.text == #"[{"id": "DigitalMic", "name": "Internal microphone", "alsa": "dsnoop:CARD=PinePhone,DEV=0"}, {"id": "Mic2", "name": "Bottom microphone", "alsa": "dsnoop:CARD=PinePhone,DEV=1"}]"#)
            #expect(port["selectedDataSource"] == "DigitalMic")

            let phone = try APIClient(address: bench.bus.address)
            defer { phone.process.kill(SIGKILL) }
            let call = try phone.openSession("phone", category: "playAndRecord", mode: "voiceChat")
            #expect(phone.session(call, "SetActive", "bb", "[true, false]") == #"{"reply": null}"#)
            #expect(
                bench.wait { bench.requests().last == #"{"card": "hw:5", "verb": "Voice Call", "devices": ["Earpiece", "DigitalMic"]}"# },
                "\(bench.requests())\n\(bench.daemon.stderr)")
            #expect(bench.wait { routeFileHas("dsnoop:CARD=PinePhone,DEV=0") })

            // The call prefers the second mic: the card enables it, the route file opens its PCM.
            #expect(phone.session(call, "SetPreferredDataSource", "ss", #"["\#(mic)", "Mic2"]"#) == #"{"reply": null}"#)
            #expect(
                bench.wait { bench.requests().last == #"{"card": "hw:5", "verb": "Voice Call", "devices": ["Earpiece", "Mic2"]}"# },
                "\(bench.requests())")
            #expect(bench.wait { routeFileHas("dsnoop:CARD=PinePhone,DEV=1") }, "\((try? String(contentsOfFile: routeFile, encoding: .utf8)) ?? "")")
            #expect(phone.session(call, "PreferredDataSource", "s", #"["\#(mic)"]"#) == #"{"reply": "Mic2"}"#)
            let reply = phone.manager("DataSources", "s", #"["\#(mic)"]"#)
            #expect(reply.hasPrefix(#"{"reply": [[["DigitalMic", "Internal microphone", "dsnoop:CARD=PinePhone,DEV=0"], ["Mic2", "Bottom microphone", "dsnoop:CARD=PinePhone,DEV=1"]], "Mic2", "the controlling session prefers Mic2"]"#), "\(reply)")
            // `audioroute explain` says which one and why.
            let explain = try bench.bench.run(["explain"] + bench.address)
            #expect(explain.stdout.contains("data source of \(mic): Mic2: the controlling session prefers Mic2"), "\(explain.stdout)")
            let status = try bench.bench.run(["status", "--json"] + bench.address)
            #expect(elements(try JSON.parse(status.stdout)["route"]?["inputs"]).first?["selectedDataSource"] == "Mic2", "\(status.stdout)")

            // A data source the port does not have: refused by name, nothing changes.
            let refused = phone.session(call, "SetPreferredDataSource", "ss", #"["\#(mic)", "Mic9"]"#)
            #expect(refused.hasPrefix(#"{"error": "org.audioroute.Error.UnknownDataSource""#) && refused.contains("has no data source"), "\(refused)")
            #expect(phone.session(call, "PreferredDataSource", "s", #"["\#(mic)"]"#) == #"{"reply": "Mic2"}"#)
            let cli = try bench.bench.run(["data-source", mic, "Mic9"] + bench.address)
            #expect(cli.status == 1, "\(cli.stderr)")
            #expect(cli.stderr.contains(#"has no data source "Mic9""#), "\(cli.stderr)")

            // Cleared: the first comes back.
            #expect(phone.session(call, "SetPreferredDataSource", "ss", #"["\#(mic)", ""]"#) == #"{"reply": null}"#)
            #expect(
                bench.wait { bench.requests().last == #"{"card": "hw:5", "verb": "Voice Call", "devices": ["Earpiece", "DigitalMic"]}"# },
                "\(bench.requests())")
            #expect(bench.wait { routeFileHas("dsnoop:CARD=PinePhone,DEV=0") })
        }
    }

    /// The client library's members (AVAudioSessionPortDescription's and the session's), through
    /// audiosession-probe: an app's call prefers the second mic, then clears it.
    @Test func theClientLibrarysDataSourceMembers() throws {
        try Self.withDaemon(hello: Self.helloWithTwoMics) { bench in
            let mic = "platform-sound/mic"
            #expect(bench.wait { bench.ports().contains(mic) }, "\(bench.portNames())")
            let app = try Probe(address: bench.bus.address, app: "phone")
            #expect(app.await { $0["ready"] != nil }?["ready"] == .bool(true))
            #expect(app.call("category playAndRecord voiceChat")?["reply"] == "category")
            #expect(app.call("activate")?["reply"] == "activate")
            func input() -> JSON? {
                guard case .array(let inputs)? = app.call("inputs")?["inputs"] else { return nil }
                return inputs.first { $0["uid"] == .string(mic) }
            }
            let before = try #require(input())
            #expect(before["dataSources"] == .array(["DigitalMic", "Mic2"]))
            #expect(before["names"] == .array(["Internal microphone", "Bottom microphone"]))
            #expect(before["selected"] == "DigitalMic" && before["preferred"] == .null && before["location"] == .null, "\(before)")
            let session = try #require(app.call("inputdatasource"))
            #expect(session["inputDataSources"] == .array(["DigitalMic", "Mic2"]) && session["inputDataSource"] == "DigitalMic", "\(session)")
            #expect(session["outputDataSources"] == .null)

            #expect(app.call("setinputdatasource Mic2")?["reply"] == "setinputdatasource")
            #expect(
                bench.wait { bench.requests().last == #"{"card": "hw:5", "verb": "Voice Call", "devices": ["Earpiece", "Mic2"]}"# },
                "\(bench.requests())")
            let after = try #require(input())
            #expect(after["selected"] == "Mic2" && after["preferred"] == "Mic2", "\(after)")
            #expect(app.call("inputdatasource")?["inputDataSource"] == "Mic2")

            let refused = try #require(app.call("datasource \(mic) Mic9"))
            #expect(refused["error"] == "unknownDataSource", "\(refused)")
            #expect(app.call("datasource no-such-port Mic2")?["error"] == "unknownPort")

            #expect(app.call("datasource \(mic) none")?["reply"] == "datasource")
            #expect(
                bench.wait { bench.requests().last == #"{"card": "hw:5", "verb": "Voice Call", "devices": ["Earpiece", "DigitalMic"]}"# },
                "\(bench.requests())")
            #expect(input()?["preferred"] == .null)
        }
    }

    @Test func aHelperThatFailsLeavesTheCardItsUdevPortsAndIsNotRestarted() throws {
        let failure = #"{"card": "hw:5", "error": "no UCM configuration for hw:5: No such file or directory", "closed": true}"#
        try Self.withDaemon(hello: failure) { bench in
            // udev's classification of the record (no udev rule's AUDIOROUTE_RECEIVER here): a board's line out.
            #expect(bench.wait { bench.ports().contains("platform-sound/line-out") }, "\(bench.portNames())\n\(bench.daemon.stderr)")
            #expect(bench.daemon.stderr.contains("no UCM configuration for hw:5"), "\(bench.daemon.stderr)")
            // No card has a profile: the helper is stopped (its stdin closed).
            #expect(bench.wait { bench.starts().contains { $0.hasSuffix(" eof") } }, "\(bench.starts())")
            // Route changes go on without it, and it is not started again.
            let player = try bench.bench.start(["session", "--category", "playAndRecord", "--activate"] + bench.address + ["--", "/bin/sleep", "30"])
            usleep(500_000)
            _ = try player.stop(SIGTERM)
            #expect(bench.starts().filter { !$0.hasSuffix("eof") }.count == 1, "\(bench.starts())")
            #expect(bench.requests().isEmpty)
        }
    }

    /// A card the helper found no profile for is not asked again when a card that says the same
    /// of itself (driver, names, components: its control device's CARD_INFO) arrives: no helper
    /// starts for a headset plugged again. The Raspberry Pi's cards have emulated control devices.
    @Test func aCardLikeOneWithoutAProfileIsNotAskedAgain() throws {
        try Self.withDaemon(hello: "", fixture: "sbc-raspberry-pi4-vc4hdmi-bcm2835") { bench in
            let opens = { bench.lines().filter { $0.hasPrefix(#"{"open": "#) } }
            #expect(bench.wait { opens().count == 3 }, "\(bench.lines())\n\(bench.daemon.stderr)")
            #expect(bench.wait { bench.ports().contains("platform-soc:audio/headphones") || bench.ports().count >= 3 }, "\(bench.ports())")
            // No card has a profile: the helper stops.
            #expect(bench.wait { bench.starts().contains { $0.hasSuffix(" eof") } }, "\(bench.starts())")
            let card = "/devices/platform/soc/soc:audio/bcm2835_audio/sound/card0"
            let ports = bench.ports()
            _ = try bench.bench.send("unplug \(card)")
            #expect(bench.wait { bench.ports().count < ports.count }, "\(bench.ports())")
            try bench.bench.load("sbc-raspberry-pi4-vc4hdmi-bcm2835")
            #expect(bench.wait { bench.ports() == ports }, "\(bench.ports()) against \(ports)\n\(bench.daemon.stderr)")
            // The card came back with the same identity: not asked, and no helper started for it.
            #expect(opens().count == 3, "\(bench.lines())")
            #expect(bench.starts().filter { !$0.hasSuffix(" eof") }.count == 1, "\(bench.starts())")
        }
    }

    @Test func aMissingHelperIsReportedAndTheCardKeepsItsUdevPorts() throws {
        try Self.withDaemon(hello: Self.hello, helper: "/nonexistent/audioroute-ucm") { bench in
            #expect(bench.wait { bench.ports().contains("platform-sound/line-out") }, "\(bench.ports())")
            #expect(bench.daemon.stderr.contains("cannot start the UCM helper"), "\(bench.daemon.stderr)")
        }
    }

    @Test func aHelperThatDiesGivesTheCardBackToUdevAndTheDaemonStopsItsHelper() throws {
        try Self.withDaemon(hello: Self.hello) { bench in
            #expect(bench.wait { bench.portNames().contains("platform-sound/speaker Internal speaker") }, "\(bench.portNames())")
            guard let pid = bench.starts().first.flatMap({ Int32($0.split(separator: " ")[0]) }) else {
                Issue.record("no helper start: \(bench.starts())")
                return
            }
            kill(pid, SIGKILL)
            #expect(bench.wait { bench.ports().contains("platform-sound/line-out") }, "\(bench.portNames())\n\(bench.daemon.stderr)")
            #expect(bench.daemon.stderr.contains("UCM helper ended"), "\(bench.daemon.stderr)")
        }
    }

    @Test func theHelperEndsWithTheDaemon() throws {
        try Self.withDaemon(hello: Self.hello) { bench in
            #expect(bench.wait { bench.portNames().contains("platform-sound/speaker Internal speaker") })
            let status = try bench.daemon.stop(SIGTERM)
            #expect(status == 0)
            // The helper read its stdin's end and exited.
            #expect(bench.wait { bench.starts().contains { $0.hasSuffix(" eof") } }, "\(bench.starts())")
        }
    }

    /// The real helper on alsa-ucm-conf's PinePhone files (the fake card of docs/ucm.md records
    /// the control writes): the daemon's routes switch the card's verb and devices, and the
    /// speaker and the earpiece are never both on.
    @Test func theRealHelperSwitchesThePinePhonesDevicesForACallOnTheSpeakerAndBack() throws {
        let helper = (UmockdevTestbed.binary as NSString).deletingLastPathComponent + "/audioroute-ucm"
        let environment = try UCMBench.environment()
        try UCMBench.resetPinePhone()
        var writes: [String] = []
        /// Every write so far; true once `done` holds for them.
        func written(_ done: ([String]) -> Bool) -> Bool {
            writes += (try? UCMBench.takeWrites()) ?? []
            return done(writes)
        }
        let speaker = "Line Out Playback Switch", earpiece = "Earpiece Playback Switch"
        /// The two outputs' switches after `writes`: (speaker on, earpiece on).
        func outputs(_ writes: [String]) -> (speaker: Bool, earpiece: Bool) {
            var state = (speaker: false, earpiece: false)
            for write in writes {
                if write.hasPrefix(speaker + "=") { state.speaker = write.hasSuffix("=on,on") }
                if write.hasPrefix(earpiece + "=") { state.earpiece = write.hasSuffix("=on") }
            }
            return state
        }
        try Self.withDaemon(hello: "", helper: helper, ucmRoot: environment["ALSA_CONFIG_UCM2"], environment: environment) { bench in
            let expected = ["platform-sound/mic", "platform-sound/receiver", "platform-sound/speaker"]
            // The headphones' and headset mic's jacks are out (the fake card's jack files are absent).
            #expect(bench.wait { bench.ports() == expected }, "\(bench.ports())\n\(bench.daemon.stderr)")
            #expect(bench.wait { written { outputs($0) == (true, false) } }, "\(writes)\n\(bench.daemon.stderr)")

            let phone = try APIClient(address: bench.bus.address)
            defer { phone.process.kill(SIGKILL) }
            let call = try phone.openSession("phone", category: "playAndRecord", mode: "voiceChat")
            #expect(phone.session(call, "SetActive", "bb", "[true, false]") == #"{"reply": null}"#)
            // Voice Call's own sequence turns "AIF2 Digital DAC Playback Switch" on.
            #expect(
                bench.wait { written { outputs($0) == (false, true) && $0.contains("AIF2 Digital DAC Playback Switch=on,on") } },
                "\(writes)\n\(bench.daemon.stderr)")
            #expect(phone.session(call, "OverrideOutput", "s", #"["speaker"]"#) == #"{"reply": null}"#)
            #expect(bench.wait { written { outputs($0) == (true, false) } }, "\(writes)")
            #expect(phone.session(call, "OverrideOutput", "s", #"["none"]"#) == #"{"reply": null}"#)
            #expect(bench.wait { written { outputs($0) == (false, true) } }, "\(writes)")
            // Headphones plugged in during the call: the fake card's jack control changes, the
            // helper reports it, the port arrives and the call moves to it.
            try UCMBench.setJack("Headphone Jack", plugged: true)
            #expect(bench.wait { bench.ports().contains("platform-sound/headphones") }, "\(bench.ports())")
            #expect(bench.wait { written { outputs($0) == (false, false) && $0.last { $0.hasPrefix("Headphone Playback Switch=") }?.contains("=on") == true } }, "\(writes)")
            try UCMBench.setJack("Headphone Jack", plugged: false)
            #expect(bench.wait { written { outputs($0) == (false, true) } }, "\(writes)")
            // A headset's mic plugged in: its port arrives (the call's input is the app's choice).
            try UCMBench.setJack("Headset Microphone Jack", plugged: true)
            #expect(bench.wait { bench.ports().contains("platform-sound/headset-mic") }, "\(bench.ports())")
            try UCMBench.setJack("Headset Microphone Jack", plugged: false)
            #expect(bench.wait { !bench.ports().contains("platform-sound/headset-mic") }, "\(bench.ports())")
            #expect(phone.session(call, "SetActive", "bb", "[false, false]") == #"{"reply": null}"#)
            #expect(bench.wait { written { outputs($0) == (true, false) } }, "\(writes)")
            #expect(!bench.daemon.stderr.contains("refused"), "\(bench.daemon.stderr)")
        }
        // Never both on: replay every write in order.
        for end in writes.indices {
            let state = outputs(Array(writes[...end]))
            #expect(!(state.speaker && state.earpiece), "both on after write \(end): \(writes[...end])")
        }
    }
}
