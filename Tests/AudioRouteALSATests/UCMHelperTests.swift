// audioroute-ucm, the UCM helper (docs/ucm.md, "The helper's protocol"): its messages on
// plain values, then the built binary on the PinePhone's UCM files (UCMBench.swift),
// spoken to on its stdin and stdout as audiorouted does.
import AudioRouteALSA
import AudioRouteCore
import AudioRouteSystem
import Glibc
import Testing

private func parse(_ line: String?, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSON {
    let line = try #require(line, "no line from the helper", sourceLocation: sourceLocation)
    return try JSON.parse(line)
}

@Suite struct UCMHelperProtocolTests {
    @Test func requests() throws {
        func refused(_ line: String) -> String? {
            if case .failure(let error) = UCMHelperProtocol.request(Array(line.utf8)) { return error.description }
            return nil
        }
        #expect(try UCMHelperProtocol.request(Array(#"{"verb": "Voice Call", "devices": ["Earpiece"]}"#.utf8)).get()
            == UCMState(verb: "Voice Call", devices: ["Earpiece"]))
        #expect(try UCMHelperProtocol.request(Array(#"{"devices": [], "verb": null}"#.utf8)).get() == UCMState())
        #expect(refused("{") == "malformed JSON: line 1, column 2: expected a string key")
        #expect(refused("") != nil)
        #expect(refused("[]") == "a request is a JSON object, not an array")
        #expect(refused(#"{"verb": "HiFi", "devices": [], "volume": 3}"#) == #"unknown member "volume" (a request has "verb" and "devices")"#)
        #expect(refused(#"{"devices": []}"#) == #"missing member "verb""#)
        #expect(refused(#"{"verb": "HiFi"}"#) == #"missing member "devices""#)
        #expect(refused(#"{"verb": 1, "devices": []}"#) == #""verb" is a string or null, not a number"#)
        #expect(refused(#"{"verb": "HiFi", "devices": "Speaker"}"#) == #""devices" is an array of strings, not a string"#)
        #expect(refused(#"{"verb": "HiFi", "devices": ["Speaker", 2]}"#) == #""devices"[1] is a string, not a number"#)
        #expect(refused(#"{"verb": "HiFi", "verb": "HiFi", "devices": []}"#) != nil)
    }

    @Test func replies() {
        let state = UCMState(verb: "Voice Call", devices: ["Speaker", "DigitalMic"])
        #expect(UCMHelperProtocol.reply(state, steps: [.disable("Earpiece"), .setVerb("Voice Call"), .enable("Speaker")]).text
            == #"{"verb": "Voice Call", "devices": ["Speaker", "DigitalMic"], "steps": ["disable Earpiece", "verb Voice Call", "enable Speaker"]}"#)
        #expect(UCMHelperProtocol.failure("no", state: UCMState()).text == #"{"error": "no", "verb": null, "devices": []}"#)
        #expect(UCMHelperProtocol.jack("Headphone Jack", plugged: true).text == #"{"jack": "Headphone Jack", "plugged": true}"#)
    }

    @Test func linesOverTheLimitAreOneFaultEach() {
        var splitter = UCMLineSplitter(limit: 4)
        #expect(splitter.feed(Array("ab\ncd".utf8)) == [.line(Array("ab".utf8))])
        #expect(splitter.feed(Array("ef\n".utf8)) == [.line(Array("cdef".utf8))])  // exactly the limit
        #expect(splitter.feed(Array("abcde".utf8)) == [.tooLong])
        #expect(splitter.feed(Array("fgh".utf8)) == [])  // still the long line: dropped
        #expect(splitter.feed(Array("ij\nok\n\n".utf8)) == [.line(Array("ok".utf8)), .line([])])
        #expect(splitter.feed(Array("abcdefgh\nx".utf8)) == [.tooLong])
        #expect(splitter.finish() == .line(Array("x".utf8)))
        #expect(splitter.finish() == nil)
        #expect(UCMLineSplitter.maximumLineLength == 65536)
    }
}

/// The built helper on the bench's PinePhone, and its output lines.
private final class Helper {
    let process: ChildProcess
    var output: LineReader

    init(card: String = "hw:PinePhone", arguments: [String] = []) throws {
        process = try ChildProcess(
            Subprocess.product("audioroute-ucm"), ["--card", card] + arguments, environment: try UCMBench.environment(), input: .pipe)
        output = LineReader(fd: process.stdout)
    }

    func line(seconds: Double = 10) -> String? { output.next(seconds: seconds) }

    /// Sends one request line and returns the reply.
    func request(_ line: String) throws -> JSON {
        process.send(Array((line + "\n").utf8))
        return try parse(self.line())
    }
}

private func strings(_ json: JSON?) -> [String]? {
    guard case .array(let elements)? = json else { return nil }
    return elements.compactMap { if case .string(let text) = $0 { return text } else { return nil } }
}

@Suite(.serialized) struct UCMHelperTests {
    @Test func helloThenACallToTheEarpieceAndBack() throws {
        try UCMBench.resetPinePhone()
        try UCMBench.setJack("Headphone Jack", plugged: true)
        let helper = try Helper()
        let hello = try parse(helper.line())
        #expect(hello["card"] == "hw:PinePhone")
        #expect(strings(hello["verbs"]) == ["HiFi", "Voice Call"])
        guard case .array(let ports)? = hello["ports"] else { throw TestFailure("no ports: \(hello.text)") }
        #expect(ports.map { $0["uid"] } == [
            "ucm:hw:PinePhone:Speaker:output", "ucm:hw:PinePhone:Earpiece:output", "ucm:hw:PinePhone:HeadsetMic:input",
            "ucm:hw:PinePhone:Headphone:output", "ucm:hw:PinePhone:builtInMic",
        ])
        #expect(ports.map { $0["type"] } == ["builtInSpeaker", "builtInReceiver", "headsetMic", "headphones", "builtInMic"])
        #expect(ports[0].text == """
            {"uid": "ucm:hw:PinePhone:Speaker:output", "type": "builtInSpeaker", "direction": "output", \
            "device": "ucm:hw:PinePhone", "name": "Internal speaker", "priority": 0, "alsa": "hw:PinePhone,0", \
            "devices": {"HiFi": ["Speaker"], "Voice Call": ["Speaker"]}, "jackControl": null}
            """)
        #expect(ports[3]["jackControl"] == "Headphone Jack")
        #expect(hello["jacks"] == .object([.init("Headset Microphone Jack", false), .init("Headphone Jack", true)]))
        // The first members are the core's Port but its sequence (the daemon's to give), as the
        // daemon decodes them; then the helper's two.
        for port in ports {
            guard case .object(let members) = port else { continue }
            #expect(members.map(\.key) == ["uid", "type", "direction", "device", "name", "priority", "alsa", "devices", "jackControl"])
        }
        // The helper's resident memory after the hello (docs/ucm.md); this build's, not the shipped one's.
        if let memory = ProcessMemory(pid: helper.process.pid) { print("audioroute-ucm after the hello: \(memory)") }

        var reply = try helper.request(#"{"verb": "HiFi", "devices": ["Speaker"]}"#)
        #expect(reply.text == #"{"verb": "HiFi", "devices": ["Speaker"], "steps": ["verb HiFi", "enable Speaker"]}"#)
        reply = try helper.request(#"{"verb": "Voice Call", "devices": ["Earpiece", "DigitalMic"]}"#)
        #expect(strings(reply["steps"]) == ["disable Speaker", "verb Voice Call", "enable Earpiece", "enable DigitalMic"])
        reply = try helper.request(#"{"verb": "Voice Call", "devices": ["Speaker", "DigitalMic"]}"#)
        #expect(reply.text == #"{"verb": "Voice Call", "devices": ["Speaker", "DigitalMic"], "steps": ["disable Earpiece", "enable Speaker"]}"#)
        reply = try helper.request(#"{"verb": "HiFi", "devices": ["Speaker"]}"#)
        #expect(strings(reply["steps"]) == ["disable Speaker", "disable DigitalMic", "verb HiFi", "enable Speaker"])
        reply = try helper.request(#"{"verb": "HiFi", "devices": ["Speaker"]}"#)
        #expect(strings(reply["steps"]) == [])
        reply = try helper.request(#"{"verb": null, "devices": []}"#)
        #expect(reply.text == #"{"verb": null, "devices": [], "steps": ["disable Speaker", "verb Inactive"]}"#)

        // What the card saw: the speaker's switch on three times, the earpiece's once, never together.
        let switches = try UCMBench.takeWrites().filter { $0.hasPrefix("Line Out Playback Switch=") || $0.hasPrefix("Earpiece Playback Switch=") }
        var on: Set<String> = []
        for write in switches {
            let name = String(write.prefix { $0 != "=" })
            if write.hasSuffix("=off") || write.hasSuffix("=off,off") { on.remove(name) } else { on.insert(name) }
            #expect(on.count < 2, "both outputs on at \(write)")
        }
        #expect(switches.filter { !$0.contains("off") }.count == 4)

        helper.process.closeInput()
        #expect(helper.process.wait(seconds: 10) == 0)
    }

    @Test func jackChangesArriveBetweenReplies() throws {
        try UCMBench.resetPinePhone()
        let helper = try Helper()
        let hello = try parse(helper.line())
        #expect(hello["jacks"] == .object([.init("Headset Microphone Jack", false), .init("Headphone Jack", false)]))
        try UCMBench.setJack("Headphone Jack", plugged: true)
        #expect(try parse(helper.line()).text == #"{"jack": "Headphone Jack", "plugged": true}"#)
        let reply = try helper.request(#"{"verb": "HiFi", "devices": ["Headphone", "HeadsetMic"]}"#)
        #expect(strings(reply["steps"]) == ["verb HiFi", "enable Headphone", "enable HeadsetMic"])
        try UCMBench.setJack("Headset Microphone Jack", plugged: true)
        #expect(try parse(helper.line()).text == #"{"jack": "Headset Microphone Jack", "plugged": true}"#)
        try UCMBench.setJack("Headphone Jack", plugged: false)
        #expect(try parse(helper.line()).text == #"{"jack": "Headphone Jack", "plugged": false}"#)
        helper.process.closeInput()
        #expect(helper.process.wait(seconds: 10) == 0)
    }

    /// Faults are replies that name them; the helper goes on, one reply per line, in order.
    @Test func faultsAreRepliedToAndTheHelperGoesOn() throws {
        try UCMBench.resetPinePhone()
        let helper = try Helper()
        _ = try parse(helper.line())
        var reply = try helper.request(#"{"verb": "HiFi", "devices": ["Speaker"]}"#)
        #expect(reply["error"] == nil)
        let state = #""verb": "HiFi", "devices": ["Speaker"]}"#
        reply = try helper.request("hello")
        #expect(reply.text == #"{"error": "malformed JSON: line 1, column 1: unexpected character", "# + state)
        reply = try helper.request(#""HiFi""#)
        #expect(reply.text == #"{"error": "a request is a JSON object, not a string", "# + state)
        reply = try helper.request(#"{"verb": "HiFi", "devices": [], "card": "hw:0"}"#)
        #expect(reply.text == #"{"error": "unknown member \"card\" (a request has \"verb\" and \"devices\")", "# + state)
        reply = try helper.request(#"{"verb": "Karaoke", "devices": []}"#)
        #expect(reply.text == #"{"error": "unknown verb \"Karaoke\" (the card's verbs: \"HiFi\", \"Voice Call\")", "# + state)
        reply = try helper.request(#"{"verb": "HiFi", "devices": ["Earpiece", "Handset"]}"#)
        #expect(reply["error"] == #"unknown device "Handset" for verb "HiFi" (its devices: "Speaker", "Earpiece", "DigitalMic", "HeadsetMic", "Headphone")"#)
        // A line over 64 KiB, then a good request in the same write: one error, then its reply.
        let long = #"{"verb": "HiFi", "devices": [""# + String(repeating: "x", count: 70_000) + #""]}"#
        reply = try helper.request(long + "\n" + #"{"verb": "HiFi", "devices": ["Earpiece"]}"#)
        #expect(reply.text == #"{"error": "line over 65536 bytes, discarded", "# + state)
        reply = try parse(helper.line())
        #expect(reply.text == #"{"verb": "HiFi", "devices": ["Earpiece"], "steps": ["disable Speaker", "enable Earpiece"]}"#)
        // The last line without its newline is taken at the end of the input.
        helper.process.send(Array(#"{"verb": "HiFi", "devices": []}"#.utf8))
        helper.process.closeInput()
        reply = try parse(helper.line())
        #expect(strings(reply["steps"]) == ["disable Earpiece"])
        #expect(helper.process.wait(seconds: 10) == 0)
    }

    @Test func aCardWithoutUCMIsAnErrorHello() throws {
        let helper = try Helper(card: "hw:NoSuchCard")
        let hello = try parse(helper.line())
        guard case .string(let message)? = hello["error"] else { throw TestFailure("not an error: \(hello.text)") }
        #expect(message.contains("hw:NoSuchCard") && message.contains("No such file or directory"))
        #expect(helper.process.wait(seconds: 10) == 1)
    }

    @Test func usage() throws {
        let result = try ChildProcess(Subprocess.product("audioroute-ucm"), ["--log-level", "loud"]).collect()
        #expect(result.status == 2)
        #expect(result.stderr.contains("unknown log level \"loud\""))
    }
}
