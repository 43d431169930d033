// A stand-in for audiorouted on a private bus: python-dbusmock with a template
// that serves the D-Bus API v1 shapes (dbus/org.audioroute.AudioRoute1.xml): revision 1
// by default, revision 2 (AllPorts, AllPortsChanged) with the parameter {"version": 2}. It
// lets the client library's real sd-bus paths be tested against a daemon that
// can be killed and restarted at will; tests against the real audiorouted are
// in DaemonEndToEndTests.
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import AudioSession
import Glibc
import Synchronization

public let mockTemplate = #"""
    import dbus

    BUS_NAME = 'org.audioroute.AudioRoute1'
    MAIN_OBJ = '/org/audioroute/AudioRoute1'
    MAIN_IFACE = 'org.audioroute.AudioRoute1'
    SYSTEM_BUS = False
    SESSION = '/org/audioroute/AudioRoute1/session/1'
    SPK = ('spk', 'builtInSpeaker', 'output', 'internal', 'Speaker', '', dbus.Int32(0), dbus.UInt64(1))
    MIC = ('mic', 'builtInMic', 'input', 'internal', 'Microphone', '', dbus.Int32(0), dbus.UInt64(2))

    ROUTE_CHANGE = ("self.EmitSignal('org.audioroute.AudioRoute1', 'RouteChanged', 's(a(ssssssit)a(ssssssit))(a(ssssssit)a(ssssssit))', "
        "['%s', ([('spk', 'builtInSpeaker', 'output', 'internal', 'Speaker', '', 0, 1)], []), "
        "([('usb/out', 'usbAudio', 'output', 'usb-1', 'Headset', 'plughw:CARD=Headset,DEV=0', 100, 3)], "
        "[('usb/in', 'usbAudio', 'input', 'usb-1', 'Headset', 'plughw:CARD=Headset,DEV=0', 100, 3)])])")

    # Revision 2: the headphone jack is empty, the HDMI jack cannot be read.
    HP = ('hp', 'headphones', 'output', 'jack', 'Headphones', 'dmix:CARD=PCH,DEV=0', dbus.Int32(100), dbus.UInt64(0))
    HDMI = ('hdmi', 'HDMI', 'output', 'gpu', 'HDMI', 'dmix:CARD=NVidia,DEV=3', dbus.Int32(-1), dbus.UInt64(3))

    def load(mock, parameters):
        version = parameters.get('version', 1)
        properties = {
            'Version': dbus.UInt32(version),
            'Route': dbus.Struct((dbus.Array([SPK], signature='(ssssssit)'), dbus.Array([], signature='(ssssssit)')), signature=None),
            'Ports': dbus.Array([SPK, MIC] + ([HDMI] if version >= 2 else []), signature='(ssssssit)'),
            'SilentMode': dbus.Boolean(False),
            'Sessions': dbus.Array([], signature='(ossssasb)'),
        }
        # {"version": 2, "all_ports": false}: a daemon that says 2 but fails to serve AllPorts.
        if version >= 2 and parameters.get('all_ports', True):
            properties['AllPorts'] = dbus.Array(
                [SPK + ('available',), MIC + ('available',), HP + ('unavailable',), HDMI + ('unknown',)], signature='(ssssssits)')
        mock.AddProperties(MAIN_IFACE, dbus.Dictionary(properties, signature='sv'))
        # The headphones plugged: PortsChanged (added), then AllPortsChanged (updated), as the daemon sends them.
        mock.AddMethod(MAIN_IFACE, 'EmitPlug', '', '',
            "self.EmitSignal('org.audioroute.AudioRoute1', 'PortsChanged', 's(ssssssit)', "
            "['added', ('hp', 'headphones', 'output', 'jack', 'Headphones', 'dmix:CARD=PCH,DEV=0', 100, 4)]); "
            "self.EmitSignal('org.audioroute.AudioRoute1', 'AllPortsChanged', 's(ssssssits)', "
            "['updated', ('hp', 'headphones', 'output', 'jack', 'Headphones', 'dmix:CARD=PCH,DEV=0', 100, 4, 'available')])")
        # emit_on_open: the daemon broadcasts a route change while it opens the session (before
        # the reply), as one that has just started and is still finding its ports would.
        mock.AddMethod(MAIN_IFACE, 'OpenSession', 's', 'o',
            (ROUTE_CHANGE % 'routeConfigurationChange' + '; ' if parameters.get('emit_on_open') else '') + "ret = dbus.ObjectPath('%s')" % SESSION)
        mock.AddMethod(MAIN_IFACE, 'SetSilentMode', 'b', '', '')
        mock.AddMethod(MAIN_IFACE, 'SetPortPriority', 'si', '',
            "if args[1] > 1000 or args[1] < -1000: raise dbus.exceptions.DBusException("
            "'priority %d is outside -1000...1000' % args[1], name='org.freedesktop.DBus.Error.InvalidArgs')")
        mock.AddMethod(MAIN_IFACE, 'EmitRouteChange', '', '', ROUTE_CHANGE % 'newDeviceAvailable')
        # A route change, an interruption of the session, another route change: in this order.
        mock.AddMethod(MAIN_IFACE, 'EmitMixed', '', '',
            ROUTE_CHANGE % 'newDeviceAvailable' + '; '
            "objects['%s'].EmitSignal('org.audioroute.Session1', 'Interruption', 'ssb', ['began', 'default', False]); " % SESSION
            + ROUTE_CHANGE % 'oldDeviceUnavailable')
        mock.AddObject(SESSION, 'org.audioroute.Session1', dbus.Dictionary({
            'Category': 'soloAmbient', 'Mode': 'default', 'Options': dbus.Array([], signature='s'),
            'Active': dbus.Boolean(False), 'PreferredInput': '', 'OtherAudioPlaying': dbus.Boolean(True),
            'SecondaryAudioShouldBeSilencedHint': dbus.Boolean(False),
        }, signature='sv'), [
            ('SetCategory', 'ssas', '',
             "if args[0] == 'playback' and 'defaultToSpeaker' in args[2]: raise dbus.exceptions.DBusException("
             "'option defaultToSpeaker is not valid with category playback', name='org.audioroute.Error.InvalidOption')"),
            ('SetActive', 'bb', '', "self.Set('org.audioroute.Session1', 'Active', dbus.Boolean(args[0]))"),
            ('OverrideOutput', 's', '', ''),
            ('SetPreferredInput', 's', '', "self.Set('org.audioroute.Session1', 'PreferredInput', args[0])"),
            ('SetPrefersInterruptionOnRouteDisconnect', 'b', '', ''),
            ('Close', '', '', ''),
            ('Interrupt', '', '', "self.EmitSignal('org.audioroute.Session1', 'Interruption', 'ssb', ['began', 'default', False])"),
        ])
    """#

/// python-dbusmock serving the API shapes on a private bus. Killed in `kill()` or deinit.
public final class MockDaemon: @unchecked Sendable {
    public let process: ChildProcess

    /// Starts the mock on `address` and waits until it owns the name.
    /// - Parameter parameters: the template's parameters, as JSON (`{"emit_on_open": true}`).
    public init(address: String, directory: String, parameters: String? = nil) async throws {
        let template = directory + "/audioroute_mock.py"
        let fd = open(template, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TestFailure("cannot write \(template)") }
        _ = Array(mockTemplate.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        process = try ChildProcess(
            "/usr/bin/python3", ["-m", "dbusmock", "--template", template] + (parameters.map { ["--parameters", $0] } ?? []),
            environment: ["DBUS_SESSION_BUS_ADDRESS": address])
        let client = try await DBusClientConnection.connect(.address(address))
        defer { client.close() }
        for _ in 0..<500 {
            if try await client.nameOwner("org.audioroute.AudioRoute1") != nil { return }
            if process.wait(seconds: 0) != nil { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("dbusmock did not take org.audioroute.AudioRoute1: \(process.availableStderr())")
    }

    public func kill() {
        process.signal(SIGKILL)
        _ = process.wait(seconds: 5)
    }

    /// The calls the mock received for `method` on `path`: their arguments.
    public static func calls(_ client: DBusClientConnection, path: String, method: String) async throws -> [[DBusValue]] {
        let reply = try await client.call(
            destination: "org.audioroute.AudioRoute1", path: path, interface: "org.freedesktop.DBus.Mock", member: "GetMethodCalls",
            signature: "s", arguments: [.string(method)])
        guard case .array(let calls)? = reply.first else { return [] }
        return calls.compactMap { call in
            guard case .structure(let fields) = call, fields.count == 2, case .array(let arguments) = fields[1] else { return nil }
            return arguments.map(\.unwrapped)
        }
    }
}

/// The usual setting of the client tests: a private bus, the mock daemon on it, and a session
/// of app "test" whose notifications are collected. `close()` stops the mock and the bus.
public final class MockSetting: @unchecked Sendable {
    public let directory: String
    public let bus: PrivateBus
    public private(set) var mock: MockDaemon
    public let session: AudioSession
    public let notifications: Collector<AudioSessionNotification>

    /// - Parameter parameters: the template's parameters, as JSON (`{"version": 2}`).
    public init(directory: String, parameters: String? = nil) async throws {
        self.directory = directory
        bus = try PrivateBus()
        do {
            mock = try await MockDaemon(address: bus.address, directory: directory, parameters: parameters)
        } catch {
            bus.close()
            throw error
        }
        session = AudioSession(bus: .address(bus.address), appName: "test")
        notifications = Collector(await session.notifications)
    }

    /// Kills the mock: the daemon's name leaves the bus.
    public func killDaemon() { mock.kill() }

    /// Starts a new mock daemon, with the template's `parameters` (JSON).
    public func restartDaemon(parameters: String? = nil) async throws {
        mock = try await MockDaemon(address: bus.address, directory: directory, parameters: parameters)
    }

    /// Calls `member` on the mock from a connection of its own (a test's remote control).
    public func call(_ member: String, path: String = "/org/audioroute/AudioRoute1", interface: String = "org.audioroute.AudioRoute1") async throws {
        let client = try await DBusClientConnection.connect(.address(bus.address))
        defer { client.close() }
        _ = try await client.call(destination: "org.audioroute.AudioRoute1", path: path, interface: interface, member: member)
    }

    public func close() async {
        await session.close()
        mock.kill()
        bus.close()
    }
}

/// Collects a stream's elements in the background so a test can wait for them.
public final class Collector<Element: Sendable>: Sendable {
    public final class Store: Sendable {
        let items = Mutex<[Element]>([])
    }

    private let store = Store()
    private let task: Task<Void, Never>

    public init(_ stream: AsyncStream<Element>) {
        let store = self.store
        task = Task {
            for await item in stream { store.items.withLock { $0.append(item) } }
        }
    }

    public var all: [Element] { store.items.withLock { $0 } }

    /// Waits up to `seconds` until `condition` holds for what was collected.
    public func wait(seconds: Double = 10, until condition: ([Element]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        while ContinuousClock.now < deadline {
            if condition(all) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(all)
    }

    deinit { task.cancel() }
}
