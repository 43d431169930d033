import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Glibc
import Testing

/// The built `audioroute` against the dbusmock stand-in: real processes, a private bus.
@Suite(.serialized) struct CLIMockTests {
    @Test func statusPortsAndSettings() async throws {
        try await withTemporaryDirectory { directory in
            let bus = try PrivateBus()
            defer { bus.close() }
            let mock = try await MockDaemon(address: bus.address, directory: directory)
            defer { mock.kill() }
            let address = ["--bus-address", bus.address]

            let status = try CLI.run(["status"] + address)
            #expect(status.status == 0)
            #expect(status.out.contains("outputs: spk (builtInSpeaker)"))
            #expect(status.out.contains(" * spk  builtInSpeaker  output  \"Speaker\"  priority=0  sequence=1"))
            #expect(status.out.contains("   mic  builtInMic  input"))
            #expect(status.out.contains("Silent mode: off"))
            // A Version 1 daemon does not say whether the screen is locked.
            #expect(status.out.contains("Screen: lock state not reported by this daemon"))

            let json = try CLI.run(["status", "--json"] + address)
            let document = try JSON.parse(json.out)
            guard case .array(let outputs)? = document["route"]?["outputs"], case .array(let ports)? = document["ports"] else {
                Issue.record("status --json: \(json.out)")
                return
            }
            #expect(outputs.first?["uid"] == .string("spk"))
            #expect(ports.count == 2)
            #expect(document["silentMode"] == .bool(false))
            #expect(document["screenLocked"] == .null)

            let list = try CLI.run(["ports", "--json"] + address)
            #expect(list.status == 0)
            guard case .array(let listed) = try JSON.parse(list.out) else {
                Issue.record("ports --json: \(list.out)")
                return
            }
            #expect(listed.map { $0["uid"] } == [.string("spk"), .string("mic")])
            // A Version 1 daemon does not say the ports' availability.
            #expect(listed.map { $0["availability"] } == [.null, .null])
            let lines = try CLI.run(["ports"] + address)
            #expect(lines.status == 0 && lines.out.split(separator: "\n").count == 2 && !lines.out.contains("availability"), "\(lines.out)")

            #expect(try CLI.run(["silent", "on"] + address).status == 0)
            let refused = try CLI.run(["priority", "spk", "5000"] + address)
            #expect(refused.status != 0)
            #expect(refused.err.contains("-1000...1000"))
            #expect(try CLI.run(["priority", "spk", "20"] + address).status == 0)
            // A negative priority needs no `--`, wherever the options are; `--` still works.
            #expect(try CLI.run(["priority", "spk", "-5"] + address).status == 0)
            #expect(try CLI.run(["priority"] + address + ["spk", "-1000"]).status == 0)
            #expect(try CLI.run(["priority"] + address + ["--", "spk", "-7"]).status == 0)
            for (bad, message) in [(["spk"], "Missing expected argument '<priority>'"), (["spk", "-x"], "not \"-x\""), (["spk", "1", "2"], "not 1 2")] {
                let result = try CLI.run(["priority"] + bad + address)
                #expect(result.status == 64 && result.err.contains(message), "\(bad): \(result.status) \(result.err)")
            }

            let client = try await DBusClientConnection.connect(.address(bus.address))
            defer { client.close() }
            let manager = "/org/audioroute/AudioRoute1"
            #expect(try await MockDaemon.calls(client, path: manager, method: "SetSilentMode") == [[.bool(true)]])
            #expect(
                try await MockDaemon.calls(client, path: manager, method: "SetPortPriority")
                    == [[.string("spk"), .int32(20)], [.string("spk"), .int32(-5)], [.string("spk"), .int32(-1000)], [.string("spk"), .int32(-7)]])
        }
    }

    @Test func portsListsEveryKnownPortWithItsAvailability() async throws {
        try await withTemporaryDirectory { directory in
            let bus = try PrivateBus()
            defer { bus.close() }
            let mock = try await MockDaemon(address: bus.address, directory: directory, parameters: #"{"version": 2}"#)
            defer { mock.kill() }
            let address = ["--bus-address", bus.address]
            let text = try CLI.run(["ports"] + address)
            #expect(text.status == 0, "\(text.err)")
            #expect(
                text.out.split(separator: "\n") == [
                    #"spk  builtInSpeaker output "Speaker" priority=0 device=internal availability=available"#,
                    #"mic  builtInMic input "Microphone" priority=0 device=internal availability=available"#,
                    #"hp  headphones output "Headphones" priority=100 device=jack alsa=dmix:CARD=PCH,DEV=0 availability=unavailable"#,
                    #"hdmi  HDMI output "HDMI" priority=-1 device=gpu alsa=dmix:CARD=NVidia,DEV=3 availability=unknown"#,
                ])
            let json = try CLI.run(["ports", "--json"] + address)
            guard case .array(let listed) = try JSON.parse(json.out) else {
                Issue.record("ports --json: \(json.out)")
                return
            }
            #expect(listed.map { $0["uid"] } == [.string("spk"), .string("mic"), .string("hp"), .string("hdmi")])
            #expect(listed.map { $0["availability"] } == [.string("available"), .string("available"), .string("unavailable"), .string("unknown")])
        }
    }

    @Test func twoMonitorsReceiveTheRouteChange() async throws {
        try await withTemporaryDirectory { directory in
            let bus = try PrivateBus()
            defer { bus.close() }
            let mock = try await MockDaemon(address: bus.address, directory: directory)
            defer { mock.kill() }
            // The second monitor stamps its lines (--timestamps); the first does not.
            let monitors = try (0..<2).map { index in
                try ChildProcess(CLI.audioroute, ["monitor", "--json", "--bus-address", bus.address] + (index == 1 ? ["--timestamps"] : []))
            }
            var readers = monitors.map { LineReader(fd: $0.stdout) }
            for index in readers.indices {
                let ready = try readers[index].next(seconds: 10).map { try JSON.parse($0) }
                #expect(ready?["event"] == .string("ready"), "monitor \(index): \(monitors[index].availableStderr())")
                #expect(ready?["current"]?["outputs"] == .array([.string("spk")]))
            }
            // In text, the stamp is a "[seconds.microseconds] " prefix.
            let started = CLI.monotonicNanoseconds()
            let text = try ChildProcess(CLI.audioroute, ["monitor", "--timestamps", "--bus-address", bus.address])
            var textReader = LineReader(fd: text.stdout)
            let first = textReader.next(seconds: 10) ?? ""
            let stamp = first.split(separator: "]", maxSplits: 1)
            let parts = stamp.first.map { $0.dropFirst().split(separator: ".") } ?? []
            #expect(first.hasPrefix("[") && stamp.count == 2 && stamp[1].hasPrefix(" route now: "), "\(first)")
            #expect(parts.count == 2 && parts[1].count == 6, "\(first)")
            if parts.count == 2, let seconds = Int64(parts[0]), let micros = Int64(parts[1]) {
                let nanoseconds = seconds * 1_000_000_000 + micros * 1000
                #expect(nanoseconds >= started / 1000 * 1000 && nanoseconds <= CLI.monotonicNanoseconds(), "\(first)")
            }
            text.signal(SIGTERM)
            #expect(text.wait(seconds: 10) == 0)

            let client = try await DBusClientConnection.connect(.address(bus.address))
            defer { client.close() }
            let sent = CLI.monotonicNanoseconds()
            _ = try await client.call(
                destination: "org.audioroute.AudioRoute1", path: "/org/audioroute/AudioRoute1", interface: "org.audioroute.AudioRoute1",
                member: "EmitRouteChange")
            for index in readers.indices {
                guard let line = readers[index].next(seconds: 10) else {
                    Issue.record("monitor \(index) printed no route change")
                    continue
                }
                let read = CLI.monotonicNanoseconds()
                let object = try JSON.parse(line)
                if index == 1 {
                    guard case .integer(let stamp) = object["monotonicNs"] else {
                        Issue.record("no monotonicNs with --timestamps: \(line)")
                        continue
                    }
                    // Written after the change was asked for and before this test read it.
                    #expect(stamp >= sent && stamp <= read, "\(sent) <= \(stamp) <= \(read)")
                } else {
                    #expect(object["monotonicNs"] == nil, "\(line)")
                }
                #expect(object["event"] == .string("routeChange"))
                #expect(object["reason"] == .string("newDeviceAvailable"))
                #expect(object["previous"]?["outputs"] == .array([.string("spk")]))
                #expect(object["current"]?["outputs"] == .array([.string("usb/out")]))
                #expect(object["current"]?["inputs"] == .array([.string("usb/in")]))
            }
            // The daemon goes away: each monitor says so and keeps running; then it is back.
            mock.kill()
            for index in readers.indices {
                #expect(readers[index].next(seconds: 10)?.contains("mediaServicesWereLost") == true)
            }
            let again = try await MockDaemon(address: bus.address, directory: directory)
            defer { again.kill() }
            for index in readers.indices {
                #expect(readers[index].next(seconds: 10)?.contains("mediaServicesWereReset") == true)
                monitors[index].signal(SIGTERM)
                #expect(monitors[index].wait(seconds: 10) == 0)
            }
        }
    }

    @Test func sessionHoldsASessionWhileTheCommandRuns() async throws {
        try await withTemporaryDirectory { directory in
            let bus = try PrivateBus()
            defer { bus.close() }
            let mock = try await MockDaemon(address: bus.address, directory: directory)
            defer { mock.kill() }
            let result = try CLI.run([
                "session", "--bus-address", bus.address, "--category", "playback", "--options", "mixWithOthers", "--activate",
                "--", "/bin/sh", "-c", "exit 3",
            ])
            #expect(result.status == 3, "\(result.err)")
            let client = try await DBusClientConnection.connect(.address(bus.address))
            defer { client.close() }
            let path = "/org/audioroute/AudioRoute1/session/1"
            #expect(try await MockDaemon.calls(client, path: path, method: "SetCategory") == [[.string("playback"), .string("default"), .array([.string("mixWithOthers")])]])
            #expect(try await MockDaemon.calls(client, path: path, method: "SetActive") == [[.bool(true), .bool(false)], [.bool(false), .bool(true)]])
            #expect(try await MockDaemon.calls(client, path: path, method: "Close").count == 1)

            // SIGTERM goes on to the command; the exit status is the command's.
            let held = try ChildProcess(CLI.audioroute, ["session", "--bus-address", bus.address, "--category", "playback", "--", "/bin/sleep", "30"])
            var waited = 0
            while try await MockDaemon.calls(client, path: path, method: "SetCategory").count < 2 && waited < 500 {
                try await Task.sleep(for: .milliseconds(20))
                waited += 1
            }
            try await Task.sleep(for: .milliseconds(200))
            held.signal(SIGTERM)
            #expect(held.wait(seconds: 10) == 128 + SIGTERM)

            // A refused category runs nothing and exits 1 with the daemon's message.
            let refused = try CLI.run(["session", "--bus-address", bus.address, "--category", "playback", "--options", "defaultToSpeaker", "--", "/bin/true"])
            #expect(refused.status == 1)
            #expect(refused.err.contains("option defaultToSpeaker is not valid with category playback"))
        }
    }
}

extension CLIMockTests {
    @Test func probeRepliesAndErrors() async throws {
        try await withTemporaryDirectory { directory in
            let bus = try PrivateBus()
            defer { bus.close() }
            let mock = try await MockDaemon(address: bus.address, directory: directory)
            defer { mock.kill() }
            let probe = try Probe(address: bus.address, app: "music")
            #expect(probe.next()?["ready"] == .bool(true))
            #expect(probe.call("category playback")?["reply"] == .string("category"))
            #expect(probe.call("category playback default defaultToSpeaker")?["error"] == .string("invalidOption"))
            #expect(probe.call("activate")?["reply"] == .string("activate"))
            mock.kill()
            #expect(probe.await { $0["notification"] == .string("mediaServicesWereLost") } != nil)
        }
    }
}

extension CLIMockTests {
    /// A bus with nobody owning org.audioroute.AudioRoute1.
    @Test func noDaemonOnTheBusIsAClearError() throws {
        let bus = try PrivateBus()
        defer { bus.close() }
        for command in [["status"], ["ports"], ["monitor"], ["silent", "on"]] {
            let result = try CLI.run(command + ["--bus-address", bus.address])
            // EX_UNAVAILABLE, as every command that cannot reach the daemon.
            #expect(result.status == 69)
            #expect(result.err.contains("org.audioroute.AudioRoute1"))
            #expect(result.err.contains(bus.address))
        }
    }
}

/// AUDIOROUTE_BUS: the system instance as the default bus, and hints that name the right unit.
@Suite(.serialized) struct CLIBusTests {
    @Test func audiorouteBusSystemTalksToTheSystemBusWithoutAFlag() async throws {
        try await withTemporaryDirectory { directory in
            let bus = try PrivateBus()
            defer { bus.close() }
            let mock = try await MockDaemon(address: bus.address, directory: directory)
            defer { mock.kill() }
            // The mock stands on the "system" bus; the session bus leads nowhere.
            let environment = [
                "AUDIOROUTE_BUS": "system", "DBUS_SYSTEM_BUS_ADDRESS": bus.address, "DBUS_SESSION_BUS_ADDRESS": "unix:path=" + directory + "/none",
            ]
            let silent = try ChildProcess(CLI.audioroute, ["silent", "on"], environment: environment).collect()
            #expect(silent.status == 0, "\(silent.stderr)")
            let client = try await DBusClientConnection.connect(.address(bus.address))
            defer { client.close() }
            #expect(try await MockDaemon.calls(client, path: "/org/audioroute/AudioRoute1", method: "SetSilentMode") == [[.bool(true)]])
            // Without the variable the same command goes to the session bus, and says how to start the user's daemon.
            let session = try ChildProcess(CLI.audioroute, ["silent", "on"], environment: environment.merging(["AUDIOROUTE_BUS": ""]) { $1 }).collect()
            #expect(session.status == 69 && session.stderr.contains("systemctl --user start audiorouted"), "\(session.stderr)")
        }
    }

    @Test func theHintNamesTheInstanceOfTheBusTried() throws {
        let nowhere = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/system", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/session"]
        let system = try ChildProcess(CLI.audioroute, ["status", "--system"], environment: nowhere).collect()
        #expect(system.status == 69 && system.stderr.contains("start the system instance (systemctl start audiorouted-system)"), "\(system.stderr)")
        #expect(!system.stderr.contains("--user"))
        let byVariable = try ChildProcess(CLI.audioroute, ["status"], environment: nowhere.merging(["AUDIOROUTE_BUS": "system"]) { $1 }).collect()
        #expect(byVariable.stderr.contains("audiorouted-system"), "\(byVariable.stderr)")
        let address = try ChildProcess(CLI.audioroute, ["status", "--bus-address", "unix:path=/nonexistent/x"], environment: nowhere).collect()
        #expect(address.stderr.contains("start audiorouted on that bus"), "\(address.stderr)")
        let typo = try ChildProcess(CLI.audioroute, ["status"], environment: ["AUDIOROUTE_BUS": "sytem"]).collect()
        #expect(typo.status == 64 && typo.stderr.contains(#"unknown bus in AUDIOROUTE_BUS "sytem" (did you mean "system"?); one of: system, session"#), "\(typo.stderr)")
    }
}

/// The shell's completions, from the script `--generate-completion-script bash` writes, run by a
/// real bash: the session's names, and the running daemon's port uids.
@Suite(.serialized) struct CLICompletionTests {
    /// COMPREPLY after completing `words` (the last is the word being typed).
    static func complete(_ words: [String], script: String, environment: [String: String]) throws -> [String] {
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let program = """
            shopt -s extglob
            source '\(script)'
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
            _audioroute audioroute "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try ChildProcess("/bin/bash", ["-c", program], environment: environment).collect()
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test func namesAndTheDaemonsPortsComplete() async throws {
        try await withTemporaryDirectory { directory in
            let script = directory + "/audioroute.bash"
            let generated = try ChildProcess(CLI.audioroute, ["--generate-completion-script", "bash"]).collect()
            #expect(generated.status == 0)
            try writeText(script, generated.stdout)
            let bus = try PrivateBus()
            defer { bus.close() }
            let mock = try await MockDaemon(address: bus.address, directory: directory)
            defer { mock.kill() }
            // `audioroute` in PATH is the built one, talking to the mock.
            let environment = [
                "PATH": productsDirectory + ":" + (getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"),
                "DBUS_SESSION_BUS_ADDRESS": bus.address,
            ]
            #expect(try Self.complete(["audioroute", "session", "--category", "pla"], script: script, environment: environment) == ["playback", "playAndRecord"])
            #expect(try Self.complete(["audioroute", "play", "--mode", "voice"], script: script, environment: environment) == ["voiceChat", "voicePrompt"])
            #expect(try Self.complete(["audioroute", "session", "--options", "duck"], script: script, environment: environment) == ["duckOthers"])
            #expect(try Self.complete(["audioroute", "priority", ""], script: script, environment: environment) == ["spk", "mic"])
            #expect(try Self.complete(["audioroute", "prefer-input", "m"], script: script, environment: environment) == ["mic"])
            // No daemon: nothing to offer, and no error on the terminal.
            var away = environment
            away["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + directory + "/none"
            #expect(try Self.complete(["audioroute", "priority", ""], script: script, environment: away) == [])
            let uids = try ChildProcess(CLI.audioroute, ["ports", "--uids"], environment: environment).collect()
            #expect(uids.status == 0 && uids.stdout == "spk\nmic\n", "\(uids.stdout) \(uids.stderr)")
        }
    }
}
