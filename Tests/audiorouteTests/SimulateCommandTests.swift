// End-to-end tests: the built `audioroute simulate` binary on good and
// malformed documents, and the golden outputs of examples/.
import AudioRouteCore
import Testing

private let audioroute = Subprocess.product("audioroute")

private func simulate(_ document: String) throws -> ProcessResult {
    try Subprocess.run(audioroute, ["simulate", "-"], input: Array(document.utf8))
}

@Suite struct ExampleGoldenTests {
    static let examples = ["phone-call", "music-bluetooth", "navigation-ducking", "recorder-no-mic", "headphone-jack"]

    @Test(arguments: examples)
    func exampleMatchesItsGoldenOutput(_ name: String) throws {
        let base = Subprocess.packageRoot + "/examples/" + name
        let result = try Subprocess.run(audioroute, ["simulate", base + ".json"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.isEmpty)
        let expected = try Subprocess.readFile(base + ".expected.jsonl")
        #expect(result.stdout == expected)
    }

    @Test(arguments: examples)
    func everyExampleIsListedInTheExamplesReadme(_ name: String) throws {
        let readme = try Subprocess.readFile(Subprocess.packageRoot + "/examples/README.md")
        #expect(readme.contains(name + ".json"))
    }
}

@Suite struct SimulateCommandTests {
    @Test func theSpecExampleGivesTheDocumentedAddLine() throws {
        let document = """
            {"ports": [{"uid": "spk", "type": "builtInSpeaker", "device": "internal"},
                       {"uid": "mic", "type": "builtInMic", "device": "internal"}],
             "sessions": [{"id": "app", "category": "playback", "options": []}],
             "steps": [{"activate": "app"},
                       {"add": {"uid": "bt-a2dp", "type": "bluetoothA2DP", "device": "bt:00:11:22:33:44:55"}}]}
            """
        let result = try simulate(document)
        #expect(result.status == 0)
        let lines = result.stdoutLines
        #expect(lines.count == 3)
        let line = try JSON.parse(String(lines[2]))
        #expect(line["step"] == .integer(2))
        #expect(line["route"] == Route(outputs: ["bt-a2dp"]).json)
        #expect(line["change"]?["reason"] == "newDeviceAvailable")
        #expect(line["change"]?["previous"] == Route(outputs: ["spk"]).json)
        #expect(line["events"] == .array([]))
        #expect(line["error"] == .null)
    }

    @Test func anotherDevicesMicComingAndGoingIsANewThenAnOldDevice() throws {
        // Issue 14's reproduction: the output stays on the speaker, the input moves to usb1 and back.
        let document = """
            {"ports":[{"uid":"spk","type":"builtInSpeaker","device":"internal"},{"uid":"mic","type":"builtInMic","device":"internal"}],
             "sessions":[{"id":"v","category":"playAndRecord"}],
             "steps":[{"activate":"v"},{"add":{"uid":"usbmic","type":"usbAudio","direction":"input","device":"usb1"}},{"remove":"usbmic"}]}
            """
        let result = try simulate(document)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lines = try result.stdoutLines.map { try JSON.parse(String($0)) }
        #expect(lines.count == 4)
        #expect(lines.dropFirst(2).map { $0["change"]?["reason"] } == ["newDeviceAvailable", "oldDeviceUnavailable"])
        #expect(lines[2]["route"] == Route(inputs: ["usbmic"], outputs: ["spk"]).json)
    }

    @Test func aRefusedStepIsReportedAndTheRunGoesOn() throws {
        let document = """
            {"ports": [{"uid": "spk", "type": "builtInSpeaker", "device": "internal"}],
             "sessions": [{"id": "app", "category": "playback"}],
             "steps": [{"setCategory": {"session": "app", "category": "playback", "options": ["defaultToSpeaker"]}},
                       {"override": {"session": "app", "port": "speaker"}},
                       {"activate": "ghost"},
                       {"remove": "nothing"},
                       {"activate": "app"}]}
            """
        let result = try simulate(document)
        #expect(result.status == 0)
        let lines = try result.stdoutLines.map { try JSON.parse(String($0)) }
        #expect(lines.count == 6)
        #expect(lines[1]["error"] == "invalidOption")
        #expect(lines[1]["message"] == "option defaultToSpeaker is not valid with category playback")
        #expect(lines[2]["error"] == "invalidOverride")
        #expect(lines[3]["error"] == "unknownSession")
        #expect(lines[4]["error"] == "unknownPort")
        #expect(lines[5]["error"] == .null)
        for line in lines { #expect(line["route"] == Route(outputs: ["spk"]).json) }
    }

    @Test(arguments: [
        (#"{"steps": [{"setCategory": {"session": "a", "category": "playback", "options": ["mixWithOthers", "allowBluetooh"]}}]}"#,
         #"steps[0].setCategory.options[1]: unknown option "allowBluetooh""#),
        (#"{"steps": [{"activate": "a"}, {"jump": "a"}]}"#, #"steps[1].jump: unknown step kind "jump""#),
        (#"{"ports": [{"uid": "x", "type": "subwoofer", "device": "d"}]}"#, #"ports[0].type: unknown port type "subwoofer""#),
        (#"{"sessions": [{"id": "a", "category": "karaoke"}]}"#, #"sessions[0].category: unknown category "karaoke""#),
        (#"{"sessions": [{"id": "a", "category": "playback", "mode": "loud"}]}"#, #"sessions[0].mode: unknown mode "loud""#),
        (#"{"ports": [{"uid": "x", "type": "builtInMic"}]}"#, #"ports[0]: missing key "device""#),
        (#"{"ports": [{"uid": "x", "type": "builtInMic", "device": "d", "direction": "output"}]}"#,
         "ports[0].direction: direction output is not possible for builtInMic"),
        (#"{"steps": [{"activate": "a", "wake": true}]}"#, "steps[0]: a step has exactly one kind, found 2 keys"),
        (#"{"steps": {"activate": "a"}}"#, "steps: expected an array, found an object"),
        (#"{"stpes": []}"#, #"stpes: unknown key "stpes""#),
        (#"{"steps": [{"override": {"session": "a", "port": "bluetooth"}}]}"#, #"steps[0].override.port: unknown override "bluetooth""#),
        (#"{"sessions": [{"id": "a", "category": "playback", "options": ["allowBluetooth"]}]}"#,
         "sessions[0].options: option allowBluetooth is not valid with category playback"),
        (#"{"ports": [{"uid": "x", "type": "builtInMic", "device": "d"}, {"uid": "x", "type": "builtInSpeaker", "device": "d"}]}"#,
         #"ports[1].uid: duplicate port uid "x""#),
        (#"{"steps": [{"wake": true}, {"add": {"uid": "usbmic", "type": "usbAudio", "uid": "x", "device": "usb1"}}]}"#,
         #"audioroute: error: steps[1].add: duplicate key "uid""#),
        (#"{"steps": [], "steps": []}"#, #"audioroute: error: duplicate key "steps""#),
        (#"{"steps": [}"#, "invalid JSON: line 1, column 12"),
        ("", "invalid JSON: line 1, column 1: unexpected end of document"),
    ])
    func aMalformedScenarioExitsWithDataErrorNamingThePathAndPrintsNothing(_ document: String, _ message: String) throws {
        let result = try simulate(document)
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains(message), "stderr was: \(result.stderr)")
    }

    @Test func aMissingFileIsAnErrorThatNamesIt() throws {
        let result = try Subprocess.run(audioroute, ["simulate", "/nonexistent/scenario.json"])
        #expect(result.status == 66)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("/nonexistent/scenario.json"))
    }

    @Test func theDeprecatedCategoryWarnsOnStandardError() throws {
        let document = #"{"sessions": [{"id": "a"}], "steps": [{"setCategory": {"session": "a", "category": "audioProcessing"}}]}"#
        let result = try simulate(document)
        #expect(result.status == 0)
        #expect(result.stdoutLines.count == 2)
        #expect(result.stderr.contains("warning: steps[0]: category audioProcessing is deprecated"))
    }

    @Test func aLongScenarioStreamsEveryLine() throws {
        var steps: [String] = []
        for index in 0..<2000 {
            steps.append(index % 2 == 0
                ? #"{"add": {"uid": "hp", "type": "headphones", "device": "jack"}}"#
                : #"{"remove": "hp"}"#)
        }
        let document = #"{"ports": [{"uid": "spk", "type": "builtInSpeaker", "device": "i"}], "sessions": [{"id": "a", "category": "ambient"}], "steps": [{"activate": "a"}, "#
            + steps.joined(separator: ", ") + "]}"
        let result = try simulate(document)
        #expect(result.status == 0)
        let lines = result.stdoutLines
        #expect(lines.count == 2002)
        let last = try JSON.parse(String(lines[2001]))
        #expect(last["step"] == .integer(2001))
        #expect(last["change"]?["reason"] == "oldDeviceUnavailable")
    }
}
