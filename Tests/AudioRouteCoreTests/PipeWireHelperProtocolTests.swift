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
        ("{}", "unknown request {} (a request is {\"defaults\": {\"sink\": …, \"source\": …}}, {\"stream\": {\"id\": …, \"paused\": …, \"volume\": …}} or {\"profile\": {\"device\": …, \"index\": …}})"),
        (#"{"volume": 1}"#, "unknown request \"volume\" (a request is {\"defaults\": {\"sink\": …, \"source\": …}}, {\"stream\": {\"id\": …, \"paused\": …, \"volume\": …}} or {\"profile\": {\"device\": …, \"index\": …}})"),
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
        (#"{"what": 1}"#, "unknown line \"what\" (the helper says hello, node, device, defaults, stream, profile or error)"),
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

    // MARK: Cards and their profiles

    static let card = PipeWireDevice(
        id: 40, properties: ["device.name": "alsa_card.pci-0000_00_1b.0", "api.alsa.card": "0", "device.api": "alsa"],
        profiles: [
            PipeWireProfile(index: 0, name: "off", description: "Off", priority: 0, available: .yes, sinks: 0, sources: 0),
            PipeWireProfile(index: 1, name: "output:analog-stereo+input:analog-stereo", description: "Analog Stereo Duplex", priority: 6565, available: .yes, sinks: 1, sources: 1),
            PipeWireProfile(index: 4, name: "output:hdmi-stereo", description: "Digital Stereo (HDMI) Output", priority: 5900, available: .no, sinks: 1, sources: 0),
        ], active: 1)

    @Test func deviceLinesAndProfileRepliesReadBackAsWritten() {
        let request = PipeWireProfileRequest(device: 40, index: 4)
        let events: [PipeWireHelperEvent] = [
            .device(Self.card, added: true), .device(PipeWireDevice(id: 40, properties: [:], profiles: [], active: nil), added: false),
            .deviceRemoved(id: 40), .profileSet(request), .profileFailed(request, message: "device 40 has no profile 4"),
        ]
        for event in events {
            let line = PipeWireHelperProtocol.line(event)
            #expect(PipeWireHelperProtocol.event(line.bytes) == .success(event), "\(line.text)")
        }
        #expect(PipeWireHelperProtocol.line(.deviceRemoved(id: 40)).text == #"{"device": 40, "change": "removed"}"#)
        #expect(PipeWireHelperProtocol.line(.profileSet(request)).text == #"{"profile": {"device": 40, "index": 4}, "ok": true}"#)
        #expect(PipeWireHelperProtocol.line(.device(PipeWireDevice(id: 3, properties: ["api.alsa.card": "1"], profiles: [Self.card.profiles[0]], active: 0), added: true)).text
            == #"{"device": 3, "change": "added", "properties": {"api.alsa.card": "1"}, "profiles": [{"index": 0, "name": "off", "description": "Off", "priority": 0, "available": "yes", "sinks": 0, "sources": 0}], "active": 0}"#)
        // The most profiles a device may have, each name and description at their longest, fit a line.
        let long = String(repeating: "p", count: PipeWireProfile.maximumTextLength)
        let full = PipeWireDevice(
            id: UInt32.max, properties: Dictionary(uniqueKeysWithValues: PipeWireDevice.keys.map { ($0, String(repeating: "v", count: PipeWireNode.maximumValueLength)) }),
            profiles: (0..<PipeWireDevice.maximumProfiles).map {
                PipeWireProfile(index: Int(Int32.max) - $0, name: long, description: long, priority: Int(Int32.min), available: .unknown, sinks: 1024, sources: 1024)
            }, active: Int(Int32.max))
        let line = PipeWireHelperProtocol.line(.device(full, added: true))
        #expect(line.bytes.count <= UCMLineSplitter.maximumLineLength, "\(line.bytes.count) bytes")
        #expect(PipeWireHelperProtocol.event(line.bytes) == .success(.device(full, added: true)))
    }

    @Test func aProfileRequestReadsBack() {
        let request = PipeWireHelperRequest.profile(PipeWireProfileRequest(device: 40, index: 3))
        let line = PipeWireHelperProtocol.line(request)
        #expect(line.text == #"{"profile": {"device": 40, "index": 3}}"#)
        #expect(PipeWireHelperProtocol.request(line.bytes) == .success(request))
    }

    @Test(arguments: [
        (#"{"profile": 3}"#, "\"profile\" is an object, not a number"),
        (#"{"profile": {"device": 1}}"#, "\"index\" of \"profile\" is a profile index (0 to 2147483647)"),
        (#"{"profile": {"device": -1, "index": 0}}"#, "\"device\" of \"profile\" is a device id (0 to 4294967295)"),
        (#"{"profile": {"device": 1, "index": 2147483648}}"#, "\"index\" of \"profile\" is a profile index (0 to 2147483647)"),
        (#"{"profile": {"device": 1, "index": 0, "save": true}}"#, "unknown member \"save\" of \"profile\" (it has \"device\" and \"index\")"),
    ])
    func aBadProfileRequestIsNamed(_ line: String, _ message: String) {
        #expect(PipeWireHelperProtocol.request(bytes(line)) == .failure(PipeWireProtocolError(message)))
    }

    static let offProfile = #"{"index": 0, "name": "off", "description": "Off", "priority": 0, "available": "yes", "sinks": 0, "sources": 0}"#

    @Test(arguments: [
        (#"{"device": "x", "change": "removed"}"#, "\"device\" is a device id (0 to 4294967295), not a string"),
        (#"{"device": 1, "change": "removed", "x": 1}"#, "a removed device has \"device\" and \"change\" alone"),
        (#"{"device": 1, "change": "added", "properties": {}, "profiles": []}"#,
         "a device added has \"device\", \"change\", \"properties\" (an object), \"profiles\" (an array) and \"active\""),
        (#"{"device": 1, "change": "added", "properties": {"device.serial": "x"}, "profiles": [], "active": null}"#, "unknown device property \"device.serial\""),
        (#"{"device": 1, "change": "added", "properties": {}, "profiles": [], "active": -1}"#, "\"active\" of device 1 is a profile index (0 to 2147483647) or null"),
        (#"{"device": 1, "change": "added", "properties": {}, "profiles": [3], "active": null}"#, "profile 0 of device 1: a profile is an object, not a number"),
        (#"{"device": 1, "change": "added", "properties": {}, "profiles": [{"index": 0}], "active": null}"#,
         "profile 0 of device 1: \"priority\" is an integer from -2147483648 to 2147483647"),
        (#"{"device": 1, "change": "added", "properties": {}, "profiles": [{"index": 0, "name": "off", "description": "Off", "priority": 0, "available": "maybe", "sinks": 0, "sources": 0}], "active": null}"#,
         "profile 0 of device 1: \"available\" is \"yes\", \"no\" or \"unknown\""),
        (#"{"device": 1, "change": "added", "properties": {}, "profiles": [{"index": 0, "name": "", "description": "Off", "priority": 0, "available": "yes", "sinks": 0, "sources": 0}], "active": null}"#,
         "profile 0 of device 1: \"name\" is a string of 1 to 192 bytes"),
        (#"{"device": 1, "change": "added", "properties": {}, "profiles": [{"index": 0, "name": "off", "description": "Off", "priority": 0, "available": "yes", "sinks": 0, "sources": 0, "classes": 1}], "active": null}"#,
         "profile 0 of device 1: unknown member \"classes\" (a profile has \"index\", \"name\", \"description\", \"priority\", \"available\", \"sinks\", \"sources\")"),
        (#"{"device": 1, "change": "added", "properties": {}, "profiles": [\#(offProfile), \#(offProfile)], "active": null}"#,
         "profile 1 of device 1: index 0 given twice"),
        (#"{"profile": {"device": 1, "index": 0}, "ok": false}"#, "a profile reply has \"ok\": true or \"error\": a message"),
        (#"{"profile": {"device": 1, "index": 0}}"#, "a profile reply has \"profile\" and \"ok\" or \"error\""),
    ])
    func aBadDeviceLineIsNamed(_ line: String, _ message: String) {
        #expect(PipeWireHelperProtocol.event(bytes(line)) == .failure(PipeWireProtocolError(message)))
    }

    @Test func aDeviceWithTooManyProfilesIsRefused() {
        let profiles = (0...PipeWireDevice.maximumProfiles).map { #"{"index": \#($0), "name": "p", "description": "", "priority": 0, "available": "yes", "sinks": 0, "sources": 0}"# }
        let line = #"{"device": 1, "change": "changed", "properties": {}, "profiles": [\#(profiles.joined(separator: ", "))], "active": null}"#
        #expect(PipeWireHelperProtocol.event(bytes(line)) == .failure(PipeWireProtocolError("device 1 has 97 profiles, over 96")))
        // A device keeps only the reported properties within the bound.
        let device = PipeWireDevice(id: 1, selecting: [(key: "device.name", value: "card"), (key: "object.serial", value: "9"), (key: "alsa.card", value: String(repeating: "1", count: 1025))], profiles: [], active: nil)
        #expect(device.properties == ["device.name": "card"])
    }
}
