// The contract against the checked-in introspection XML, both ways: every method, signal
// and property of the XML's API interfaces is in the contract with the same signatures,
// and every one of the contract's is in the XML.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteDBus
import Testing

/// One member as the XML or the contract declares it.
private struct Member: Hashable, CustomStringConvertible {
    var kind: String
    var interface: String
    var name: String
    /// Methods: the arguments' signature. Signals: theirs. Properties: the type.
    var input: String
    /// Methods: the reply's signature; "" otherwise.
    var output: String = ""

    var description: String { "\(kind) \(interface).\(name)(\(input))" + (output.isEmpty ? "" : " -> (\(output))") }
}

/// The members of every `org.audioroute.` interface in `xml`: a reader for the shape the
/// file has (elements one per line, comments without elements inside), not for all XML.
private func declaredMembers(_ xml: String) -> Set<Member> {
    var text = xml
    while let start = text.firstRange(of: "<!--"), let end = text[start.upperBound...].firstRange(of: "-->") {
        text.removeSubrange(start.lowerBound..<end.upperBound)
    }
    func attribute(_ name: String, _ tag: Substring) -> String? {
        guard let start = tag.firstRange(of: " \(name)=\"") else { return nil }
        let rest = tag[start.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }
    var members: Set<Member> = []
    var interface: String?
    var current: Member?
    for piece in text.split(separator: "<").dropFirst() {
        guard let close = piece.firstIndex(of: ">") else { continue }
        let tag = piece[..<close]
        let selfClosing = tag.hasSuffix("/")
        let element = tag.prefix { $0 != " " && $0 != "/" }
        switch element {
        case "interface": interface = attribute("name", tag).flatMap { $0.hasPrefix("org.audioroute.") ? $0 : nil }
        case "method", "signal":
            guard let interface, let name = attribute("name", tag) else { continue }
            let member = Member(kind: String(element), interface: interface, name: name, input: "")
            if selfClosing { members.insert(member) } else { current = member }
        case "arg":
            guard current != nil, let type = attribute("type", tag) else { continue }
            if attribute("direction", tag) == "out" { current!.output += type } else { current!.input += type }
        case "property":
            guard let interface, let name = attribute("name", tag), let type = attribute("type", tag) else { continue }
            members.insert(Member(kind: "property", interface: interface, name: name, input: type))
        default:
            if tag == "/method" || tag == "/signal", let member = current {
                members.insert(member)
                current = nil
            }
        }
    }
    return members
}

/// The members of the contract's API interfaces.
private var contractMembers: Set<Member> {
    var members: Set<Member> = []
    for method in DBusAPI.Manager.methods + DBusAPI.Session.methods {
        members.insert(Member(kind: "method", interface: method.interface, name: method.name, input: method.input, output: method.output))
    }
    for signal in DBusAPI.Manager.signals + DBusAPI.Session.signals + DBusAPI.Monitor.signals {
        members.insert(Member(kind: "signal", interface: signal.interface, name: signal.name, input: signal.signature))
    }
    for property in DBusAPI.Manager.properties + DBusAPI.Session.properties {
        members.insert(Member(kind: "property", interface: property.interface, name: property.name, input: property.signature))
    }
    return members
}

@Suite struct IntrospectionContractTests {
    static let xmlPath = fixturesDirectory + "/../../dbus/org.audioroute.AudioRoute1.xml"

    @Test func theEmbeddedXMLIsTheCheckedInFile() throws {
        // scripts/gen-dbus-introspection regenerates the constant; the file is what the daemon serves.
        #expect(audioRouteIntrospectionXML + "\n" == (try readText(Self.xmlPath)))
    }

    @Test func theXMLDeclaresExactlyTheContract() {
        let declared = declaredMembers(audioRouteIntrospectionXML)
        let contract = contractMembers
        // Both directions, each difference named.
        for member in declared.subtracting(contract).sorted(by: { $0.description < $1.description }) {
            Issue.record("the XML declares \(member), the contract does not")
        }
        for member in contract.subtracting(declared).sorted(by: { $0.description < $1.description }) {
            Issue.record("the contract declares \(member), the XML does not")
        }
        // The reader saw the whole file: every API member, none twice.
        #expect(declared.count == 5 + 5 + 10 + 8 + 6 + 7 + 1)
    }

    @Test func theReaderSeesArgumentsInBothDirections() {
        let xml = """
            <node>
              <interface name="org.audioroute.X">
                <!-- a comment -->
                <method name="M">
                  <arg name="a" type="s" direction="in"/>
                  <arg name="b" type="(ii)" direction="out"/>
                  <arg type="b" name="c" direction="in"/>
                </method>
                <method name="N"/>
                <signal name="S">
                  <arg name="x" type="as"/>
                </signal>
                <property name="P" type="u" access="read">
                  <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="const"/>
                </property>
              </interface>
              <interface name="org.freedesktop.DBus.Peer"><method name="Ping"/></interface>
            </node>
            """
        #expect(
            declaredMembers(xml) == [
                Member(kind: "method", interface: "org.audioroute.X", name: "M", input: "sb", output: "(ii)"),
                Member(kind: "method", interface: "org.audioroute.X", name: "N", input: ""),
                Member(kind: "signal", interface: "org.audioroute.X", name: "S", input: "as"),
                Member(kind: "property", interface: "org.audioroute.X", name: "P", input: "u"),
            ])
    }

    @Test func theServerContractIsTheAPIs() {
        let contract = DBusAPI.contract(enforced: true)
        #expect(contract.methods[DBusAPI.managerInterface]?[DBusAPI.Manager.setPortPriority.name] == "si")
        #expect(contract.methods[DBusAPI.propertiesInterface]?["Get"] == "ss")
        #expect(contract.credentialMembers.contains("org.audioroute.AudioRoute1.OpenSession"))
        #expect(contract.credentialMembers.contains("org.audioroute.Session1.OverrideOutput"))
        #expect(DBusAPI.contract(enforced: false).credentialMembers == ["org.audioroute.AudioRoute1.OpenSession"])
        #expect(DBusAPI.sessionNumber(DBusAPI.sessionPath(7)) == 7)
        #expect(DBusAPI.sessionNumber(DBusAPI.sessionsPath + "/0") == nil)
    }
}

/// The pure parts: argument checks, values, signals, introspection slicing.
@Suite struct DBusAPIUnitTests {
    @Test func signaturesAndStringLengthsAreCheckedToTheLastNestedString() {
        #expect(throws: Never.self) { try DBusAPI.check(signature: "ssas", expected: "ssas", arguments: [.string("a"), .string("b"), .array([.string("c")])]) }
        #expect(throws: DBusErrorReply("org.freedesktop.DBus.Error.InvalidArgs", "expected signature \"si\", got \"is\"")) {
            try DBusAPI.check(signature: "is", expected: "si", arguments: [.int32(1), .string("a")])
        }
        let long = String(repeating: "é", count: 2049)  // 4098 bytes, 2049 characters
        #expect(throws: DBusErrorReply("org.freedesktop.DBus.Error.InvalidArgs", "a string of 4098 bytes; at most 4096 are accepted")) {
            try DBusAPI.check(signature: "ssas", expected: "ssas", arguments: [.string("a"), .string("b"), .array([.string("c"), .string(long)])])
        }
        #expect(throws: Never.self) {
            try DBusAPI.check(signature: "s", expected: "s", arguments: [.string(String(repeating: "x", count: DBusAPI.maxStringBytes))])
        }
        #expect(throws: DBusErrorReply("org.freedesktop.DBus.Error.InvalidArgs", "a string that is not valid UTF-8")) {
            try DBusAPI.check(signature: "s", expected: "s", arguments: [.invalidString])
        }
    }

    @Test func sessionEventsBecomeTheDocumentedSignals() {
        #expect(DBusAPI.signal(for: .interruptionBegan(reason: .routeDisconnected)).values == [.string("began"), .string("routeDisconnected"), .bool(false)])
        #expect(DBusAPI.signal(for: .interruptionEnded(shouldResume: true)).values == [.string("ended"), .string(""), .bool(true)])
        #expect(DBusAPI.signal(for: .silenceSecondaryAudioEnd).member == "SilenceSecondaryAudioHint")
        #expect(DBusAPI.signal(for: .ducked).signature == "")
    }

    @Test func aRouteDescribesItsPortsAndLeavesOutUnknownOnes() {
        let port = Port(uid: "usb", type: .usbAudio, device: "usb:1", name: "Headset", direction: .duplex, priority: 60, sequence: 3, alsa: "plughw:CARD=H,DEV=0")
        let value = DBusAPI.value(of: RoutePorts(Route(inputs: ["usb", "gone"], outputs: ["usb"]), describe: { $0 == "usb" ? port : nil }))
        let described = DBusValue.structure([
            .string("usb"), .string("usbAudio"), .string("duplex"), .string("usb:1"), .string("Headset"), .string("plughw:CARD=H,DEV=0"),
            .int32(60), .uint64(3),
        ])
        #expect(value == .structure([.array([described]), .array([described])]))
    }

    @Test func interfaceBlocksAreCutVerbatim() throws {
        let block = try #require(DBusAPI.interfaceBlock(DBusAPI.sessionInterface))
        #expect(block.hasPrefix("  <interface name=\"org.audioroute.Session1\">"))
        #expect(block.hasSuffix("</interface>"))
        #expect(audioRouteIntrospectionXML.contains(block))
        #expect(DBusAPI.interfaceBlock("org.example.Nope") == nil)
    }
}

/// What the daemon encodes, a client decodes to the same value.
@Suite struct RoundTripTests {
    @Test func everySessionEventSurvivesItsSignal() throws {
        let kinds: [SessionEvent.Kind] = [
            .interruptionBegan(reason: .default), .interruptionBegan(reason: .routeDisconnected), .interruptionEnded(shouldResume: true),
            .interruptionEnded(shouldResume: false), .ducked, .unducked, .silenceSecondaryAudioBegin, .silenceSecondaryAudioEnd, .silenced,
            .unsilenced,
        ]
        for kind in kinds {
            let signal = DBusAPI.signal(for: kind)
            #expect(DBusAPI.Session.signals.contains { $0.name == signal.member && $0.signature == signal.signature })
            #expect(try DBusAPI.sessionEvent(member: signal.member, signal.values) == kind)
        }
        #expect(try DBusAPI.sessionEvent(member: "Bogus", []) == nil)
    }

    @Test func everySessionActivitySurvivesSessionChanged() throws {
        for change in SessionActivity.Change.allCases {
            let activity = SessionActivity(path: DBusAPI.sessionPath(3), app: "mus\u{202E}ic", change: change, detail: change == .activated ? "playback/default" : "")
            let arguments = DBusAPI.sessionChangedArguments(activity)
            #expect(arguments.map(\.typeName).joined() == DBusAPI.Monitor.sessionChanged.signature)
            #expect(try DBusAPI.sessionChanged(arguments) == activity)
        }
        // A tower event carries its detail; a server stream is named under the manager.
        let began = SessionActivity(path: DBusAPI.sessionObjectPath("pipewire/52"), app: "pw-play", event: .interruptionBegan(reason: .routeDisconnected))
        #expect(began.path == "/org/audioroute/AudioRoute1/pipewire/52")
        #expect(began.change == .interruptionBegan && began.detail == "routeDisconnected")
        #expect(SessionActivity(path: "/p", app: "", event: .interruptionEnded(shouldResume: true)).detail == "shouldResume")
        #expect(DBusAPI.sessionObjectPath(DBusAPI.sessionPath(2)) == DBusAPI.sessionPath(2))
        #expect(SessionActivity.detail(of: try SessionConfiguration(category: .playback, mode: .voicePrompt, options: [.duckOthers])) == "playback/voicePrompt duckOthers")
    }

    @Test func aMalformedSessionChangedIsNamed() {
        #expect(throws: WireError("SessionChanged is not (osss)")) { try DBusAPI.sessionChanged([.string("/p"), .string(""), .string("opened"), .string("")]) }
        #expect(throws: WireError("SessionChanged is not (osss)")) { try DBusAPI.sessionChanged([.objectPath("/p"), .string("")]) }
        #expect(throws: WireError("SessionChanged: unknown change \"exploded\"")) {
            try DBusAPI.sessionChanged([.objectPath("/p"), .string(""), .string("exploded"), .string("")])
        }
    }

    @Test func aRouteChangeSurvivesRouteChanged() throws {
        let speaker = Port(uid: "spk", type: .builtInSpeaker, device: "pci", alsa: "plughw:CARD=PCH,DEV=0")
        let headset = Port(uid: "usb", type: .usbAudio, device: "usb:1", name: "Headset", direction: .duplex, priority: 60, sequence: 3, alsa: nil)
        let change = RouteChange(
            reason: .newDeviceAvailable, previous: RoutePorts(outputs: [speaker]), current: RoutePorts(outputs: [headset], inputs: [headset]))
        #expect(try DBusAPI.routeChange(DBusAPI.routeChangedArguments(change)) == change)
        #expect(
            try DBusAPI.portsChanged(DBusAPI.portsChangedArguments(.removed, headset)) == (.removed, headset))
    }

    @Test func everyAvailabilitySurvivesAllPortsAndAllPortsChanged() throws {
        for availability in Port.Availability.allCases {
            let port = Port(
                uid: "hp", type: .headphones, device: "pci/jack", name: "Headphones", priority: 100, sequence: 4, alsa: "dmix:CARD=PCH,DEV=0",
                availability: availability)
            let value = DBusAPI.valueWithAvailability(of: port)
            #expect(value.typeName == DBusAPI.portWithAvailabilitySignature)
            #expect(try DBusAPI.portsWithAvailability(.array([value])) == [port])
            #expect(try DBusAPI.allPortsChanged(DBusAPI.allPortsChangedArguments(.updated, port)) == (.updated, port))
        }
        // Version 1's struct has no room for it: a port read from it is available.
        let unknown = Port(uid: "hdmi", type: .HDMI, device: "gpu", priority: -1, availability: .unknown)
        #expect(DBusAPI.value(of: unknown).typeName == DBusAPI.portSignature)
        #expect(try DBusAPI.port(DBusAPI.value(of: unknown)).availability == .available)
    }

    @Test func aPortWithAvailabilityInAnotherShapeIsANamedError() {
        let fields: [DBusValue] = [
            .string("hp"), .string("headphones"), .string("output"), .string("jack"), .string("Headphones"), .string(""), .int32(100),
            .uint64(1),
        ]
        #expect(throws: WireError("port hp: unknown availability \"plugged\"")) {
            try DBusAPI.portWithAvailability(.structure(fields + [.string("plugged")]))
        }
        #expect(throws: WireError("a port is not (ssssssits): (ssssssit)")) { try DBusAPI.portWithAvailability(.structure(fields)) }
        #expect(throws: WireError("a port is not (ssssssits): (ssssssitb)")) {
            try DBusAPI.portWithAvailability(.structure(fields + [.bool(true)]))
        }
        #expect(throws: WireError("AllPorts is not an array: s")) { try DBusAPI.portsWithAvailability(.string("x")) }
        #expect(throws: WireError("AllPortsChanged: unknown change \"moved\"")) {
            try DBusAPI.allPortsChanged([.string("moved"), .structure(fields + [.string("available")])])
        }
        #expect(throws: WireError("AllPortsChanged is not (s, (ssssssits))")) { try DBusAPI.allPortsChanged([.string("added")]) }
    }

    @Test func sessionsSurviveSessions() throws {
        let summary = SessionSummary(
            path: DBusAPI.sessionPath(3), owner: ":1.4", app: "music", category: "playback", mode: "default", options: ["mixWithOthers"],
            isActive: true)
        #expect(try DBusAPI.sessions(.array([DBusAPI.value(of: summary)])) == [summary])
    }
}
