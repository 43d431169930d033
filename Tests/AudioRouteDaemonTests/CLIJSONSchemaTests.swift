import AudioRouteCore
import Foundation
import Testing

/// `audioroute status` as a tree, and docs/cli-json.md's examples against the real output: the
/// built `audioroute` and `audiorouted` on the umockdev laptop, with sessions of `audioroute
/// session` processes (music, a ducking prompt, a call that interrupts the music).
@Suite(.serialized) struct CLIJSONSchemaTests {
    static var daemonBinary: String { (UmockdevTestbed.binary as NSString).deletingLastPathComponent + "/audiorouted" }
    static let document = UmockdevTestbed.packageRoot + "/docs/cli-json.md"

    /// The examples of docs/cli-json.md by name (`<!-- example: NAME -->` before a ```json block),
    /// and the members it says only some objects have (`<!-- optional: … -->`).
    static func examples() throws -> (examples: [String: JSON], optional: Set<String>) {
        let text = try String(contentsOfFile: document, encoding: .utf8)
        var examples: [String: JSON] = [:]
        var optional: Set<String> = []
        var name: String?
        var block: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if var lines = block {
                if line == "```" {
                    if let name { examples[name] = try JSON.parse(lines.joined(separator: "\n")) }
                    (name, block) = (nil, nil)
                } else {
                    lines.append(line)
                    block = lines
                }
            } else if line.hasPrefix("<!-- example: "), line.hasSuffix(" -->") {
                name = String(line.dropFirst("<!-- example: ".count).dropLast(" -->".count))
            } else if line.hasPrefix("<!-- optional: "), line.hasSuffix(" -->") {
                optional.formUnion(line.dropFirst("<!-- optional: ".count).dropLast(" -->".count).split(separator: " ").map(String.init))
            } else if line == "```json", name != nil {
                block = []
            }
        }
        return (examples, optional)
    }

    /// Where `real` departs from `example`'s shape: a member the example lacks, a member of the
    /// example missing from `real` (unless optional), a different JSON type (either side's null
    /// accepted). An array's elements are compared with the example's first.
    static func differences(_ real: JSON, _ example: JSON, optional: Set<String>, at path: String = "$") -> [String] {
        switch (real, example) {
        case (.null, _), (_, .null): return []
        case (.bool, .bool), (.string, .string), (.integer, .integer), (.double, .double), (.integer, .double), (.double, .integer): return []
        case (.array(let items), .array(let shapes)):
            guard let shape = shapes.first else { return items.isEmpty ? [] : ["\(path): the example's array is empty"] }
            return items.enumerated().flatMap { differences($0.element, shape, optional: optional, at: "\(path)[\($0.offset)]") }
        case (.object(let members), .object(let shapes)):
            var found: [String] = []
            for member in members {
                guard let shape = shapes.first(where: { $0.key == member.key }) else {
                    found.append("\(path).\(member.key): not in the example")
                    continue
                }
                found += differences(member.value, shape.value, optional: optional, at: "\(path).\(member.key)")
            }
            for shape in shapes where !optional.contains(shape.key) && !members.contains(where: { $0.key == shape.key }) {
                found.append("\(path).\(shape.key): in the example, not in the output")
            }
            return found
        default:
            return ["\(path): \(real.typeName), the example has \(example.typeName)"]
        }
    }

    /// A laptop testbed, the daemon on a private bus, and a ready CLI address.
    final class Setting {
        let bus: PrivateBus
        let bench: UmockdevTestbed
        let daemon: UmockdevTestbed.Running
        var address: [String] { ["--bus-address", bus.address] }

        init() throws {
            bus = try PrivateBus()
            bench = try UmockdevTestbed()
            try bench.loadLaptop()
            let state = bench.root + "/scratch/daemon"
            daemon = try bench.start(
                ["--state-dir", state + "/state", "--runtime-dir", state + "/run"] + UmockdevTestbed.noUCMHelper, binary: CLIJSONSchemaTests.daemonBinary,
                environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
            var ready = false
            for _ in 0..<200 where !ready {
                ready = try bench.run(["status", "--json"] + ["--bus-address", bus.address]).status == 0
                if !ready { usleep(50_000) }
            }
            guard ready else { throw UmockdevTestbed.Failure(description: "the daemon did not answer: \(daemon.stderr)") }
        }

        /// `status --json`'s sessions once `condition` holds of them (15 s at most).
        func sessions(until condition: ([JSON]) -> Bool) throws -> [JSON] {
            var list: [JSON] = []
            for _ in 0..<300 {
                if case .array(let found)? = try JSON.parse(try bench.run(["status", "--json"] + address).stdout)["sessions"] { list = found }
                if condition(list) { break }
                usleep(50_000)
            }
            return list
        }

        func close() {
            _ = try? daemon.stop(SIGTERM)
            bench.close()
            bus.close()
        }
    }

    /// A session held by `audioroute session … -- sleep 60`.
    static func session(_ setting: Setting, _ arguments: [String]) throws -> UmockdevTestbed.Running {
        try setting.bench.start(["session"] + arguments + ["--activate"] + setting.address + ["--", "/bin/sleep", "60"])
    }

    @Test func statusIsATreeOfDevicesPortsAndSessionsWithTheirState() throws {
        let setting = try Setting()
        defer { setting.close() }
        let music = try Self.session(setting, ["--category", "playback", "--app", "music"])
        defer { _ = try? music.stop(SIGTERM) }
        _ = try setting.sessions { $0.contains { $0["app"] == .string("music") && $0["active"] == .bool(true) } }
        let prompt = try Self.session(setting, ["--category", "playback", "--mode", "voicePrompt", "--options", "duckOthers", "--app", "navigation"])
        defer { _ = try? prompt.stop(SIGTERM) }
        _ = try setting.sessions { $0.contains { $0["app"] == .string("navigation") && $0["active"] == .bool(true) } }
        let call = try Self.session(setting, ["--category", "playAndRecord", "--mode", "voiceChat", "--app", "call"])
        defer { _ = try? call.stop(SIGTERM) }
        let sessions = try setting.sessions { list in
            list.contains { $0["app"] == .string("music") && $0["state"] == .string("interrupted") }
                && list.contains { $0["app"] == .string("call") && $0["controlsRoute"] == .bool(true) }
                && list.contains { $0["app"] == .string("navigation") && $0["active"] == .bool(true) }
        }
        func named(_ app: String) -> JSON? { sessions.first { $0["app"] == .string(app) } }
        // Each session's process is the `audioroute session` that holds it.
        #expect(named("music")?["pid"] == .integer(Int64(music.process.processIdentifier)), "\(sessions)")
        #expect(named("call")?["pid"] == .integer(Int64(call.process.processIdentifier)))
        #expect(named("music")?["program"] == .string("audioroute"))
        #expect(named("music")?["state"] == .string("interrupted") && named("music")?["marks"] == .array([]))
        // The prompt ducks every other active session: the call too.
        #expect(named("call")?["state"] == .string("active") && named("call")?["marks"] == .array([.string("controlsRoute"), .string("ducked")]))
        #expect(named("navigation")?["state"] == .string("active") && named("navigation")?["controlsRoute"] == .bool(false))

        let text = try setting.bench.run(["status"] + setting.address)
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        // Devices, then each device's ports under it, the route's marked; then the sessions.
        let devices = try #require(lines.firstIndex(of: "Devices"), "\(text.stdout)")
        let sessionsLine = try #require(lines.firstIndex(of: "Sessions"), "\(text.stdout)")
        #expect(devices < sessionsLine)
        #expect(lines[devices + 1] == " └─ pci-0000:00:1b.0", "\(text.stdout)")
        let tree = lines[(devices + 2)..<sessionsLine]
        #expect(tree.contains { $0.hasPrefix("     ├─ * \(IDs.speaker)  builtInSpeaker  output") && $0.hasSuffix("  [route output]") }, "\(text.stdout)")
        #expect(tree.contains { $0.hasPrefix("     ") && $0.contains("* \(IDs.mic)  builtInMic  input") && $0.hasSuffix("  [route input]") }, "\(text.stdout)")
        let listed = lines[(sessionsLine + 1)...]
        let musicPID = music.process.processIdentifier
        #expect(
            listed.contains { $0.hasPrefix(" ├─ 1  music  playback/default  interrupted  owner=:1.") && $0.hasSuffix("  pid=\(musicPID)  program=audioroute") },
            "\(text.stdout)")
        #expect(listed.contains { $0.contains("  navigation  playback/voicePrompt [duckOthers]  active  owner=") && !$0.contains("[controls") }, "\(text.stdout)")
        #expect(
            listed.contains {
                $0.hasPrefix(" └─ 3  call  playAndRecord/voiceChat  active  owner=")
                    && $0.hasSuffix("  pid=\(call.process.processIdentifier)  program=audioroute  [controls the route, ducked]")
            }, "\(text.stdout)")
    }

    @Test func theDocumentedExamplesMatchTheRealOutput() throws {
        let (examples, optional) = try Self.examples()
        for name in ["status", "explain", "ports", "monitor ready", "monitor sessionChanged", "monitor silentMode", "monitor routeChange", "monitor portAdded"] {
            #expect(examples[name] != nil, "docs/cli-json.md has no example \(name)")
        }
        let setting = try Setting()
        defer { setting.close() }
        let monitor = try setting.bench.start(["monitor", "--json"] + setting.address)
        defer { _ = try? monitor.stop(SIGKILL) }
        try monitor.waitForLines(1)
        let music = try Self.session(setting, ["--category", "playback", "--options", "duckOthers", "--app", "music"])
        defer { _ = try? music.stop(SIGTERM) }
        _ = try setting.sessions { $0.contains { $0["active"] == .bool(true) } }
        #expect(try setting.bench.run(["silent", "on"] + setting.address).status == 0)
        try setting.bench.load("usb-headset-razer-blackshark-v3-pro")

        for (command, example) in [(["status", "--json"], "status"), (["explain", "--json"], "explain"), (["ports", "--json"], "ports")] {
            let result = try setting.bench.run(command + setting.address)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            let real = try JSON.parse(result.stdout)
            if let shape = examples[example] { #expect(Self.differences(real, shape, optional: optional) == [], "\(command): \(result.stdout)") }
            if example != "ports" { #expect(real["schemaVersion"] == .integer(1)) }
        }
        // Every line the monitor printed has its event's example; these events at least came.
        let expected: Set = ["ready", "sessionChanged", "silentMode", "routeChange", "portAdded"]
        var seen: Set<String> = []
        let deadline = Date().addingTimeInterval(15)
        while !expected.isSubset(of: Set(monitor.objects.compactMap { $0["event"]?.string })) && Date() < deadline { usleep(10_000) }
        for line in monitor.objects {
            let event = line["event"]?.string ?? "?"
            seen.insert(event)
            guard let shape = examples["monitor " + event] else {
                Issue.record("docs/cli-json.md has no example of monitor's \(event): \(line)")
                continue
            }
            #expect(Self.differences(line, shape, optional: optional) == [], "\(line)")
        }
        #expect(expected.isSubset(of: seen), "\(monitor.lines)")
        #expect(monitor.objects.first?["schemaVersion"] == .integer(1))
    }

    /// The comparison itself: a renamed member, a changed type and a missing member are found.
    @Test func theShapeComparisonFindsWhatDiffers() throws {
        let example = try JSON.parse(#"{"a": 1, "b": [{"c": "x"}], "d": null, "e": true}"#)
        #expect(Self.differences(try JSON.parse(#"{"a": 2, "b": [], "d": "y", "e": false}"#), example, optional: []) == [])
        #expect(Self.differences(try JSON.parse(#"{"a": "2", "b": [{"c": "y"}], "d": 1, "e": true}"#), example, optional: []) == ["$.a: a string, the example has a number"])
        #expect(Self.differences(try JSON.parse(#"{"a": 2, "b": [{"k": "y"}], "d": 1}"#), example, optional: ["e"]) == ["$.b[0].k: not in the example", "$.b[0].c: in the example, not in the output"])
    }
}
