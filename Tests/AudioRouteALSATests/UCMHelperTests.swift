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
    @Test func messages() throws {
        func refused(_ line: String) -> String? {
            if case .failure(let error) = UCMHelperProtocol.message(Array(line.utf8)) { return error.description }
            return nil
        }
        func message(_ line: String) throws -> UCMHelperMessage { try UCMHelperProtocol.message(Array(line.utf8)).get() }
        #expect(try message(#"{"card": "hw:X", "verb": "Voice Call", "devices": ["Earpiece"]}"#)
            == .request(card: "hw:X", target: UCMState(verb: "Voice Call", devices: ["Earpiece"])))
        #expect(try message(#"{"devices": [], "verb": null, "card": "hw:X"}"#) == .request(card: "hw:X", target: UCMState()))
        #expect(try message(#"{"open": "hw:PCH"}"#) == .open(card: "hw:PCH"))
        #expect(try message(#"{"close": "hw:PCH"}"#) == .close(card: "hw:PCH"))
        #expect(refused("{") == "malformed JSON: line 1, column 2: expected a string key")
        #expect(refused("") != nil)
        #expect(refused("[]") == "a message is a JSON object, not an array")
        #expect(refused(#"{"open": "hw:PCH", "verb": "HiFi"}"#) == #""open" takes a card name, alone: {"open": "hw:<card>"}"#)
        #expect(refused(#"{"close": 3}"#) == #""close" takes a card name, alone: {"close": "hw:<card>"}"#)
        #expect(refused(#"{"open": ""}"#) != nil)
        #expect(refused(#"{"card": "hw:X", "verb": "HiFi", "devices": [], "volume": 3}"#)
            == #"unknown member "volume" (a request has "card", "verb" and "devices")"#)
        #expect(refused(#"{"verb": "HiFi", "devices": []}"#) == #"missing member "card""#)
        #expect(refused(#"{"card": 1, "verb": "HiFi", "devices": []}"#) == #""card" is a card name, not a number"#)
        #expect(refused(#"{"card": "hw:X", "devices": []}"#) == #"missing member "verb""#)
        #expect(refused(#"{"card": "hw:X", "verb": "HiFi"}"#) == #"missing member "devices""#)
        #expect(refused(#"{"card": "hw:X", "verb": 1, "devices": []}"#) == #""verb" is a string or null, not a number"#)
        #expect(refused(#"{"card": "hw:X", "verb": "HiFi", "devices": "Speaker"}"#) == #""devices" is an array of strings, not a string"#)
        #expect(refused(#"{"card": "hw:X", "verb": "HiFi", "devices": ["Speaker", 2]}"#) == #""devices"[1] is a string, not a number"#)
        #expect(refused(#"{"card": "hw:X", "verb": "HiFi", "verb": "HiFi", "devices": []}"#) != nil)
        #expect(UCMHelperProtocol.card(of: Array(#"{"card": "hw:X", "verb": 1}"#.utf8)) == "hw:X")
        #expect(UCMHelperProtocol.card(of: Array("nonsense".utf8)) == nil)
    }

    @Test func replies() {
        let state = UCMState(verb: "Voice Call", devices: ["Speaker", "DigitalMic"])
        #expect(UCMHelperProtocol.reply(card: "hw:X", state, steps: [.disable("Earpiece"), .setVerb("Voice Call"), .enable("Speaker")]).text
            == #"{"card": "hw:X", "verb": "Voice Call", "devices": ["Speaker", "DigitalMic"], "steps": ["disable Earpiece", "verb Voice Call", "enable Speaker"]}"#)
        #expect(UCMHelperProtocol.failure(card: "hw:X", "no", state: UCMState()).text == #"{"card": "hw:X", "error": "no", "verb": null, "devices": []}"#)
        #expect(UCMHelperProtocol.jack(card: "hw:X", "Headphone Jack", plugged: true).text
            == #"{"card": "hw:X", "jack": "Headphone Jack", "plugged": true}"#)
        #expect(UCMHelperProtocol.notOpen(card: "hw:X", "no").text == #"{"card": "hw:X", "error": "no", "closed": true}"#)
        #expect(UCMHelperProtocol.closed(card: "hw:X").text == #"{"card": "hw:X", "closed": true}"#)
        #expect(UCMHelperProtocol.error("bad").text == #"{"error": "bad"}"#)
    }

    /// Every line the helper writes is one the daemon's reader takes as what it is.
    @Test func theDaemonReadsEveryLineTheHelperWrites() throws {
        let state = UCMState(verb: "HiFi", devices: ["Speaker"])
        func line(_ json: JSON) throws -> UCMHelperLine { try UCMHelperLine.parse(json.bytes) }
        #expect(try line(UCMHelperProtocol.reply(card: "hw:X", state, steps: [.enable("Speaker")])) == .reply(card: "hw:X", state: state))
        #expect(try line(UCMHelperProtocol.failure(card: "hw:X", "no", state: state)) == .failure(card: "hw:X", message: "no", state: state))
        #expect(try line(UCMHelperProtocol.jack(card: "hw:X", "Mic Jack", plugged: false)) == .jack(card: "hw:X", control: "Mic Jack", plugged: false))
        #expect(try line(UCMHelperProtocol.notOpen(card: "hw:X", "none")) == .closed(card: "hw:X", message: "none", noProfile: false))
        #expect(try line(UCMHelperProtocol.notOpen(card: "hw:X", "none", noProfile: true)) == .closed(card: "hw:X", message: "none", noProfile: true))
        #expect(try line(UCMHelperProtocol.closed(card: "hw:X")) == .closed(card: "hw:X", message: nil, noProfile: false))
        #expect(try line(UCMHelperProtocol.failure(card: "hw:X", "not open")) == .failure(card: "hw:X", message: "not open", state: nil))
        #expect(try line(UCMHelperProtocol.error("bad")) == .error("bad"))
        let configuration = UCMConfiguration(card: "hw:X", verbs: [
            UCMVerb(name: "HiFi", devices: [UCMDevice(name: "Speaker", values: ["PlaybackPCM": "_ucm0001.hw:X,2", "PlaybackPriority": "100"])]),
        ])
        let hello = UCMHelperProtocol.hello(configuration, ports: UCMHelperProtocol.ports(configuration), jacks: [:], notes: ["a note"])
        guard case .hello(let card) = try line(hello) else { throw TestFailure("not a hello: \(hello.text)") }
        #expect(card.ports.map(\.port.alsa) == ["hw:X,2"])
        #expect(card.ports.map(\.profilePriority) == [100])
        #expect(card.notes == ["a note"])
        for bad in ["{}", #"{"card": "hw:X"}"#, #"{"card": "hw:X", "closed": false}"#, #"{"card": "hw:X", "jack": "J"}"#, "[", #"{"card": ""}"#] {
            #expect(throws: ScenarioError.self, "\(bad)") { try UCMHelperLine.parse(Array(bad.utf8)) }
        }
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

/// The built helper with the bench's fake cards, and its output lines.
private final class Helper {
    let process: ChildProcess
    var output: LineReader

    /// The helper, given `cards` to open at start (`--card`); none: it waits for opens.
    init(cards: [String] = [], arguments: [String] = []) throws {
        process = try ChildProcess(
            Subprocess.product("audioroute-ucm"), cards.flatMap { ["--card", $0] } + arguments, environment: try UCMBench.environment(),
            input: .pipe)
        output = LineReader(fd: process.stdout)
    }

    func line(seconds: Double = 10) -> String? { output.next(seconds: seconds) }

    /// Sends one line and returns the answer.
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
    static let phone = #""card": "hw:PinePhone""#

    @Test func helloThenACallToTheEarpieceAndBack() throws {
        try UCMBench.resetPinePhone()
        try UCMBench.setJack("Headphone Jack", plugged: true)
        let helper = try Helper()
        let hello = try helper.request(#"{"open": "hw:PinePhone"}"#)
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
            "devices": {"HiFi": ["Speaker"], "Voice Call": ["Speaker"]}, "jackControl": null, "profilePriority": 300}
            """)
        #expect(ports[3]["jackControl"] == "Headphone Jack")
        #expect(hello["jacks"] == .object([.init("Headset Microphone Jack", false), .init("Headphone Jack", true)]))
        #expect(hello["notes"] == .array([]))
        // The first members are the core's Port but its sequence (the daemon's to give), as the
        // daemon decodes them; then the helper's.
        // The merged built-in mic has its data sources (the PinePhone has one: DigitalMic) after "alsa".
        for port in ports {
            guard case .object(let members) = port else { continue }
            let sources = port["type"] == "builtInMic" ? ["dataSources"] : []
            #expect(members.map(\.key) == ["uid", "type", "direction", "device", "name", "priority", "alsa"] + sources + ["devices", "jackControl", "profilePriority"])
        }
        #expect(ports[4]["dataSources"]?.text == #"[{"id": "DigitalMic", "name": "Internal Microphone", "alsa": "hw:PinePhone,0"}]"#)
        // The helper's resident memory after the hello (docs/ucm.md); this build's, not the shipped one's.
        if let memory = ProcessMemory(pid: helper.process.pid) { print("audioroute-ucm after the hello: \(memory)") }

        var reply = try helper.request(#"{"card": "hw:PinePhone", "verb": "HiFi", "devices": ["Speaker"]}"#)
        #expect(reply.text == #"{"card": "hw:PinePhone", "verb": "HiFi", "devices": ["Speaker"], "steps": ["verb HiFi", "enable Speaker"]}"#)
        reply = try helper.request(#"{"card": "hw:PinePhone", "verb": "Voice Call", "devices": ["Earpiece", "DigitalMic"]}"#)
        #expect(strings(reply["steps"]) == ["disable Speaker", "verb Voice Call", "enable Earpiece", "enable DigitalMic"])
        reply = try helper.request(#"{"card": "hw:PinePhone", "verb": "Voice Call", "devices": ["Speaker", "DigitalMic"]}"#)
        #expect(reply.text == #"{"card": "hw:PinePhone", "verb": "Voice Call", "devices": ["Speaker", "DigitalMic"], "steps": ["disable Earpiece", "enable Speaker"]}"#)
        reply = try helper.request(#"{"card": "hw:PinePhone", "verb": "HiFi", "devices": ["Speaker"]}"#)
        #expect(strings(reply["steps"]) == ["disable Speaker", "disable DigitalMic", "verb HiFi", "enable Speaker"])
        reply = try helper.request(#"{"card": "hw:PinePhone", "verb": "HiFi", "devices": ["Speaker"]}"#)
        #expect(strings(reply["steps"]) == [])
        reply = try helper.request(#"{"card": "hw:PinePhone", "verb": null, "devices": []}"#)
        #expect(reply.text == #"{"card": "hw:PinePhone", "verb": null, "devices": [], "steps": ["disable Speaker", "verb Inactive"]}"#)

        // What the card saw: the speaker's switch on three times, the earpiece's once, never together.
        let switches = try UCMBench.takeWrites().filter { $0.hasPrefix("Line Out Playback Switch=") || $0.hasPrefix("Earpiece Playback Switch=") }
        var on: Set<String> = []
        for write in switches {
            let name = String(write.prefix { $0 != "=" })
            if write.hasSuffix("=off") || write.hasSuffix("=off,off") { on.remove(name) } else { on.insert(name) }
            #expect(on.count < 2, "both outputs on at \(write)")
        }
        // Four enables, each its EnableSequence's write and its PlaybackSwitch's unmute.
        #expect(switches.filter { !$0.contains("off") }.count == 8)

        helper.process.closeInput()
        #expect(helper.process.wait(seconds: 10) == 0)
    }

    @Test func jackChangesArriveBetweenReplies() throws {
        try UCMBench.resetPinePhone()
        let helper = try Helper(cards: ["hw:PinePhone"])
        let hello = try parse(helper.line())
        #expect(hello["jacks"] == .object([.init("Headset Microphone Jack", false), .init("Headphone Jack", false)]))
        try UCMBench.setJack("Headphone Jack", plugged: true)
        #expect(try parse(helper.line()).text == #"{"card": "hw:PinePhone", "jack": "Headphone Jack", "plugged": true}"#)
        let reply = try helper.request(#"{"card": "hw:PinePhone", "verb": "HiFi", "devices": ["Headphone", "HeadsetMic"]}"#)
        #expect(strings(reply["steps"]) == ["verb HiFi", "enable Headphone", "enable HeadsetMic"])
        try UCMBench.setJack("Headset Microphone Jack", plugged: true)
        #expect(try parse(helper.line()).text == #"{"card": "hw:PinePhone", "jack": "Headset Microphone Jack", "plugged": true}"#)
        try UCMBench.setJack("Headphone Jack", plugged: false)
        #expect(try parse(helper.line()).text == #"{"card": "hw:PinePhone", "jack": "Headphone Jack", "plugged": false}"#)
        // Closed: its jacks are no longer watched, and a request for it is refused.
        #expect(try helper.request(#"{"close": "hw:PinePhone"}"#).text == #"{"card": "hw:PinePhone", "closed": true}"#)
        try UCMBench.setJack("Headphone Jack", plugged: true)
        #expect(try helper.request(#"{"card": "hw:PinePhone", "verb": "HiFi", "devices": []}"#).text
            == #"{"card": "hw:PinePhone", "error": "card hw:PinePhone is not open"}"#)
        helper.process.closeInput()
        #expect(helper.line(seconds: 2) == nil)
        #expect(helper.process.wait(seconds: 10) == 0)
    }

    /// Faults are answers that name them; the helper goes on, one answer per line, in order.
    @Test func faultsAreRepliedToAndTheHelperGoesOn() throws {
        try UCMBench.resetPinePhone()
        let helper = try Helper(cards: ["hw:PinePhone"])
        _ = try parse(helper.line())
        var reply = try helper.request(#"{"card": "hw:PinePhone", "verb": "HiFi", "devices": ["Speaker"]}"#)
        #expect(reply["error"] == nil)
        let state = #""verb": "HiFi", "devices": ["Speaker"]}"#
        reply = try helper.request("hello")
        #expect(reply.text == #"{"error": "malformed JSON: line 1, column 1: unexpected character"}"#)
        reply = try helper.request(#""HiFi""#)
        #expect(reply.text == #"{"error": "a message is a JSON object, not a string"}"#)
        reply = try helper.request(#"{"verb": "HiFi", "devices": [], "card": "hw:PinePhone", "volume": 3}"#)
        #expect(reply.text == #"{"card": "hw:PinePhone", "error": "unknown member \"volume\" (a request has \"card\", \"verb\" and \"devices\")", "# + state)
        reply = try helper.request(#"{"card": "hw:PinePhone", "verb": "Karaoke", "devices": []}"#)
        #expect(reply.text == #"{"card": "hw:PinePhone", "error": "unknown verb \"Karaoke\" (the card's verbs: \"HiFi\", \"Voice Call\")", "# + state)
        reply = try helper.request(#"{"card": "hw:PinePhone", "verb": "HiFi", "devices": ["Earpiece", "Handset"]}"#)
        #expect(reply["error"] == #"unknown device "Handset" for verb "HiFi" (its devices: "Speaker", "Earpiece", "DigitalMic", "HeadsetMic", "Headphone")"#)
        // A line over 64 KiB, then a good request in the same write: one error, then its reply.
        let long = #"{"card": "hw:PinePhone", "verb": "HiFi", "devices": [""# + String(repeating: "x", count: 70_000) + #""]}"#
        reply = try helper.request(long + "\n" + #"{"card": "hw:PinePhone", "verb": "HiFi", "devices": ["Earpiece"]}"#)
        #expect(reply.text == #"{"error": "line over 65536 bytes, discarded"}"#)
        reply = try parse(helper.line())
        #expect(reply.text == #"{"card": "hw:PinePhone", "verb": "HiFi", "devices": ["Earpiece"], "steps": ["disable Speaker", "enable Earpiece"]}"#)
        // The last line without its newline is taken at the end of the input.
        helper.process.send(Array(#"{"card": "hw:PinePhone", "verb": "HiFi", "devices": []}"#.utf8))
        helper.process.closeInput()
        reply = try parse(helper.line())
        #expect(strings(reply["steps"]) == ["disable Earpiece"])
        #expect(helper.process.wait(seconds: 10) == 0)
    }

    /// One helper serves every card: each answer names its card, a card without a profile is
    /// an answer, not the helper's end, and the others go on.
    @Test func oneHelperServesSeveralCards() throws {
        try UCMBench.resetPinePhone()
        let helper = try Helper()
        let missing = try helper.request(#"{"open": "hw:NoSuchCard"}"#)
        #expect(missing["card"] == "hw:NoSuchCard")
        #expect(missing["closed"] == .bool(true))
        guard case .string(let message)? = missing["error"] else { throw TestFailure("not an error: \(missing.text)") }
        #expect(message.contains("hw:NoSuchCard") && message.contains("No such file or directory"))
        // The bench's fake plugin answers any card name (its identity defaults to the name), so
        // this is a card without a profile: said of every card like it. So is a GPU's HDMI card.
        #expect(missing["noProfile"] == .bool(true))
        let gpu = try helper.request(#"{"open": "hw:NVidia"}"#)
        #expect(gpu["closed"] == .bool(true) && gpu["noProfile"] == .bool(true), "\(gpu.text)")
        #expect(try helper.request(#"{"open": "hw:PinePhone"}"#)["verbs"] != nil)
        #expect(try helper.request(#"{"open": "hw:sofhdadsp"}"#)["verbs"] != nil)
        var reply = try helper.request(#"{"card": "hw:PinePhone", "verb": "HiFi", "devices": ["Speaker"]}"#)
        #expect(strings(reply["steps"]) == ["verb HiFi", "enable Speaker"])
        reply = try helper.request(#"{"card": "hw:sofhdadsp", "verb": "HiFi", "devices": ["Earpiece"]}"#)
        #expect(reply["card"] == "hw:sofhdadsp")
        #expect(reply["error"] != nil, "the laptop has no earpiece: \(reply.text)")
        // The PinePhone is as it was.
        reply = try helper.request(#"{"card": "hw:PinePhone", "verb": "HiFi", "devices": ["Speaker"]}"#)
        #expect(reply.text == #"{"card": "hw:PinePhone", "verb": "HiFi", "devices": ["Speaker"], "steps": []}"#)
        helper.process.closeInput()
        #expect(helper.process.wait(seconds: 10) == 0)
    }

    @Test func usage() throws {
        let result = try ChildProcess(Subprocess.product("audioroute-ucm"), ["--log-level", "loud"]).collect()
        #expect(result.status == 64)
        #expect(result.stderr.contains("unknown log level \"loud\""))
        let empty = try ChildProcess(Subprocess.product("audioroute-ucm"), ["--card", ""]).collect()
        #expect(empty.status == 64)
        #expect(empty.stderr.contains("--card needs a card name"))
        // An empty argument or a bare "=" is an unknown argument, not a crash.
        for argument in ["", "="] {
            let odd = try ChildProcess(Subprocess.product("audioroute-ucm"), [argument]).collect()
            #expect(odd.status == 64 && odd.stderr.contains("unknown argument \"\(argument)\""), "\(argument): \(odd.status) \(odd.stderr)")
        }
        #expect(try ChildProcess(Subprocess.product("audioroute-ucm"), ["--card=hw:X", "--log-level=loud"]).collect().stderr.contains("unknown log level"))
    }
}
