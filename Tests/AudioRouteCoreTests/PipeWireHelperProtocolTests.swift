import AudioRouteCore
import Testing

/// The PipeWire helper's lines, both ways (docs/daemon.md, "The PipeWire helper").
@Suite struct PipeWireHelperProtocolTests {
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func everyEventReadsBackAsWritten() throws {
        let node = PipeWireNode(id: 52, properties: ["node.name": "speaker", "media.class": "Audio/Sink", "alsa.card": "1"])
        let events: [PipeWireHelperEvent] = [
            .hello(version: "0.3.65"), .node(node, added: true), .node(node, added: false), .removed(id: 52),
            .defaultsSet(PipeWireDefaults(sink: "speaker", source: nil)),
            .defaultsFailed(PipeWireDefaults(sink: nil, source: "mic"), message: "no metadata"), .error("malformed JSON"),
        ]
        for event in events {
            let line = PipeWireHelperProtocol.line(event)
            #expect(PipeWireHelperProtocol.event(line.bytes) == .success(event), "\(line.text)")
        }
        #expect(PipeWireHelperProtocol.line(.node(node, added: true)).text
            == #"{"node": 52, "change": "added", "properties": {"node.name": "speaker", "media.class": "Audio/Sink", "alsa.card": "1"}}"#)
    }

    @Test func aDefaultsRequestReadsBack() {
        let request = PipeWireHelperRequest.defaults(PipeWireDefaults(sink: "speaker", source: nil))
        let line = PipeWireHelperProtocol.line(request)
        #expect(line.text == #"{"defaults": {"sink": "speaker", "source": null}}"#)
        #expect(PipeWireHelperProtocol.request(line.bytes) == .success(request))
    }

    @Test(arguments: [
        ("garbage", "malformed JSON: line 1, column 1: unexpected character"),
        ("[1]", "a line is a JSON object, not an array"),
        ("{}", "unknown request {} (a request is {\"defaults\": {\"sink\": …, \"source\": …}} or {\"stream\": {\"id\": …, \"paused\": …, \"volume\": …}})"),
        (#"{"volume": 1}"#, "unknown request \"volume\" (a request is {\"defaults\": {\"sink\": …, \"source\": …}} or {\"stream\": {\"id\": …, \"paused\": …, \"volume\": …}})"),
        (#"{"defaults": {"sink": null, "source": null}, "x": 1}"#, "unknown member \"x\" (a request has \"defaults\" alone)"),
        (#"{"defaults": 3}"#, "\"defaults\" is an object, not a number"),
        (#"{"defaults": {"sink": null}}"#, "missing member \"source\" of \"defaults\""),
        (#"{"defaults": {"sink": 1, "source": null}}"#, "\"sink\" is a node name or null, not a number"),
        (#"{"defaults": {"sink": "", "source": null}}"#, "\"sink\" is a node name of 1 to 1024 bytes"),
        (#"{"defaults": {"sink": null, "source": null, "card": "x"}}"#, "unknown member \"card\" of \"defaults\" (it has \"sink\" and \"source\")"),
        (#"{"stream": {"id": 1, "paused": true, "volume": 1}, "x": 1}"#, "unknown member \"x\" (a request has \"stream\" alone)"),
        (#"{"stream": [1]}"#, "\"stream\" is an object, not an array"),
        (#"{"stream": {"id": 1, "paused": true, "volume": 1, "mute": true}}"#, "unknown member \"mute\" of \"stream\" (it has \"id\", \"paused\" and \"volume\")"),
        (#"{"stream": {"id": -1, "paused": true, "volume": 1}}"#, "\"id\" of \"stream\" is a node id (0 to 4294967295)"),
        (#"{"stream": {"paused": true, "volume": 1}}"#, "\"id\" of \"stream\" is a node id (0 to 4294967295)"),
        (#"{"stream": {"id": 1, "paused": 1, "volume": 1}}"#, "\"paused\" of \"stream\" is true or false"),
        (#"{"stream": {"id": 1, "paused": false}}"#, "\"volume\" of \"stream\" is a number from 0 to 1"),
        (#"{"stream": {"id": 1, "paused": false, "volume": "loud"}}"#, "\"volume\" of \"stream\" is a number from 0 to 1"),
        (#"{"stream": {"id": 1, "paused": false, "volume": 1.5}}"#, "\"volume\" of \"stream\" is a number from 0 to 1, not 1.5"),
        (#"{"stream": {"id": 1, "paused": false, "volume": -0.1}}"#, "\"volume\" of \"stream\" is a number from 0 to 1, not -0.1"),
    ])
    func aBadRequestIsNamed(_ line: String, _ message: String) {
        #expect(PipeWireHelperProtocol.request(bytes(line)) == .failure(PipeWireProtocolError(message)))
    }

    @Test func aStreamRequestReadsBack() {
        let request = PipeWireHelperRequest.stream(PipeWireStreamControl(id: 77, paused: false, volume: 0.3))
        let line = PipeWireHelperProtocol.line(request)
        #expect(line.text == #"{"stream": {"id": 77, "paused": false, "volume": 0.3}}"#)
        #expect(PipeWireHelperProtocol.request(line.bytes) == .success(request))
        // An integer volume is a number too.
        #expect(PipeWireHelperProtocol.request(bytes(#"{"stream": {"id": 3, "paused": true, "volume": 0}}"#))
            == .success(.stream(PipeWireStreamControl(id: 3, paused: true, volume: 0))))
    }

    @Test func streamRepliesReadBack() {
        for event in [PipeWireHelperEvent.streamSet(id: 77), .streamFailed(id: 78, message: "no client stream 78")] {
            #expect(PipeWireHelperProtocol.event(PipeWireHelperProtocol.line(event).bytes) == .success(event))
        }
        #expect(PipeWireHelperProtocol.line(.streamSet(id: 77)).text == #"{"stream": 77, "ok": true}"#)
        #expect(PipeWireHelperProtocol.line(.streamFailed(id: 78, message: "x")).text == #"{"stream": 78, "error": "x"}"#)
    }

    @Test func sizesAreCheckedBeforeDecoding() {
        let long = String(repeating: "n", count: 1025)
        #expect(PipeWireHelperProtocol.request(bytes(#"{"defaults": {"sink": "\#(long)", "source": null}}"#))
            == .failure(PipeWireProtocolError("\"sink\" is a node name of 1 to 1024 bytes")))
        let huge = [UInt8](repeating: UInt8(ascii: " "), count: 65537)
        #expect(PipeWireHelperProtocol.request(huge) == .failure(PipeWireProtocolError("line over 65536 bytes")))
        // Nesting deeper than any line of the protocol is refused, not recursed into.
        let deep = String(repeating: "[", count: 100_000)
        guard case .failure = PipeWireHelperProtocol.request(bytes(deep)) else { Issue.record("deep nesting taken"); return }
    }

    @Test(arguments: [
        (#"{"hello": 3}"#, "\"hello\" takes the server's version, alone"),
        (#"{"node": -1, "change": "removed"}"#, "\"node\" is a node id (0 to 4294967295), not a number"),
        (#"{"node": 1, "change": "gone"}"#, "\"change\" is \"added\", \"changed\" or \"removed\""),
        (#"{"node": 1, "change": "added"}"#, "a node added has \"node\", \"change\" and \"properties\" (an object)"),
        (#"{"node": 1, "change": "added", "properties": {"secret": "x"}}"#, "unknown node property \"secret\""),
        (#"{"defaults": {"sink": null, "source": null}}"#, "a defaults reply has \"defaults\" and \"ok\" or \"error\""),
        (#"{"defaults": {"sink": null, "source": null}, "ok": false}"#, "a defaults reply has \"ok\": true or \"error\": a message"),
        (#"{"what": 1}"#, "unknown line \"what\" (the helper says hello, node, defaults, stream or error)"),
        (#"{"stream": 1, "ok": false}"#, "a stream reply has \"ok\": true or \"error\": a message"),
        (#"{"stream": "x", "ok": true}"#, "a stream reply has \"stream\" (a node id) and \"ok\" or \"error\""),
    ])
    func aBadHelperLineIsNamed(_ line: String, _ message: String) {
        #expect(PipeWireHelperProtocol.event(bytes(line)) == .failure(PipeWireProtocolError(message)))
    }

    @Test func aNodeKeepsOnlyTheReportedPropertiesWithinTheBound() {
        let node = PipeWireNode(
            id: 7,
            selecting: [
                (key: "node.name", value: "speaker"), (key: "object.serial", value: "99"),
                (key: "application.name", value: String(repeating: "a", count: 1025)), (key: "media.role", value: String(repeating: "r", count: 1024)),
            ])
        #expect(node.properties == ["node.name": "speaker", "media.role": String(repeating: "r", count: 1024)])
    }
}
