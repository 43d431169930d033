// The D-Bus API end to end: the built audiorouted on a private session bus,
// BlueZ mocked on a private system bus (the hardware), and client processes
// (Tests/Fixtures/dbus/client.py) that call it and record its signals.
import AudioRouteCore
import AudioRouteTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Everything one test needs, stopped and removed in `close()`.
final class APIBench: @unchecked Sendable {
    static let packageRoot: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()
    static let clientScript = packageRoot + "/Tests/Fixtures/dbus/client.py"
    static let bluezScript = packageRoot + "/scripts/bluez-testbench.py"
    static let managerPath = "/org/audioroute/AudioRoute1"
    static let manager = "org.audioroute.AudioRoute1"
    static let session = "org.audioroute.Session1"

    let dir: String
    let bus: PrivateBus
    let bluez: ScriptedClient
    let systemBus: String
    private(set) var daemon: ChildProcess?
    private var clients: [APIClient] = []

    init() throws {
        dir = try makeTemporaryDirectory()
        bus = try PrivateBus()
        bluez = try ScriptedClient(["/usr/bin/python3", Self.bluezScript])
        guard let ready = bluez.readLine(seconds: 30), ready.hasPrefix("ready ") else {
            throw TestFailure("the BlueZ mock did not start")
        }
        systemBus = String(ready.dropFirst("ready ".count))
        try bluezCommand(#"{"cmd": "adapter", "name": "hci0"}"#)
    }

    @discardableResult
    func bluezCommand(_ json: String) throws -> String {
        bluez.send(json)
        guard let line = bluez.readLine(seconds: 10), line.hasPrefix("ok") else { throw TestFailure("BlueZ mock refused \(json)") }
        return line
    }

    /// A headset that connects as BlueZ reports it: Connected, then services resolved.
    func connectHeadset(_ address: String, alias: String, uuids: [String]) throws {
        try bluezCommand(#"{"cmd": "device", "adapter": "hci0", "address": "\#(address)", "alias": "\#(alias)"}"#)
        try bluezCommand(#"{"cmd": "connect", "adapter": "hci0", "address": "\#(address)"}"#)
        let path = "/org/bluez/hci0/dev_" + address.split(separator: ":").joined(separator: "_")
        let list = uuids.map { "\"\($0)\"" }.joined(separator: ", ")
        try bluezCommand(
            #"{"cmd": "props", "path": "\#(path)", "iface": "org.bluez.Device1", "props": {"UUIDs": ["as", [\#(list)]], "Class": ["u", 2360324], "ServicesResolved": ["b", true]}}"#
        )
    }

    /// Starts audiorouted and waits for READY=1.
    func startDaemon(_ extra: [String] = []) throws {
        let socket = try NotifySocket(path: dir + "/notify-\(clients.count)-\(UInt32.random(in: 0...UInt32.max))")
        let child = try ChildProcess(
            productsDirectory + "/audiorouted", ["--state-dir", dir + "/state", "--runtime-dir", dir + "/run", "--log-level", "debug"] + extra,
            environment: ["NOTIFY_SOCKET": socket.name, "DBUS_SESSION_BUS_ADDRESS": bus.address, "DBUS_SYSTEM_BUS_ADDRESS": systemBus])
        daemon = child
        guard socket.receive(seconds: 20) == "READY=1" else { throw TestFailure("audiorouted not ready: \(child.availableStderr())") }
    }

    func client() throws -> APIClient {
        let client = try APIClient(bus.address)
        clients.append(client)
        return client
    }

    func close() {
        for client in clients { client.process.close() }
        daemon?.signal(SIGKILL)
        _ = daemon?.wait(seconds: 5)
        bluez.close()
        bus.close()
        removeTree(dir)
    }

    deinit { close() }
}

/// One client process: calls the daemon, and keeps every signal it received.
final class APIClient: @unchecked Sendable {
    let process: ScriptedClient
    let uniqueName: String
    private(set) var signals: [JSON] = []

    init(_ address: String) throws {
        process = try ScriptedClient(["/usr/bin/python3", APIBench.clientScript, address])
        guard let line = process.readLine(seconds: 20), let ready = try? JSON.parse(line), let text = ready.stringValue, text.hasPrefix("ready ") else {
            throw TestFailure("the test client did not start")
        }
        uniqueName = String(text.dropFirst("ready ".count))
    }

    enum Answer: Equatable {
        case reply(JSON)
        case error(name: String, message: String)

        var errorName: String? {
            if case .error(let name, _) = self { return name }
            return nil
        }
    }

    /// Calls a method; `args` is a JSON array text.
    func call(_ path: String, _ interface: String, _ member: String, _ signature: String, _ args: String = "[]") throws -> Answer {
        process.send(#"{"call": ["\#(path)", "\#(interface)", "\#(member)", "\#(signature)", \#(args)]}"#)
        while let line = process.readLine(seconds: 15) {
            let json = try JSON.parse(line)
            if json["signal"] != nil {
                signals.append(json)
                continue
            }
            if let reply = json["reply"] { return .reply(reply) }
            return .error(name: json["error"]?.stringValue ?? "?", message: json["message"]?.stringValue ?? "")
        }
        throw TestFailure("no answer to \(member)")
    }

    /// Calls and expects success.
    @discardableResult
    func ok(_ path: String, _ interface: String, _ member: String, _ signature: String, _ args: String = "[]") throws -> JSON {
        let answer = try call(path, interface, member, signature, args)
        guard case .reply(let values) = answer else { throw TestFailure("\(member) failed: \(answer)") }
        return values
    }

    func openSession(_ app: String, category: String, options: [String] = [], mode: String = "default") throws -> String {
        let reply = try ok(APIBench.managerPath, APIBench.manager, "OpenSession", "s", #"["\#(app)"]"#)
        guard let path = reply[0]?.stringValue else { throw TestFailure("OpenSession answered \(reply)") }
        let list = options.map { "\"\($0)\"" }.joined(separator: ",")
        try ok(path, APIBench.session, "SetCategory", "ssas", #"["\#(category)", "\#(mode)", [\#(list)]]"#)
        return path
    }

    /// Waits until a signal named `member` (on `path`, if given) has arrived; returns it.
    func waitForSignal(_ member: String, path: String? = nil, seconds: Double = 10) throws -> JSON {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let deadline = Double(now.tv_sec) + seconds
        while true {
            if let index = signals.firstIndex(where: { $0["signal"]?.stringValue == member && (path == nil || $0["path"]?.stringValue == path) }) {
                return signals.remove(at: index)
            }
            clock_gettime(CLOCK_MONOTONIC, &now)
            let left = deadline - Double(now.tv_sec)
            guard left > 0, let line = process.readLine(seconds: left) else {
                throw TestFailure("no \(member) signal; got \(signals.map { $0["signal"]?.stringValue ?? "?" })")
            }
            signals.append(try JSON.parse(line))
        }
    }

    /// Every signal that arrives within `seconds`, without waiting for any in particular.
    func drain(seconds: Double = 0.3) throws -> [JSON] {
        while let line = process.readLine(seconds: seconds) { signals.append(try JSON.parse(line)) }
        defer { signals.removeAll() }
        return signals
    }
}

extension JSON {
    var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    subscript(index: Int) -> JSON? {
        guard case .array(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }
}

func withAPIBench(_ body: (APIBench) throws -> Void) throws {
    let bench = try APIBench()
    defer { bench.close() }
    try body(bench)
}

@Suite(.serialized) struct DBusAPITests {
    static let a2dp = "0000110b-0000-1000-8000-00805f9b34fb"
    static let hfp = "0000111e-0000-1000-8000-00805f9b34fb"

    @Test func theLiveIntrospectionIsTheCheckedInXML() throws {
        try withAPIBench { bench in
            try bench.startDaemon()
            let client = try bench.client()
            let live = try client.ok(APIBench.managerPath, "org.freedesktop.DBus.Introspectable", "Introspect", "")[0]?.stringValue ?? ""
            let file = try readText(APIBench.packageRoot + "/dbus/org.audioroute.AudioRoute1.xml")
            // The manager object carries the AudioRoute1 interface block of the file, byte for byte.
            let block = interfaceBlock("org.audioroute.AudioRoute1", in: file)
            #expect(!block.isEmpty)
            #expect(interfaceBlock("org.audioroute.AudioRoute1", in: live) == block)
            #expect(interfaceBlock("org.audioroute.Session1", in: live).isEmpty)
            // And a session object the Session1 block.
            let path = try client.openSession("probe", category: "playback")
            let sessionXML = try client.ok(path, "org.freedesktop.DBus.Introspectable", "Introspect", "")[0]?.stringValue ?? ""
            #expect(interfaceBlock("org.audioroute.Session1", in: sessionXML) == interfaceBlock("org.audioroute.Session1", in: file))
            #expect(interfaceBlock("org.audioroute.AudioRoute1", in: sessionXML).isEmpty)
        }
    }

    func interfaceBlock(_ name: String, in xml: String) -> Substring {
        let open = "<interface name=\"\(name)\">"
        guard let start = xml.indices.first(where: { xml[$0...].hasPrefix(open) }),
            let end = xml[start...].indices.first(where: { xml[$0...].hasPrefix("</interface>") })
        else { return "" }
        return xml[start..<xml.index(end, offsetBy: "</interface>".count)]
    }

    @Test func propertiesDescribeTheRoutePortsAndSessions() throws {
        try withAPIBench { bench in
            try bench.connectHeadset("00:11:22:33:44:55", alias: "Travel Headset", uuids: [Self.a2dp])
            try bench.startDaemon()
            let client = try bench.client()
            let path = try client.openSession("org.example.Music", category: "playback")
            try client.ok(path, APIBench.session, "SetActive", "bb", "[true, false]")
            let all = try client.ok(APIBench.managerPath, "org.freedesktop.DBus.Properties", "GetAll", "s", #"["org.audioroute.AudioRoute1"]"#)[0]
            #expect(all?["Version"] == .integer(1))
            #expect(all?["SilentMode"] == .bool(false))
            let port: JSON = .array([
                .string("bt:00:11:22:33:44:55:a2dp"), .string("bluetoothA2DP"), .string("output"), .string("bt:00:11:22:33:44:55"),
                .string("Travel Headset"), .string("bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp"),
            ])
            guard case .array(let ports)? = all?["Ports"], case .array(let first)? = ports.first else {
                Issue.record("no ports: \(String(describing: all))")
                return
            }
            #expect(ports.count == 1)
            #expect(JSON.array(Array(first.prefix(6))) == port)
            #expect(all?["Route"]?[0]?[0]?[0]?.stringValue == "bt:00:11:22:33:44:55:a2dp")
            #expect(all?["Sessions"] == .array([.array([.string(path), .string(client.uniqueName), .string("org.example.Music"), .string("playback"), .string("default"), .array([]), .bool(true)])]))
            let active = try client.ok(path, "org.freedesktop.DBus.Properties", "Get", "ss", #"["org.audioroute.Session1", "Active"]"#)
            #expect(active[0] == .bool(true))
        }
    }

    @Test func twoClientsHearAHeadsetArriveWithPreviousAndCurrentRoute() throws {
        try withAPIBench { bench in
            try bench.startDaemon()
            let music = try bench.client()
            let monitor = try bench.client()
            let path = try music.openSession("org.example.Music", category: "playback")
            try music.ok(path, APIBench.session, "SetActive", "bb", "[true, false]")
            _ = try monitor.ok(APIBench.managerPath, "org.freedesktop.DBus.Properties", "Get", "ss", #"["org.audioroute.AudioRoute1", "Version"]"#)

            try bench.connectHeadset("00:11:22:33:44:55", alias: "Travel Headset", uuids: [Self.a2dp])
            for client in [music, monitor] {
                let signal = try client.waitForSignal("RouteChanged")
                #expect(signal["args"]?[0]?.stringValue == "newDeviceAvailable")
                #expect(signal["args"]?[1] == .array([.array([]), .array([])]), "previous: no ports on this machine")
                #expect(signal["args"]?[2]?[0]?[0]?[0]?.stringValue == "bt:00:11:22:33:44:55:a2dp")
                #expect(signal["args"]?[2]?[0]?[0]?[5]?.stringValue == "bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp")
                let added = try client.waitForSignal("PortsChanged")
                #expect(added["args"]?[0]?.stringValue == "added")
            }
        }
    }

    @Test func arbitrationAcrossProcesses() throws {
        try withAPIBench { bench in
            try bench.startDaemon()
            let music = try bench.client()
            let navigation = try bench.client()
            let phone = try bench.client()
            let song = try music.openSession("org.example.Music", category: "playback")
            try music.ok(song, APIBench.session, "SetActive", "bb", "[true, false]")

            // Navigation ducks the music.
            let prompt = try navigation.openSession("org.example.Maps", category: "playback", options: ["duckOthers"])
            try navigation.ok(prompt, APIBench.session, "SetActive", "bb", "[true, false]")
            _ = try music.waitForSignal("Ducked", path: song)
            try navigation.ok(prompt, APIBench.session, "SetActive", "bb", "[false, true]")
            _ = try music.waitForSignal("Unducked", path: song)

            // A call interrupts the music; ending it with notifyOthers lets it resume.
            let call = try phone.openSession("org.example.Phone", category: "playAndRecord", mode: "voiceChat")
            try phone.ok(call, APIBench.session, "SetActive", "bb", "[true, false]")
            let began = try music.waitForSignal("Interruption", path: song)
            #expect(began["args"] == .array([.string("began"), .string("default"), .bool(false)]))
            try phone.ok(call, APIBench.session, "SetActive", "bb", "[false, true]")
            let ended = try music.waitForSignal("Interruption", path: song)
            #expect(ended["args"] == .array([.string("ended"), .string(""), .bool(true)]))
            // Session signals go to their owner only.
            #expect(try phone.drain().allSatisfy { $0["signal"]?.stringValue != "Interruption" || $0["path"]?.stringValue == call })
        }
    }

    @Test func aClientKilledWhileDuckingOthersLeavesThemUnducked() throws {
        try withAPIBench { bench in
            try bench.startDaemon()
            let music = try bench.client()
            let navigation = try bench.client()
            let song = try music.openSession("org.example.Music", category: "playback")
            try music.ok(song, APIBench.session, "SetActive", "bb", "[true, false]")
            let prompt = try navigation.openSession("org.example.Maps", category: "playback", options: ["duckOthers"])
            try navigation.ok(prompt, APIBench.session, "SetActive", "bb", "[true, false]")
            _ = try music.waitForSignal("Ducked", path: song)

            navigation.process.kill(SIGKILL)
            _ = try music.waitForSignal("Unducked", path: song)
            let sessions = try music.ok(APIBench.managerPath, "org.freedesktop.DBus.Properties", "Get", "ss", #"["org.audioroute.AudioRoute1", "Sessions"]"#)
            guard case .array(let rows)? = sessions[0] else {
                Issue.record("no sessions: \(sessions)")
                return
            }
            #expect(rows.map { $0[0]?.stringValue } == [song], "the dead client's session is gone")
        }
    }

    @Test func badCallsGetNamedErrorsAndChangeNothing() throws {
        try withAPIBench { bench in
            try bench.connectHeadset("00:11:22:33:44:55", alias: "Travel Headset", uuids: [Self.a2dp])
            try bench.startDaemon()
            let owner = try bench.client()
            let intruder = try bench.client()
            let path = try owner.openSession("org.example.Music", category: "playback")
            let m = APIBench.managerPath
            let before = try owner.ok(m, "org.freedesktop.DBus.Properties", "Get", "ss", #"["org.audioroute.AudioRoute1", "Ports"]"#)
            let checks: [(APIClient.Answer, String)] = [
                (try owner.call(path, APIBench.session, "SetCategory", "ssas", #"["playbak", "default", []]"#), "org.audioroute.Error.UnknownName"),
                (try owner.call(path, APIBench.session, "SetCategory", "ssas", #"["playback", "default", ["allowBluetooh"]]"#), "org.audioroute.Error.UnknownName"),
                (try owner.call(path, APIBench.session, "SetCategory", "ssas", #"["playback", "default", ["defaultToSpeaker"]]"#), "org.audioroute.Error.InvalidOption"),
                (try owner.call(path, APIBench.session, "OverrideOutput", "s", #"["speaker"]"#), "org.audioroute.Error.InvalidOverride"),
                (try owner.call(path, APIBench.session, "SetPreferredInput", "s", #"["bt:00:11:22:33:44:55:a2dp"]"#), "org.audioroute.Error.NotAnInput"),
                (try owner.call(path, APIBench.session, "SetActive", "b", "[true]"), "org.freedesktop.DBus.Error.InvalidArgs"),
                (try owner.call(path, APIBench.session, "SetCategory", "ssas", #"["\#(String(repeating: "x", count: 1 << 20))", "default", []]"#), "org.freedesktop.DBus.Error.InvalidArgs"),
                (try owner.call(m, APIBench.manager, "SetPortPriority", "si", #"["bt:00:11:22:33:44:55:a2dp", 5000]"#), "org.freedesktop.DBus.Error.InvalidArgs"),
                (try owner.call(m, APIBench.manager, "SetPortPriority", "si", #"["nope", 5]"#), "org.audioroute.Error.UnknownPort"),
                (try owner.call(m, APIBench.manager, "Frobnicate", ""), "org.freedesktop.DBus.Error.UnknownMethod"),
                (try intruder.call(path, APIBench.session, "SetActive", "bb", "[true, false]"), "org.audioroute.Error.NotOwner"),
                (try intruder.call(m + "/session/999", APIBench.session, "SetActive", "bb", "[true, false]"), "org.freedesktop.DBus.Error.UnknownObject"),
            ]
            for (answer, expected) in checks { #expect(answer.errorName == expected, "\(answer)") }
            // Nothing changed: still playback, inactive; the port keeps its priority.
            let category = try owner.ok(path, "org.freedesktop.DBus.Properties", "Get", "ss", #"["org.audioroute.Session1", "Category"]"#)
            #expect(category[0]?.stringValue == "playback")
            let active = try owner.ok(path, "org.freedesktop.DBus.Properties", "Get", "ss", #"["org.audioroute.Session1", "Active"]"#)
            #expect(active[0] == .bool(false))
            let ports = try owner.ok(m, "org.freedesktop.DBus.Properties", "Get", "ss", #"["org.audioroute.AudioRoute1", "Ports"]"#)
            #expect(ports == before)
        }
    }

    @Test func aFloodingClientDoesNotWedgeTheDaemon() throws {
        try withAPIBench { bench in
            try bench.startDaemon()
            let flooder = try bench.client()
            // 10,000 calls sent without reading a single reply, then the client dies.
            flooder.process.send(#"{"flood": 10000}"#)
            #expect(flooder.process.readLine(seconds: 60) == #"{"reply": ["flooded"]}"#)
            flooder.process.kill(SIGKILL)
            let other = try bench.client()
            let path = try other.openSession("org.example.Music", category: "playback")
            try other.ok(path, APIBench.session, "SetActive", "bb", "[true, false]")
            #expect(bench.daemon?.wait(seconds: 0) == nil, "the daemon is still running")
        }
    }

    @Test func withoutASessionBusTheDaemonSaysSoAndExits() throws {
        let socketless = try ChildProcess(
            productsDirectory + "/audiorouted", ["--state-dir", "/tmp/unused-audioroute-state", "--runtime-dir", "/tmp/unused-audioroute-run"],
            environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/audioroute-no-bus", "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/x"])
        let status = socketless.wait(seconds: 20)
        #expect(status != nil && status != 0)
        #expect(socketless.availableStderr().contains("cannot connect to the bus"), "\(socketless.availableStderr())")
        removeTree("/tmp/unused-audioroute-state")
        removeTree("/tmp/unused-audioroute-run")
    }
}
