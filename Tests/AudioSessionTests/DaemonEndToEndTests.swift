import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import AudioSession
import Glibc
import Testing

/// Sessions of several app processes against the real daemon: arbitration, the CLI,
/// and the daemon killed and restarted.
@Suite(.serialized) struct DaemonEndToEndTests {
    static func isInterruption(_ type: String, shouldResume: Bool? = nil) -> (JSON) -> Bool {
        { object in
            object["notification"] == .string("interruption") && object["type"] == .string(type)
                && (shouldResume.map { object["shouldResume"] == .bool($0) } ?? true)
        }
    }

    @Test func aCallInterruptsMusicAndEndsWithShouldResume() async throws {
        try await withTemporaryDirectory { directory in
            let bus = try PrivateBus()
            defer { bus.close() }
            let daemon = try RealDaemon(address: bus.address, directory: directory)
            defer { daemon.kill() }
            let music = try Probe(address: bus.address, app: "music")
            let call = try Probe(address: bus.address, app: "call")
            #expect(music.next()?["ready"] == .bool(true))
            #expect(call.next()?["ready"] == .bool(true))

            // The daemon's refusals arrive as typed errors, and change nothing.
            #expect(music.call("category playback default defaultToSpeaker")?["error"] == .string("invalidOption"))
            #expect(music.call("override speaker")?["error"] == .string("invalidOverride"))
            #expect(music.call("prefer no-such-port")?["error"] == .string("unknownPort"))
            #expect(music.call("category playback")?["reply"] == .string("category"))
            #expect(music.call("activate")?["reply"] == .string("activate"))
            #expect(call.call("category playAndRecord voiceChat")?["reply"] == .string("category"))
            #expect(call.call("activate")?["reply"] == .string("activate"))
            let began = music.await(Self.isInterruption("began"))
            #expect(began?["reason"] == .string("default"))
            #expect(music.call("hint")?["active"] == .bool(false))

            #expect(call.call("deactivate notify")?["reply"] == .string("deactivate"))
            #expect(music.await(Self.isInterruption("ended", shouldResume: true)) != nil)
        }
    }

    @Test func navigationDucksMusicAndAKilledClientUnducksIt() async throws {
        try await withTemporaryDirectory { directory in
            let bus = try PrivateBus()
            defer { bus.close() }
            let daemon = try RealDaemon(address: bus.address, directory: directory)
            defer { daemon.kill() }
            let music = try Probe(address: bus.address, app: "music")
            let navigation = try Probe(address: bus.address, app: "navigation")
            _ = music.next()
            _ = navigation.next()
            #expect(music.call("category playback")?["reply"] == .string("category"))
            #expect(music.call("activate")?["reply"] == .string("activate"))
            #expect(navigation.call("category playback voicePrompt duckOthers")?["reply"] == .string("category"))
            #expect(navigation.call("activate")?["reply"] == .string("activate"))
            #expect(music.await { $0["notification"] == .string("ducked") } != nil)
            // SIGKILL while ducking: the daemon sees the name go and unducks.
            navigation.process.signal(SIGKILL)
            #expect(music.await { $0["notification"] == .string("unducked") } != nil)
            #expect(music.call("hint")?["active"] == .bool(true))
        }
    }

    @Test func killedAndRestartedDaemonLosesAndResetsTheSession() async throws {
        try await withTemporaryDirectory { directory in
            let bus = try PrivateBus()
            defer { bus.close() }
            var daemon = try RealDaemon(address: bus.address, directory: directory)
            let music = try Probe(address: bus.address, app: "music")
            _ = music.next()
            #expect(music.call("category playback default mixWithOthers")?["reply"] == .string("category"))
            #expect(music.call("activate")?["reply"] == .string("activate"))
            daemon.kill()
            #expect(music.await { $0["notification"] == .string("mediaServicesWereLost") } != nil)
            daemon = try RealDaemon(address: bus.address, directory: directory)
            defer { daemon.kill() }
            #expect(music.await { $0["notification"] == .string("mediaServicesWereReset") } != nil)
            // The new daemon holds the session again with its category, inactive.
            let status = try CLI.run(["status", "--json", "--bus-address", bus.address])
            #expect(status.status == 0, "\(status.err)")
            let document = try JSON.parse(status.out)
            guard case .array(let sessions)? = document["sessions"] else {
                Issue.record("status --json: \(status.out)")
                return
            }
            let mine = sessions.first { $0["app"] == .string("music") }
            #expect(mine?["category"] == .string("playback"))
            #expect(mine?["options"] == .array([.string("mixWithOthers")]))
            #expect(mine?["active"] == .bool(false))
        }
    }

    /// The JSON lines of `lines` read until one matches (the list ends with it; nil after `seconds`).
    static func monitorLines(_ lines: inout LineReader, seconds: Double = 10, until match: (JSON) -> Bool) -> [JSON]? {
        var seen: [JSON] = []
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        while ContinuousClock.now < deadline {
            guard let line = lines.next(seconds: 1), let object = try? JSON.parse(line) else { continue }
            seen.append(object)
            if match(object) { return seen }
        }
        Issue.record("monitor: no matching line after \(seconds) s; read \(seen.map(\.text))")
        return nil
    }

    static func change(_ change: String, app: String) -> (JSON) -> Bool {
        { $0["event"] == .string("sessionChanged") && $0["change"] == .string(change) && $0["app"] == .string(app) }
    }

    @Test func monitorShowsEverySessionsActivity() async throws {
        try await withTemporaryDirectory { directory in
            let bus = try PrivateBus()
            defer { bus.close() }
            let daemon = try RealDaemon(address: bus.address, directory: directory)
            defer { daemon.kill() }
            let address = ["--bus-address", bus.address]
            let monitor = try ChildProcess(CLI.audioroute, ["monitor", "--json"] + address)
            defer { monitor.kill() }
            var lines = LineReader(fd: monitor.stdout)
            #expect(try lines.next(seconds: 10).map { try JSON.parse($0) }?["event"] == .string("ready"))
            // Another user's app name may carry a bidirectional override and a terminal control.
            let hostile = "mus\u{202E}ic\u{1B}[2J"
            let music = try Probe(address: bus.address, app: hostile)
            let navigation = try Probe(address: bus.address, app: "navigation")
            let call = try Probe(address: bus.address, app: "call")
            for probe in [music, navigation, call] { _ = probe.next() }

            #expect(music.call("category playback")?["reply"] == .string("category"))
            #expect(music.call("activate")?["reply"] == .string("activate"))
            let activated = Self.monitorLines(&lines, until: Self.change("activated", app: hostile))
            #expect(activated?.contains(where: Self.change("opened", app: hostile)) == true)
            #expect(activated?.last?["detail"] == .string("playback/default"))
            let musicPath = activated?.last?["session"]
            if case .string(let path)? = musicPath { #expect(path.hasPrefix("/org/audioroute/AudioRoute1/session/")) } else { Issue.record("no session path: \(String(describing: activated))") }

            #expect(navigation.call("category playback voicePrompt duckOthers")?["reply"] == .string("category"))
            #expect(navigation.call("activate")?["reply"] == .string("activate"))
            let ducked = Self.monitorLines(&lines, until: Self.change("ducked", app: hostile))
            #expect(ducked?.last?["session"] == musicPath)
            #expect(ducked?.contains { Self.change("activated", app: "navigation")($0) && $0["detail"] == .string("playback/voicePrompt duckOthers") } == true, "\(ducked ?? [])")

            #expect(call.call("category playAndRecord voiceChat")?["reply"] == .string("category"))
            #expect(call.call("activate")?["reply"] == .string("activate"))
            // The new states first, then the event that says why.
            let interrupted = Self.monitorLines(&lines, until: Self.change("interruptionBegan", app: hostile))
            #expect(interrupted?.last?["detail"] == .string("default"))
            let order = interrupted?.compactMap { line -> String? in
                guard case .string(let change)? = line["change"], case .string(let app)? = line["app"] else { return nil }
                return app + " " + change
            }
            #expect(order?.suffix(3) == ["call activated", hostile + " deactivated", hostile + " interruptionBegan"], "\(order ?? [])")

            #expect(call.call("deactivate notify")?["reply"] == .string("deactivate"))
            let ended = Self.monitorLines(&lines, until: Self.change("interruptionEnded", app: hostile))
            #expect(ended?.last?["detail"] == .string("shouldResume"))
            #expect(ended?.contains(where: Self.change("deactivated", app: "call")) == true)

            // A client that dies: its session closes, and the duck it held ends.
            navigation.process.signal(SIGKILL)
            let closed = Self.monitorLines(&lines, until: Self.change("closed", app: "navigation"))
            #expect(closed != nil)
            monitor.signal(SIGINT)
            #expect(monitor.wait(seconds: 10) == 0)

            // In text, the app's name is escaped: neither the override nor ESC reaches the terminal.
            let text = try ChildProcess(CLI.audioroute, ["monitor"] + address)
            defer { text.kill() }
            var textLines = LineReader(fd: text.stdout)
            #expect(textLines.next(seconds: 10)?.hasPrefix("route now:") == true)
            // The music was left inactive by the call; activated again, it is a line.
            #expect(music.call("activate")?["reply"] == .string("activate"))
            let line = textLines.next(seconds: 10) ?? ""
            #expect(line.hasSuffix(" mus\\u{202E}ic\\u{001B}[2J: activated playback/default"), "\(line)")
            // The session named by its number, as `status` names it, not by its object path.
            #expect(line.hasPrefix("session ") && Int(line.split(separator: " ")[1]) != nil, "\(line)")
            #expect(!line.unicodeScalars.contains { $0 == "\u{202E}" || $0 == "\u{1B}" })
            text.signal(SIGINT)
            #expect(text.wait(seconds: 10) == 0)

            // `status` likewise: escaped in text; in JSON the same name comes back whole.
            let status = try CLI.run(["status"] + address)
            #expect(status.status == 0, "\(status.err)")
            #expect(status.out.contains("  mus\\u{202E}ic\\u{001B}[2J  playback/default  active"), "\(status.out)")
            #expect(!status.out.unicodeScalars.contains { $0 == "\u{202E}" || $0 == "\u{1B}" })
            let json = try CLI.run(["status", "--json"] + address)
            #expect(!json.out.unicodeScalars.contains { $0 == "\u{202E}" || $0 == "\u{1B}" })
            guard case .array(let listed)? = try JSON.parse(json.out)["sessions"] else {
                Issue.record("status --json: \(json.out)")
                return
            }
            #expect(listed.contains { $0["app"] == .string(hostile) }, "\(json.out)")
        }
    }

    @Test func cliAgainstTheDaemon() async throws {
        try await withTemporaryDirectory { directory in
            let bus = try PrivateBus()
            defer { bus.close() }
            let daemon = try RealDaemon(address: bus.address, directory: directory)
            defer { daemon.kill() }
            let address = ["--bus-address", bus.address]
            let status = try CLI.run(["status"] + address)
            #expect(status.status == 0, "\(status.err)")
            #expect(status.out.contains("Route"))
            #expect(status.out.contains("Silent mode: off"))
            let monitor = try ChildProcess(CLI.audioroute, ["monitor", "--json"] + address)
            var lines = LineReader(fd: monitor.stdout)
            #expect(try lines.next(seconds: 10).map { try JSON.parse($0) }?["event"] == .string("ready"))
            #expect(try CLI.run(["silent", "on"] + address).status == 0)
            let silentLine = try lines.next(seconds: 10).map { try JSON.parse($0) }
            #expect(silentLine?["event"] == .string("silentMode"))
            #expect(silentLine?["on"] == .bool(true))
            monitor.signal(SIGINT)
            #expect(monitor.wait(seconds: 10) == 0)
            let json = try JSON.parse(try CLI.run(["status", "--json"] + address).out)
            #expect(json["silentMode"] == .bool(true))
            let unknown = try CLI.run(["priority", "no-such-port", "10"] + address)
            #expect(unknown.status == 1)
            #expect(unknown.err.contains("no-such-port"))
            let explain = try CLI.run(["explain", "--json"] + address)
            #expect(explain.status == 0, "\(explain.err)")
            #expect(try JSON.parse(explain.out)["outputRule"] != nil)
            // The override holds while the command runs; outside playAndRecord it is refused.
            let override = try CLI.run(["override", "speaker"] + address + ["--", "/bin/true"])
            #expect(override.status == 0, "\(override.err)")
            #expect(override.out.hasPrefix("route: outputs "))
            // Without a command it holds until SIGINT.
            let holding = try ChildProcess(CLI.audioroute, ["override", "speaker"] + address)
            var holdingLines = LineReader(fd: holding.stdout)
            #expect(holdingLines.next(seconds: 10)?.hasPrefix("route: outputs ") == true)
            #expect(try await Self.waitForSession(bus.address, app: "audioroute-override") { $0["active"] == .bool(true) })
            holding.signal(SIGINT)
            #expect(holding.wait(seconds: 10) == 128 + SIGINT)
            let badOverride = try CLI.run(["override", "speaker", "--category", "playback"] + address + ["--", "/bin/true"])
            #expect(badOverride.status == 1)
            #expect(badOverride.err.contains("playAndRecord"), "\(badOverride.err)")
            let badInput = try CLI.run(["prefer-input", "no-such-input"] + address)
            #expect(badInput.status == 1)
            #expect(badInput.err.contains("no-such-input"), "\(badInput.err)")
            let session = try CLI.run(["session", "--category", "playback", "--activate"] + address + ["--", "/bin/sh", "-c", "exit 7"])
            #expect(session.status == 7, "\(session.err)")
            let refused = try CLI.run(["session", "--category", "playback", "--options", "defaultToSpeaker"] + address + ["--", "/bin/true"])
            #expect(refused.status == 1)
            #expect(refused.err.contains("defaultToSpeaker"))
        }
    }

    /// The sessions `status --json` lists for `app`, polled until `match` holds (10 s).
    static func waitForSession(_ address: String, app: String, _ match: (JSON) -> Bool) async throws -> Bool {
        for _ in 0..<200 {
            let status = try CLI.run(["status", "--json", "--bus-address", address])
            if status.status == 0, case .array(let sessions)? = try JSON.parse(status.out)["sessions"],
                let mine = sessions.first(where: { $0["app"] == .string(app) }), match(mine)
            {
                return true
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    @Test func sessionCommandReactivatesAfterTheDaemonRestarts() async throws {
        try await withTemporaryDirectory { directory in
            let bus = try PrivateBus()
            defer { bus.close() }
            var daemon = try RealDaemon(address: bus.address, directory: directory)
            let held = try ChildProcess(
                CLI.audioroute,
                ["session", "--bus-address", bus.address, "--category", "playback", "--app", "script", "--activate", "--", "/bin/sleep", "30"])
            #expect(try await Self.waitForSession(bus.address, app: "script") { $0["active"] == .bool(true) })
            daemon.kill()
            daemon = try RealDaemon(address: bus.address, directory: directory)
            defer { daemon.kill() }
            #expect(try await Self.waitForSession(bus.address, app: "script") { $0["active"] == .bool(true) && $0["category"] == .string("playback") })
            held.signal(SIGTERM)
            #expect(held.wait(seconds: 10) == 128 + SIGTERM)
            let stderr = held.availableStderr()
            #expect(stderr.contains("mediaServicesWereLost") && stderr.contains("mediaServicesWereReset"), "\(stderr)")
        }
    }
}
