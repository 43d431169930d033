import AudioRouteCore
@testable import AudioRouteWatchers
@testable import AudioRouteDBus
import AudioRouteIPC
import AudioRouteSystem
import Testing

@testable import AudioSession

/// The interruption an `Interruption` signal with `arguments` stands for.
private func interruption(_ arguments: [DBusValue]) throws(AudioSessionError) -> InterruptionInfo {
    guard case .interruption(let info)? = try Wire.sessionNotification(member: "Interruption", arguments) else {
        throw .badReply("not an interruption")
    }
    return info
}

/// Decoding of the daemon's D-Bus values and errors, fed directly.
@Suite struct WireTests {
    static func port(_ uid: String, _ type: String = "usbAudio", direction: String = "output", alsa: String = "plughw:CARD=H,DEV=0")
        -> DBusValue
    {
        .structure([
            .string(uid), .string(type), .string(direction), .string("usb-1"), .string("Headset"), .string(alsa), .int32(100),
            .uint64(7),
        ])
    }

    @Test func aPortDecodesEveryField() throws {
        let port = try Wire.port(Self.port("usb/out"))
        #expect(port.uid == "usb/out")
        #expect(port.portType == .usbAudio)
        #expect(port.direction == .output)
        #expect(port.device == "usb-1")
        #expect(port.portName == "Headset")
        #expect(port.alsa == "plughw:CARD=H,DEV=0")
        #expect(port.priority == 100)
        #expect(port.sequence == 7)
        #expect(port.port.type == .usbAudio)
    }

    @Test func onlyAllPortsSaysAPortsAvailability() throws {
        // Version 1's struct cannot tell an available port from one of unknown availability.
        #expect(try Wire.port(Self.port("usb/out")).availability == nil)
        #expect(try Wire.ports(.array([Self.port("usb/out")])).map(\.availability) == [nil])
        #expect(try Wire.route(.structure([.array([Self.port("usb/out")]), .array([])])).outputs.map(\.availability) == [nil])
        #expect(try Wire.portsChanged([.string("added"), Self.port("usb/out")]).1.availability == nil)
        guard case .structure(let fields) = Self.port("hp", "headphones") else { return }
        let all = try Wire.portsWithAvailability(.array([
            .structure(fields + [.string("unavailable")]), .structure(fields + [.string("unknown")]), .structure(fields + [.string("available")]),
        ]))
        #expect(all.map(\.availability) == [.unavailable, .unknown, .available])
        #expect(all[0].portType == .headphones && all[0].priority == 100 && all[0].sequence == 7)
        // The core's port keeps it; one whose availability is not said reads as available.
        #expect(all[0].port.availability == .unavailable)
        #expect(try Wire.port(Self.port("usb/out")).port.availability == .available)
        let (kind, port) = try Wire.allPortsChanged([.string("updated"), .structure(fields + [.string("unavailable")])])
        #expect(kind == .updated && port.uid == "hp" && port.availability == .unavailable)
        #expect(throws: AudioSessionError.badReply("port hp: unknown availability \"gone\"")) {
            try Wire.portsWithAvailability(.array([.structure(fields + [.string("gone")])]))
        }
    }

    @Test func anEmptyAlsaNameIsNone() throws {
        #expect(try Wire.port(Self.port("spk", "builtInSpeaker", alsa: "")).alsa == nil)
    }

    @Test func aRouteIsOutputsThenInputs() throws {
        let route = try Wire.route(
            .structure([.array([Self.port("usb/out")]), .array([Self.port("usb/in", direction: "input")])]))
        #expect(route.outputs.map(\.uid) == ["usb/out"])
        #expect(route.inputs.map(\.uid) == ["usb/in"])
        #expect(route.route == Route(inputs: ["usb/in"], outputs: ["usb/out"]))
    }

    @Test func badShapesAreNamedErrors() {
        #expect(throws: AudioSessionError.badReply("port x: unknown port type \"toaster\"")) {
            try Wire.port(Self.port("x", "toaster"))
        }
        #expect(throws: AudioSessionError.badReply("port x: unknown direction \"sideways\"")) {
            try Wire.port(Self.port("x", direction: "sideways"))
        }
        #expect(throws: AudioSessionError.badReply("a port is not (ssssssit): (si)")) {
            try Wire.port(.structure([.string("x"), .int32(1)]))
        }
        #expect(throws: AudioSessionError.self) { try Wire.route(.array([])) }
        #expect(throws: AudioSessionError.badReply("port x: control character in ALSA PCM name at byte 4")) {
            try Wire.port(Self.port("x", alsa: "dmix\n:CARD=H"))
        }
    }

    /// The ALSA name on the wire is the value's text, both ways, byte for byte.
    @Test func anAlsaNameCrossesTheWireAsItsText() throws {
        for alsa in ["dmix:CARD=H,DEV=0,CHANNELS=6", "hw:PinePhone,0", "plughw:CARD=\"USB\",DEV=0", "bluealsa:DEV=00:11:22:33:44:55,PROFILE=sco", "my eq"] {
            let port = try Wire.port(Self.port("x", alsa: alsa))
            #expect(port.alsa?.description == alsa)
            guard case .structure(let fields) = DBusAPI.value(of: port.port) else {
                Issue.record("a port is not a structure")
                continue
            }
            #expect(fields[5] == .string(alsa))
        }
    }

    @Test func routeChangedCarriesReasonAndBothRoutes() throws {
        let previous = DBusValue.structure([.array([Self.port("spk", "builtInSpeaker")]), .array([])])
        let current = DBusValue.structure([.array([Self.port("usb/out")]), .array([])])
        let change = try Wire.routeChange([.string("newDeviceAvailable"), previous, current])
        #expect(change.reason == .newDeviceAvailable)
        #expect(change.previousRoute.outputs.map(\.uid) == ["spk"])
        #expect(change.currentRoute.outputs.map(\.uid) == ["usb/out"])
        #expect(throws: AudioSessionError.badReply("RouteChanged: unknown reason \"because\"")) {
            try Wire.routeChange([.string("because"), previous, current])
        }
    }

    @Test func interruptionsMapTypeReasonAndShouldResume() throws {
        let began = try interruption([.string("began"), .string("routeDisconnected"), .bool(false)])
        #expect(began == InterruptionInfo(type: .began, reason: .routeDisconnected, options: []))
        let ended = try interruption([.string("ended"), .string(""), .bool(true)])
        #expect(ended == InterruptionInfo(type: .ended, reason: nil, options: .shouldResume))
        // should_resume means nothing on began.
        #expect(try interruption([.string("began"), .string("default"), .bool(true)]).options == [])
        #expect(throws: AudioSessionError.self) { try interruption([.string("paused"), .string(""), .bool(false)]) }
    }

    @Test func sessionsAndExplanationDecode() throws {
        let sessions = try Wire.sessions(.array([
            .structure([
                .objectPath("/org/audioroute/AudioRoute1/session/1"), .string(":1.5"), .string("music"), .string("playback"),
                .string("default"), .array([.string("mixWithOthers")]), .bool(true),
            ])
        ]))
        #expect(sessions.count == 1)
        #expect(sessions[0].app == "music")
        #expect(sessions[0].options == ["mixWithOthers"])
        #expect(sessions[0].isActive)
        let explanation = try Wire.explanation([
            .string("priority"), .string("sameDevice"), .array([.structure([.string("spk"), .array([.string("lower priority")])])]),
        ])
        #expect(explanation.outputRule == "priority")
        #expect(explanation.ports.first?.reasons == ["lower priority"])
    }

    @Test func dataSourcesRoundTripAndBadRepliesAreNamed() throws {
        let reply = DataSourcesReply(
            sources: [
                DataSource(id: "Mic1", name: "Digital Microphone", alsa: try ALSADevice(parsing: "dsnoop:CARD=sofhdadsp,DEV=6")),
                DataSource(id: "Mic2", name: "Stereo Microphone"),
            ], selected: "Mic2", reason: "the controlling session prefers Mic2")
        let values = DBusAPI.dataSourcesReply(reply)
        #expect(values == [
            .array([
                .structure([.string("Mic1"), .string("Digital Microphone"), .string("dsnoop:CARD=sofhdadsp,DEV=6")]),
                .structure([.string("Mic2"), .string("Stereo Microphone"), .string("")]),
            ]), .string("Mic2"), .string("the controlling session prefers Mic2"),
        ])
        #expect(try DBusAPI.dataSources(values) == reply)
        // A port without data sources: empty, no selection.
        let none = DataSourcesReply(sources: [], selected: nil, reason: "no data sources")
        #expect(try DBusAPI.dataSources(DBusAPI.dataSourcesReply(none)) == none)
        let cases: [([DBusValue], String)] = [
            ([.array([]), .string("")], "DataSources did not return (a(sss), s, s)"),
            ([.array([.structure([.string("Mic1"), .string("x")])]), .string(""), .string("")], "an entry is not (sss) with an id"),
            ([.array([.structure([.string(""), .string("x"), .string("")])]), .string(""), .string("")], "an entry is not (sss) with an id"),
            ([.array([.structure([.string("Mic1"), .string("x"), .string("hw:X,0\n")])]), .string(""), .string("")], "Mic1: PCM"),
            ([.array([.structure([.string("Mic1"), .string("x"), .string("")])]), .string("Mic2"), .string("")], "the selected Mic2 is none of the port's data sources"),
        ]
        for (arguments, fault) in cases {
            #expect(throws: WireError.self) { try DBusAPI.dataSources(arguments) }
            do { _ = try DBusAPI.dataSources(arguments) } catch { #expect(error.description.contains(fault), "\(error)") }
        }
        #expect(Wire.error(.remote(name: "org.audioroute.Error.UnknownDataSource", message: "port \"mic\" has no data source \"Mic9\""), bus: "session")
            == .unknownDataSource("port \"mic\" has no data source \"Mic9\""))
    }

    @Test func errorNamesBecomeTypedErrors() {
        let bus = "the bus at unix:path=/x"
        func map(_ name: String, _ message: String = "m") -> AudioSessionError {
            Wire.error(.remote(name: name, message: message), bus: bus)
        }
        #expect(map("org.audioroute.Error.InvalidOption") == .invalidOption("m"))
        #expect(map("org.audioroute.Error.InvalidOverride") == .invalidOverride("m"))
        #expect(map("org.audioroute.Error.UnknownName") == .unknownName("m"))
        #expect(map("org.audioroute.Error.UnknownPort") == .unknownPort("m"))
        #expect(map("org.audioroute.Error.NotAnInput") == .notAnInput("m"))
        #expect(map("org.audioroute.Error.NotOwner") == .notOwner("m"))
        #expect(map("org.audioroute.Error.NotSaved") == .notSaved("m"))
        #expect(map("org.freedesktop.DBus.Error.InvalidArgs") == .invalidArguments("m"))
        #expect(map("org.freedesktop.DBus.Error.LimitsExceeded") == .limitsExceeded("m"))
        #expect(map("org.freedesktop.DBus.Error.AccessDenied") == .accessDenied("m"))
        #expect(map("org.freedesktop.DBus.Error.ServiceUnknown") == .daemonUnavailable(bus: bus, detail: "m"))
        #expect(map("org.example.Strange", "") == .remote(name: "org.example.Strange", message: ""))
        let local = Wire.error(.bus(BusError(operation: "connect", errno: 2)), bus: bus)
        guard case .daemonUnavailable(bus, _) = local else {
            Issue.record("a local failure is daemonUnavailable, got \(local)")
            return
        }
        #expect(AudioSessionError.daemonUnavailable(bus: bus, detail: "x").description.contains("org.audioroute.AudioRoute1"))
    }
}
