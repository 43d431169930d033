// Driving the D-Bus API from tests: scripted client processes, a running daemon.
import AudioRouteIPC
import AudioRouteDaemon
import AudioRouteTestbed
import Glibc

/// A child process driven line by line: commands on its standard input, answers
/// and events on its standard output. SIGKILLed and reaped if the test forgets.
public final class ScriptedProcess {
    private let child: ChildProcess
    public var pid: pid_t { child.pid }
    private var output: Int32 { child.stdout }
    private var buffer: [UInt8] = []
    /// Lines read and not yet taken by `take`.
    public private(set) var lines: [String] = []

    public init(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        child = try ChildProcess(path, arguments, environment: environment, input: .pipe, errorsToPipe: false)
    }

    public func send(_ line: String) { child.send(Array((line + "\n").utf8)) }

    /// Reads whatever arrives within `seconds` (or until a full line, if `untilLine`).
    private func pump(seconds: Double) -> Bool {
        var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(max(0, seconds) * 1000)) == 1 else { return false }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
        guard count > 0 else { return false }
        buffer += chunk[0..<count]
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: buffer[..<newline], as: UTF8.self))
            buffer.removeSubrange(...newline)
        }
        return true
    }

    /// Takes the first line (already read or arriving within `seconds`) that satisfies `matching`.
    public func take(seconds: Double = 10, _ matching: (String) -> Bool) -> String? {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            if let index = lines.firstIndex(where: matching) { return lines.remove(at: index) }
            let left = deadline - ContinuousClock.now
            if left <= .zero { return nil }
            let secondsLeft = Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
            if !pump(seconds: secondsLeft) && ContinuousClock.now >= deadline { return nil }
        }
    }

    /// Reads for `seconds` and returns every line matching (none taken).
    public func collect(seconds: Double, _ matching: (String) -> Bool) -> [String] {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline { _ = pump(seconds: 0.05) }
        return lines.filter(matching)
    }

    /// Waits up to `seconds` for the process to exit by itself, then kills it.
    public func finish(seconds: Double) {
        if child.wait(seconds: seconds) == nil { child.kill() }
    }

    /// Sends `signal` and reaps the process.
    public func kill(_ signal: Int32 = SIGKILL) {
        guard child.exitStatus == nil else { return }
        child.signal(signal)
        _ = child.waitForExit()
    }
}

/// A test client of audiorouted: Tests/Fixtures/dbus/client.py on the private bus.
public final class APIClient {
    public static let script = fixturesDirectory + "/dbus/client.py"
    public let process: ScriptedProcess
    public let uniqueName: String

    /// - Parameter runAs: a command that starts the client as another user ("setpriv", "--reuid=…", …).
    public init(address: String, runAs: [String] = []) throws {
        let command = runAs + ["/usr/bin/python3", Self.script, address]
        process = try ScriptedProcess(command[0], Array(command.dropFirst()))
        guard let ready = process.take(seconds: 20, { $0.hasPrefix("{\"ready\"") }) else { throw TestFailure("the client did not start") }
        uniqueName = String(ready.split(separator: "\"")[3])
    }

    /// Calls a method and returns the reply line: `{"reply": …}` or `{"error": NAME, …}`.
    @discardableResult
    public func call(_ path: String, _ interface: String, _ member: String, _ signature: String = "", _ arguments: String = "[]", seconds: Double = 20) -> String {
        process.send("[\"call\", \(json(path)), \(json(interface)), \(json(member)), \(json(signature)), \(arguments)]")
        return process.take(seconds: seconds) { $0.hasPrefix("{\"reply\"") || $0.hasPrefix("{\"error\"") } ?? "(no reply)"
    }

    public func manager(_ member: String, _ signature: String = "", _ arguments: String = "[]") -> String {
        call(DBusAPI.managerPath, DBusAPI.managerInterface, member, signature, arguments)
    }

    public func session(_ path: String, _ member: String, _ signature: String = "", _ arguments: String = "[]") -> String {
        call(path, DBusAPI.sessionInterface, member, signature, arguments)
    }

    public func property(_ path: String, _ interface: String, _ name: String) -> String {
        call(path, DBusAPI.propertiesInterface, "Get", "ss", "[\(json(interface)), \(json(name))]")
    }

    /// Opens a session with a category (and options) and returns its path.
    public func openSession(_ app: String, category: String, mode: String = "default", options: [String] = []) throws -> String {
        let reply = manager("OpenSession", "s", "[\(json(app))]")
        guard reply.hasPrefix("{\"reply\": \"/org/audioroute/AudioRoute1/session/") else { throw TestFailure("OpenSession: \(reply)") }
        let path = String(reply.split(separator: "\"")[3])
        let set = session(path, "SetCategory", "ssas", "[\(json(category)), \(json(mode)), [\(options.map(json).joined(separator: ", "))]]")
        guard set == "{\"reply\": null}" else { throw TestFailure("SetCategory: \(set)") }
        return path
    }

    /// The next signal `member` (optionally with `args`, as JSON) within `seconds`.
    public func signal(_ member: String, path: String? = nil, args: String? = nil, seconds: Double = 10) -> String? {
        process.take(seconds: seconds) { line in
            line.hasPrefix("{\"signal\": \(json(member))") && (path.map { line.contains("\"path\": \(json($0))") } ?? true)
                && (args.map { line.hasSuffix("\"args\": \($0)}") } ?? true)
        }
    }

    /// Every signal `member` seen within `seconds`.
    public func signals(_ member: String, seconds: Double) -> [String] {
        process.collect(seconds: seconds) { $0.hasPrefix("{\"signal\": \(json(member))") }
    }
}

/// A JSON string literal (the test strings need no escapes beyond these).
public func json(_ text: String) -> String {
    "\"" + text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
}

/// Tests/Fixtures.
public let fixturesDirectory: String = {
    let file = #filePath
    var parts = file.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(2)
    return parts.joined(separator: "/") + "/Fixtures"
}()

/// audiorouted on a private session bus with temporary directories, ready (READY=1) when made.
public final class RunningDaemon {
    public static let binary = productsDirectory + "/audiorouted"
    public let bus: PrivateBus
    public let directory: String
    public let child: ChildProcess

    /// The shipped build (scripts/build-daemon), which the README's test command makes before
    /// the suite: what memory figures are about.
    public static let shipped = fixturesDirectory + "/../../.build-daemon/release/audiorouted"

    /// - Parameters:
    ///   - wrapper: a program to run the daemon under (umockdev-wrapper), with `environment`.
    ///   - binary: the daemon to run: this package's debug build unless a test needs the shipped one.
    ///   - logLevel: nil for the daemon's default (what memory is measured at).
    public init(
        arguments: [String] = [], wrapper: String? = nil, environment: [String: String] = [:], bus: PrivateBus? = nil,
        binary: String = RunningDaemon.binary, logLevel: String? = "debug"
    ) throws {
        guard access(binary, X_OK) == 0 else { throw TestFailure("no daemon at \(binary) (scripts/build-daemon makes the shipped one)") }
        self.bus = try bus ?? PrivateBus()
        directory = try makeTemporaryDirectory()
        let daemonArguments = (logLevel.map { ["--log-level", $0] } ?? []) + arguments
        child = try launchDaemon(
            binary, daemonArguments, directory: directory, bus: environment["DBUS_SESSION_BUS_ADDRESS"] ?? self.bus.address,
            environment: environment, wrapper: wrapper, seconds: 30)
    }

    deinit {
        child.signal(SIGKILL)
        _ = child.wait(seconds: 10)
        bus.close()
        removeTree(directory)
    }
}

/// A private bus of type system that admits every uid, like the real system bus.
public func makeSystemBus(in directory: String) throws -> PrivateBus {
    let configuration = directory + "/system-bus.conf"
    try writeText(
        configuration,
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>unix:path=\(directory)/unused</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_destination="*"/>
            <allow receive_sender="*"/>
          </policy>
        </busconfig>
        """)
    return try PrivateBus(configuration: configuration)
}

/// Starts `binary` (audiorouted) as AudioRouteTestbed's `DaemonLaunch` does (its state and
/// runtime directories in `directory`, `bus` as its session bus, no system bus unless
/// `environment` names one) and waits up to `seconds` for READY=1 on its notification socket:
/// the one way the tests start a daemon.
func launchDaemon(
    _ binary: String, _ arguments: [String], directory: String, bus: String, environment: [String: String], wrapper: String?, seconds: Double
) throws -> ChildProcess {
    var launch = DaemonLaunch(binary: binary, directory: directory, sessionBus: bus)
    launch.environment = environment
    // The sound-server watcher looks in XDG_RUNTIME_DIR: never at the user's own servers
    // unless the test names a directory (the sound-server bench's).
    if environment["XDG_RUNTIME_DIR"] == nil { launch.environment["XDG_RUNTIME_DIR"] = directory + "/run" }
    launch.systemBus = environment["DBUS_SYSTEM_BUS_ADDRESS"]
    launch.wrapper = wrapper.map { [$0] } ?? []
    launch.arguments = arguments
    // Under umockdev the cards have no control device a UCM profile could open, and libasound's
    // card lookup aborts inside the preload: no UCM helper, unless the test asks for one.
    if wrapper != nil, !arguments.contains(where: { $0.hasPrefix("--ucm-helper") }) { launch.arguments += ["--ucm-helper", "none"] }
    let (child, notify) = try start(launch)
    guard notify.receive(seconds: seconds) == "READY=1" else {
        child.kill()
        throw TestFailure("audiorouted did not get ready: \(child.availableStderr())")
    }
    return child
}

/// Starts `launch` (not waiting for READY=1) as a `ChildProcess` whose standard output and
/// error are pipes; its notification socket.
public func start(_ launch: DaemonLaunch) throws -> (ChildProcess, NotifySocket) {
    var launched: LaunchedDaemon?
    let child = try ChildProcess { output, errors in
        let daemon = try launch.start(standardOutput: .duplicate(output), standardError: .duplicate(errors))
        launched = daemon
        return daemon.process.pid
    }
    return (child, NotifySocket(launched!.notify))
}

/// The built audiorouted on a bus and in a directory the test owns (RunningDaemon owns
/// its own): its udev watcher sees a umockdev testbed if `testbed` is given.
public final class RealDaemon: @unchecked Sendable {
    public let process: ChildProcess
    public let directory: String

    /// - Parameters:
    ///   - testbed: a umockdev testbed's root: the daemon runs under `umockdev-wrapper` with
    ///     `UMOCKDEV_DIR` set, so its udev watcher sees the testbed's devices.
    public init(address: String, directory: String, testbed: String? = nil) throws {
        self.directory = directory
        var environment: [String: String] = [:]
        environment["UMOCKDEV_DIR"] = testbed
        process = try launchDaemon(
            productsDirectory + "/audiorouted", ["--log-level", "debug"], directory: directory, bus: address, environment: environment,
            wrapper: testbed == nil ? nil : "/usr/bin/umockdev-wrapper", seconds: 20)
    }

    public func kill() { process.kill() }

    deinit { kill() }
}
