// Spec §8 scenarios as the core reads and runs them: every malformed document is
// refused with the JSON path of its first fault; a valid one runs step by step.
@testable import AudioRouteCore
import Testing

struct ScenarioFault: Sendable, CustomTestStringConvertible {
    var document: String
    var path: String
    /// The message, or its beginning when it ends in a long list.
    var message: String
    var testDescription: String { path.isEmpty ? message : "\(path): \(message)" }

    init(_ document: String, _ path: String, _ message: String) {
        self.document = document
        self.path = path
        self.message = message
    }
}

private func parseFault(_ document: String) -> ScenarioError? {
    do {
        _ = try Scenario.parse(Array(document.utf8))
        return nil
    } catch {
        return error
    }
}

private let ports = #"[{"uid": "spk", "type": "builtInSpeaker", "device": "internal"}]"#
private let sessions = #"[{"id": "app", "category": "playAndRecord"}]"#

/// A document with valid ports and sessions and the given steps.
private func withSteps(_ steps: String) -> String { #"{"ports": \#(ports), "sessions": \#(sessions), "steps": \#(steps)}"# }

@Suite("Spec §8: scenario parsing")
struct ScenarioParseTests {
    @Test("faults are named by their JSON path", arguments: [
        ScenarioFault(
            withSteps(#"[{"activate": "app"}, {"wake": true}, {"remove": "spk"}, {"setCategory": {"session": "app", "category": "playAndRecord", "options": ["defaultToSpeaker", "allowBluetooh"]}}]"#),
            "steps[3].setCategory.options[1]", #"unknown option "allowBluetooh""#),
        ScenarioFault("[]", "", "expected an object, found an array"),
        ScenarioFault(#"{"port": []}"#, "port", #"unknown key "port" (expected one of: ports, sessions, steps)"#),
        ScenarioFault(#"{"ports": {}}"#, "ports", "expected an array, found an object"),
        ScenarioFault(#"{"ports": [3]}"#, "ports[0]", "expected an object, found a number"),
        ScenarioFault(#"{"ports": [{"type": "headphones", "device": "d"}]}"#, "ports[0]", #"missing key "uid""#),
        ScenarioFault(#"{"ports": [{"uid": "", "type": "headphones", "device": "d"}]}"#, "ports[0].uid", "must not be empty"),
        ScenarioFault(#"{"ports": [{"uid": 7, "type": "headphones", "device": "d"}]}"#, "ports[0].uid", "expected a string, found a number"),
        ScenarioFault(
            #"{"ports": [{"uid": "a", "type": "headphones", "device": "d"}, {"uid": "b", "type": "speaker", "device": "d"}]}"#,
            "ports[1].type", #"unknown port type "speaker""#),
        ScenarioFault(
            #"{"ports": [{"uid": "a", "type": "headphones", "device": "d"}, {"uid": "a", "type": "HDMI", "device": "e"}]}"#,
            "ports[1].uid", #"duplicate port uid "a""#),
        ScenarioFault(
            #"{"ports": [{"uid": "a", "type": "headphones", "device": "d", "direction": "input"}]}"#,
            "ports[0].direction", "direction input is not possible for headphones"),
        ScenarioFault(
            #"{"ports": [{"uid": "a", "type": "usbAudio", "device": "d", "direction": "both"}]}"#,
            "ports[0].direction", #"unknown direction "both""#),
        ScenarioFault(
            #"{"ports": [{"uid": "a", "type": "headphones", "device": "d", "priority": "high"}]}"#,
            "ports[0].priority", "expected an integer, found a string"),
        ScenarioFault(
            #"{"ports": [{"uid": "a", "type": "headphones", "device": "d", "priority": 1.5}]}"#,
            "ports[0].priority", "expected an integer, found a number"),
        ScenarioFault(
            #"{"ports": [{"uid": "a", "type": "headphones", "device": "d", "priority": 3000000000}]}"#,
            "ports[0].priority", "priority out of range"),
        ScenarioFault(
            #"{"ports": [{"uid": "a", "type": "headphones", "device": "d", "sequence": 0}]}"#,
            "ports[0].sequence", "sequence must be 1 or more"),
        ScenarioFault(
            #"{"ports": [{"uid": "a", "type": "headphones", "device": "d", "alsa": ""}]}"#, "ports[0].alsa", "must not be empty"),
        ScenarioFault(
            #"{"ports": [{"uid": "a", "type": "headphones", "device": "d", "colour": "red"}]}"#, "ports[0].colour",
            #"unknown key "colour""#),
        ScenarioFault(#"{"sessions": [{"category": "playback"}]}"#, "sessions[0]", #"missing key "id""#),
        ScenarioFault(#"{"sessions": [{"id": "app", "category": "music"}]}"#, "sessions[0].category", #"unknown category "music""#),
        ScenarioFault(#"{"sessions": [{"id": "app", "mode": "voicechat"}]}"#, "sessions[0].mode", #"unknown mode "voicechat""#),
        ScenarioFault(
            #"{"sessions": [{"id": "app", "category": "playback", "options": ["defaultToSpeaker"]}]}"#, "sessions[0].options",
            "option defaultToSpeaker is not valid with category playback"),
        ScenarioFault(#"{"sessions": [{"id": "app", "options": "mixWithOthers"}]}"#, "sessions[0].options", "expected an array, found a string"),
        ScenarioFault(#"{"sessions": [{"id": "app"}, {"id": "app"}]}"#, "sessions[1].id", #"duplicate session id "app""#),
        ScenarioFault(
            #"{"sessions": [{"id": "app", "prefersInterruptionOnRouteDisconnect": 0}]}"#,
            "sessions[0].prefersInterruptionOnRouteDisconnect", "expected true or false, found a number"),
        ScenarioFault(withSteps(#"{"activate": "app"}"#), "steps", "expected an array, found an object"),
        ScenarioFault(withSteps(#"[{"activate": "app", "wake": true}]"#), "steps[0]", "a step has exactly one kind, found 2 keys"),
        ScenarioFault(withSteps(#"[{}]"#), "steps[0]", "a step has exactly one kind, found 0 keys"),
        ScenarioFault(withSteps(#"[{"activat": "app"}]"#), "steps[0].activat", #"unknown step kind "activat" (expected one of: activate, "#),
        ScenarioFault(withSteps(#"[{"activate": ""}]"#), "steps[0].activate", "must not be empty"),
        ScenarioFault(withSteps(#"[{"activate": {"id": "app"}}]"#), "steps[0].activate.id", #"unknown key "id""#),
        ScenarioFault(withSteps(#"[{"wake": false}]"#), "steps[0].wake", "expected true"),
        ScenarioFault(withSteps(#"[{"silentMode": "on"}]"#), "steps[0].silentMode", "expected true or false, found a string"),
        ScenarioFault(withSteps(#"[{"setCategory": {"session": "app"}}]"#), "steps[0].setCategory", #"missing key "category""#),
        ScenarioFault(
            withSteps(#"[{"setCategory": {"session": "app", "category": "playback", "mode": "voicechat"}}]"#),
            "steps[0].setCategory.mode", #"unknown mode "voicechat""#),
        ScenarioFault(
            withSteps(#"[{"setCategory": {"session": "app", "category": "playback", "options": [1]}}]"#),
            "steps[0].setCategory.options[0]", "expected a string, found a number"),
        ScenarioFault(withSteps(#"[{"override": {"session": "app", "port": "receiver"}}]"#), "steps[0].override.port", #"unknown override "receiver""#),
        ScenarioFault(
            withSteps(#"[{"deactivate": {"session": "app", "notifyOthers": "yes"}}]"#), "steps[0].deactivate.notifyOthers",
            "expected true or false, found a string"),
        ScenarioFault(
            withSteps(#"[{"add": [{"uid": "a", "type": "headphones", "device": "d"}, {"uid": "b", "type": "HDMI"}]}]"#),
            "steps[0].add[1]", #"missing key "device""#),
        ScenarioFault(withSteps(#"[{"remove": 3}]"#), "steps[0].remove", "expected a string, found a number"),
        ScenarioFault(withSteps(#"[{"remove": ["spk", ""]}]"#), "steps[0].remove[1]", "must not be empty"),
        ScenarioFault(withSteps(#"[{"preferInput": {"session": "app"}}]"#), "steps[0].preferInput", #"missing key "uid""#),
        ScenarioFault(withSteps(#"[{"setPriority": {"uid": "spk", "priority": 4294967296}}]"#), "steps[0].setPriority.priority", "priority out of range"),
        ScenarioFault(withSteps(#"[{"open": {"id": "app2", "category": "jazz"}}]"#), "steps[0].open.category", #"unknown category "jazz""#),
        // A repeated key is refused where the parser meets it, named by the object holding it.
        ScenarioFault(#"{"steps": [], "ports": [], "steps": [{"wake": true}]}"#, "", #"duplicate key "steps""#),
        ScenarioFault(
            withSteps(#"[{"wake": true}, {"add": {"uid": "usbmic", "type": "usbAudio", "uid": "spk", "device": "usb1"}}]"#),
            "steps[1].add", #"duplicate key "uid""#),
        ScenarioFault(
            #"{"ports": [{"uid": "a", "type": "headphones", "device": "d"}, {"uid": "b", "type": "HDMI", "device": "e", "device": "e"}]}"#,
            "ports[1]", #"duplicate key "device""#),
        ScenarioFault(
            withSteps(#"[{"add": [{"uid": "a", "type": "headphones", "device": "d"}, {"uid": "b", "type": "HDMI", "device": "e", "type": "HDMI"}]}]"#),
            "steps[0].add[1]", #"duplicate key "type""#),
        ScenarioFault(
            #"{"sessions": [{"id": "app", "category": "playback", "options": [], "category": "playback"}]}"#, "sessions[0]",
            #"duplicate key "category""#),
        // Even where the first value alone would be refused: the repeat is found first.
        ScenarioFault(#"{"stpes": [], "stpes": []}"#, "", #"duplicate key "stpes""#),
    ])
    func faults(_ fault: ScenarioFault) throws {
        let error = try #require(parseFault(fault.document))
        #expect(error.path == fault.path)
        #expect(error.message.hasPrefix(fault.message), "\(error.message)")
        #expect(error.description == (fault.path.isEmpty ? error.message : "\(fault.path): \(error.message)"))
    }

    @Test("the brief's example fault reads exactly")
    func exampleFault() throws {
        let error = try #require(
            parseFault(
                withSteps(
                    #"[{"activate": "app"}, {"wake": true}, {"remove": "spk"}, {"setCategory": {"session": "app", "category": "playAndRecord", "options": ["defaultToSpeaker", "allowBluetooh"]}}]"#
                )))
        #expect(
            error.description
                == #"steps[3].setCategory.options[1]: unknown option "allowBluetooh" (did you mean "allowBluetooth"?); one of: "#
                + CategoryOptions.named.map(\.name).joined(separator: ", "))
    }

    @Test("invalid JSON is a fault of the document, with its position")
    func invalidJSON() throws {
        let error = try #require(parseFault("{\"ports\": [}"))
        #expect(error.path == "")
        #expect(error.message == "invalid JSON: line 1, column 12: unexpected character")
        #expect(try #require(parseFault("")).message.hasPrefix("invalid JSON"))
    }

    @Test("the spec's example parses into its steps")
    func specExample() throws {
        let scenario = try Scenario.parse(Array(specExampleDocument.utf8))
        #expect(scenario.ports.map(\.uid) == ["spk", "mic"])
        #expect(scenario.ports.map(\.priority) == [0, 0])
        #expect(scenario.sessions.map(\.id) == ["app"])
        #expect(scenario.sessions.first?.configuration.category == .playback)
        #expect(
            scenario.steps == [
                .activate(session: "app"),
                .add([Port(uid: "bt-a2dp", type: .bluetoothA2DP, device: "bt:00:11:22:33:44:55")]),
                .remove(["bt-a2dp"]),
                .setCategory(session: "app", category: .playAndRecord, mode: .voiceChat, options: .defaultToSpeaker),
                .override(session: "app", port: .speaker),
                .preferInput(session: "app", uid: "mic"),
                .deactivate(session: "app", notifyOthers: true),
                .wake,
            ])
    }

    @Test("optional step forms: lists, null uid, object references, defaults")
    func stepForms() throws {
        let scenario = try Scenario.parse(
            Array(
                withSteps(
                    #"[{"add": [{"uid": "a", "type": "usbAudio", "device": "u", "direction": "input", "priority": -3, "sequence": 9, "name": "Mic", "alsa": "plughw:CARD=U,DEV=0"}]}, {"remove": ["a", "spk"]}, {"preferInput": {"session": "app", "uid": null}}, {"deactivate": "app"}, {"close": {"session": "app"}}, {"open": {"id": "b", "prefersInterruptionOnRouteDisconnect": false}}, {"update": {"uid": "spk", "type": "builtInSpeaker", "device": "internal"}}, {"screenLocked": true}, {"silentMode": false}, {"setPriority": {"uid": "spk", "priority": 7}}]"#
                ).utf8))
        let added = Port(uid: "a", type: .usbAudio, device: "u", name: "Mic", direction: .input, priority: -3, sequence: 9, alsa: "plughw:CARD=U,DEV=0")
        var opened = Session(id: "b")
        opened.prefersInterruptionOnRouteDisconnect = false
        #expect(
            scenario.steps == [
                .add([added]), .remove(["a", "spk"]), .preferInput(session: "app", uid: nil), .deactivate(session: "app", notifyOthers: false),
                .close(session: "app"), .open(opened), .update(Port(uid: "spk", type: .builtInSpeaker, device: "internal")),
                .screenLocked(true), .silentMode(false), .setPriority(uid: "spk", priority: 7),
            ])
    }
}

let specExampleDocument = #"""
    {
      "ports": [
        {"uid": "spk", "type": "builtInSpeaker", "device": "internal"},
        {"uid": "mic", "type": "builtInMic", "device": "internal"}
      ],
      "sessions": [{"id": "app", "category": "playback", "options": []}],
      "steps": [
        {"activate": "app"},
        {"add": {"uid": "bt-a2dp", "type": "bluetoothA2DP", "device": "bt:00:11:22:33:44:55"}},
        {"remove": "bt-a2dp"},
        {"setCategory": {"session": "app", "category": "playAndRecord", "mode": "voiceChat", "options": ["defaultToSpeaker"]}},
        {"override": {"session": "app", "port": "speaker"}},
        {"preferInput": {"session": "app", "uid": "mic"}},
        {"deactivate": {"session": "app", "notifyOthers": true}},
        {"wake": true}
      ]
    }
    """#

@Suite("Spec §8: running scenarios")
struct SimulatorTests {
    private func run(_ document: String) throws -> [JSON] {
        var lines: [String] = []
        _ = try Simulator.run(try Scenario.parse(Array(document.utf8))) { lines.append($0) }
        return try lines.map { try JSON.parse($0) }
    }

    @Test("the spec's example: line 0 is the initial state, line 2 is the line the spec shows")
    func specExample() throws {
        let lines = try run(specExampleDocument)
        #expect(lines.count == 9)
        #expect(lines[0] == (try JSON.parse(#"{"step": 0, "route": {"inputs": [], "outputs": ["spk"]}, "change": null, "events": [], "error": null}"#)))
        #expect(
            lines[2]
                == (try JSON.parse(
                    #"{"step": 2, "route": {"inputs": [], "outputs": ["bt-a2dp"]}, "change": {"reason": "newDeviceAvailable", "previous": {"inputs": [], "outputs": ["spk"]}}, "events": [], "error": null}"#
                )))
        // Removing the A2DP headset while playback plays from it interrupts the session.
        #expect(lines[3]["change"]?["reason"] == "oldDeviceUnavailable")
        #expect(lines[3]["events"] == (try JSON.parse(#"[{"session": "app", "type": "interruptionBegan", "reason": "routeDisconnected"}]"#)))
        #expect(lines.enumerated().allSatisfy { $0.element["step"] == .integer(Int64($0.offset)) })
    }

    @Test("a refused step names its error and leaves the state as it was")
    func refusedStep() throws {
        let lines = try run(
            withSteps(
                #"[{"activate": "app"}, {"activate": "ghost"}, {"setCategory": {"session": "app", "category": "playback", "options": ["defaultToSpeaker"]}}, {"override": {"session": "app", "port": "speaker"}}, {"remove": "nope"}]"#
            ))
        #expect(lines[2]["error"] == "unknownSession")
        #expect(lines[3]["error"] == "invalidOption")
        #expect(lines[3]["message"] == "option defaultToSpeaker is not valid with category playback")
        #expect(lines[4]["error"] == .null, "a valid step after refused ones runs")
        #expect(lines[5]["error"] == "unknownPort")
        for index in [2, 3, 5] {
            #expect(lines[index]["route"] == lines[index - 1]["route"])
            #expect(lines[index]["change"] == .null)
            #expect(lines[index]["events"] == .array([]))
        }
    }

    @Test("events carry their keys in delivery order")
    func eventKeys() throws {
        let lines = try run(
            #"{"ports": \#(ports), "sessions": [{"id": "a", "category": "playback"}, {"id": "b", "category": "playback"}, {"id": "d", "category": "ambient", "options": ["duckOthers"]}], "steps": [{"activate": "a"}, {"activate": "b"}, {"deactivate": {"session": "b", "notifyOthers": true}}, {"activate": "a"}, {"activate": "d"}]}"#
        )
        #expect(lines[2]["events"] == (try JSON.parse(#"[{"session": "a", "type": "interruptionBegan", "reason": "default"}]"#)))
        #expect(lines[3]["events"] == (try JSON.parse(#"[{"session": "a", "type": "interruptionEnded", "shouldResume": true}]"#)))
        guard case .array(let ducking)? = lines[5]["events"], ducking.count == 2 else {
            Issue.record("expected two events, got \(String(describing: lines[5]["events"]))")
            return
        }
        #expect(ducking[0]["session"] == "a" && ducking[0]["type"] == "ducked")
        guard case .double(let gain)? = ducking[0]["gain"] else {
            Issue.record("ducked carries no gain")
            return
        }
        #expect(abs(gain - 0.3) < 1e-6)
        #expect(ducking[1] == (try JSON.parse(#"{"session": "d", "type": "silenceSecondaryAudioBegin"}"#)))
    }
}
