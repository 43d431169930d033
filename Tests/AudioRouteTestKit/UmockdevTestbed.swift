import AudioRouteCore
import Foundation

/// A umockdev testbed owned by `share/demo/emitter.py` (run under
/// umockdev-wrapper with Debian's /usr/bin/python3), and the built `audioroute`
/// binary run against it under umockdev-wrapper: the real libudev and evdev
/// code paths, no hardware. Everything started here is killed and the testbed
/// removed in `close()` (also called from deinit, so a failing test cleans up).
public final class UmockdevTestbed: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    public static let packageRoot: String = {
        var parts = URL(fileURLWithPath: #filePath).pathComponents
        parts.removeLast(3)  // Tests/AudioRouteLinuxTests/UmockdevTestbed.swift
        return NSString.path(withComponents: parts)
    }()

    public static let fixtures = packageRoot + "/Tests/Fixtures/udev"

    /// The directory of the built products (`audioroute`, `audiorouted`), next to the test bundle.
    public static let products: String = {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: me).deletingLastPathComponent()
        // The test runner may live inside an .xctest bundle directory.
        while !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("audioroute").path), directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        return directory.path
    }()

    /// The `audioroute` binary next to the test bundle.
    public static let binary = products + "/audioroute"
    /// audiorouted's option for no UCM helper: a umockdev card has no control device a UCM profile
    /// could open, and libasound's card lookup aborts inside umockdev's preload.
    public static let noUCMHelper = ["--ucm-helper", "none"]

    private let emitter = Process()
    private let toEmitter = Pipe()
    private let fromEmitter = Pipe()
    private var buffered = Data()
    private var children: [Process] = []
    /// Scratch files live inside the testbed, which the emitter removes when it exits,
    /// even when the test runner dies and closes its stdin.
    private var scratch: URL { URL(fileURLWithPath: scratchDirectory) }
    /// A directory for a test's own files (configuration, state, output), removed with the testbed.
    public var scratchDirectory: String { root + "/scratch" }
    private var closed = false
    public private(set) var root = ""
    /// The system bus the binaries see. By default one that does not exist, so the BlueZ
    /// watcher never reads the machine's real Bluetooth state; a test sets a private bus here.
    public var systemBus = "unix:path=/nonexistent/audioroute-test-no-system-bus"

    public init() throws {
        emitter.executableURL = URL(fileURLWithPath: "/usr/bin/umockdev-wrapper")
        emitter.arguments = ["/usr/bin/python3", Self.packageRoot + "/share/demo/emitter.py"]
        emitter.standardInput = toEmitter
        emitter.standardOutput = fromEmitter
        emitter.standardError = FileHandle(forWritingAtPath: "/dev/null")
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONUNBUFFERED"] = "1"
        emitter.environment = environment
        try emitter.run()
        let ready = try readLine(timeout: 20)
        guard ready.hasPrefix("READY ") else { throw Failure(description: "emitter said \(ready)") }
        root = String(ready.dropFirst(6))
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    deinit { close() }

    /// Stops every process started here and removes the testbed and scratch files.
    public func close() {
        guard !closed else { return }
        closed = true
        for child in children {
            if child.isRunning { kill(child.processIdentifier, SIGKILL) }
            child.waitUntilExit()
            if emitter.isRunning { _ = try? send("forget \(child.processIdentifier)") }
        }
        if emitter.isRunning {
            try? toEmitter.fileHandleForWriting.write(contentsOf: Data("quit\n".utf8))
            let deadline = Date().addingTimeInterval(3)
            while emitter.isRunning && Date() < deadline { usleep(10_000) }
            if emitter.isRunning { kill(emitter.processIdentifier, SIGKILL) }
            emitter.waitUntilExit()
        }
        if !root.isEmpty { try? FileManager.default.removeItem(atPath: root) }
    }

    private func readLine(timeout: TimeInterval) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[buffered.startIndex..<newline], as: UTF8.self)
                buffered.removeSubrange(buffered.startIndex...newline)
                return line
            }
            guard Date() < deadline else { throw Failure(description: "emitter did not answer in \(timeout) s") }
            let chunk = fromEmitter.fileHandleForReading.availableData
            if chunk.isEmpty { throw Failure(description: "emitter exited") }
            buffered.append(chunk)
        }
    }

    /// Sends one emitter command and waits for its answer.
    @discardableResult
    public func send(_ command: String) throws -> String {
        try toEmitter.fileHandleForWriting.write(contentsOf: Data((command + "\n").utf8))
        while true {
            let line = try readLine(timeout: 30)
            if line.hasPrefix("OK") { return line }
            if line.hasPrefix("ERR") { throw Failure(description: "emitter: \(command): \(line)") }
        }
    }

    public func load(_ fixture: String) throws { try send("load \(Self.fixtures)/\(fixture).umockdev") }

    /// Adds a fixture's devices with extra udev properties on one of them (as a
    /// rule in /etc/udev/rules.d would have set them before the `add` event).
    public func load(_ fixture: String, properties: [String: String], on syspath: String) throws {
        let text = try String(contentsOfFile: "\(Self.fixtures)/\(fixture).umockdev", encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let record = lines.firstIndex(of: "P: " + syspath) else { throw Failure(description: "\(fixture) has no \(syspath)") }
        lines.insert(contentsOf: properties.sorted { $0.key < $1.key }.map { "E: \($0.key)=\($0.value)" }, at: record + 1)
        try loadText(lines.joined(separator: "\n"))
    }

    /// Adds devices from umockdev record text written by the test.
    public func loadText(_ text: String) throws {
        let file = scratch.appendingPathComponent("record-\(UUID().uuidString).umockdev")
        try Data(text.utf8).write(to: file)
        try send("load \(file.path)")
    }

    /// Appends raw bytes to a device's uevent file (a property udev would report as is).
    public func appendUevent(_ syspath: String, _ bytes: [UInt8]) throws {
        let path = root + "/sys" + syspath + "/uevent"
        guard let handle = FileHandle(forWritingAtPath: path) else { throw Failure(description: "no \(path)") }
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(bytes))
    }

    /// Starts the program at `path` (a built product: `audioroute`, `audiorouted`)
    /// under umockdev-wrapper against this testbed, with `environment` added. `launcher`
    /// runs instead of umockdev-wrapper when given (its last argument is followed by the
    /// program's path and arguments); it must exec the program, so the pid stays the same.
    private func process(
        path: String, _ arguments: [String], environment extra: [String: String] = [:], launcher: [String] = [], stdout: URL, stderr: URL
    ) throws -> Process {
        _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
        let process = Process()
        // `audioroute --direct` reads UCM profiles through the UCM helper as the daemon does; a
        // umockdev card has none to read (see noUCMHelper), unless the test says otherwise.
        let ucm = path == Self.binary && arguments.contains("--direct") && !arguments.contains { $0.hasPrefix("--ucm-helper") }
        let command = (launcher.isEmpty ? ["/usr/bin/umockdev-wrapper"] : launcher) + [path] + arguments + (ucm ? Self.noUCMHelper : [])
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        var environment = ProcessInfo.processInfo.environment
        environment["UMOCKDEV_DIR"] = root
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = systemBus
        environment.merge(extra) { $1 }
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = try FileHandle(forWritingTo: stderr)
        try process.run()
        children.append(process)
        // If this test runner dies, the emitter sees its stdin close and kills this one too.
        try send("adopt \(process.processIdentifier)")
        return process
    }

    /// The properties `udevadm test --action=change` computes for a device of the
    /// testbed with AudioRoute's rules, installed by scripts/install-udev-rules.
    /// udevadm reads rules from /run/udev/rules.d and writes its database to
    /// /run/udev/data, so it runs in a private mount namespace with a tmpfs on
    /// /run: nothing of the machine's /run is read or changed.
    public func udevadmTest(_ syspath: String) throws -> [String: String] { try udevadmTestOutput(syspath).properties }

    /// `udevadm test` of `syspath`: the properties it prints, and its log (which rule set
    /// GROUP, MODE, ...).
    public func udevadmTestOutput(_ syspath: String) throws -> (properties: [String: String], log: String) {
        let name = UUID().uuidString
        let out = scratch.appendingPathComponent("\(name).out")
        let err = scratch.appendingPathComponent("\(name).err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        let install = Self.packageRoot + "/scripts/install-udev-rules"
        process.arguments = [
            "--mount", "sh", "-ec",
            "mount -t tmpfs tmpfs /run && \"$1\" --dest /run/udev/rules.d --no-reload >/dev/null && exec umockdev-wrapper udevadm test --action=change \"$2\"",
            "sh", install, "/sys" + syspath,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["UMOCKDEV_DIR"] = root
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        children.append(process)
        try send("adopt \(process.processIdentifier)")
        process.waitUntilExit()
        var properties: [String: String] = [:]
        for line in try String(contentsOf: out, encoding: .utf8).split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            properties[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return (properties, try String(contentsOf: err, encoding: .utf8))
    }

    /// Runs `audioroute ARGS` against the testbed to completion.
    public func run(_ arguments: [String], timeout: TimeInterval = 30) throws -> (status: Int32, stdout: String, stderr: String) {
        let name = UUID().uuidString
        let out = scratch.appendingPathComponent("\(name).out")
        let err = scratch.appendingPathComponent("\(name).err")
        let process = try process(path: Self.binary, arguments, stdout: out, stderr: err)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw Failure(description: "audioroute \(arguments) did not finish in \(timeout) s")
        }
        return (process.terminationStatus, try String(contentsOf: out, encoding: .utf8), try String(contentsOf: err, encoding: .utf8))
    }

    /// A long-running `audioroute monitor`, read as it writes.
    public final class Running: @unchecked Sendable {
        public let process: Process
        let out: URL
        let err: URL

        init(process: Process, out: URL, err: URL) {
            self.process = process
            self.out = out
            self.err = err
        }

        public var lines: [String] {
            ((try? String(contentsOf: out, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        public var stderr: String { (try? String(contentsOf: err, encoding: .utf8)) ?? "" }

        /// The JSON objects printed so far.
        public var objects: [JSON] { lines.compactMap { try? JSON.parse($0) } }

        /// Waits until `count` lines have been printed (the watcher is event-driven:
        /// the test polls only its own output file).
        @discardableResult
        public func waitForLines(_ count: Int, timeout: TimeInterval = 15) throws -> [JSON] {
            let deadline = Date().addingTimeInterval(timeout)
            while lines.count < count {
                guard Date() < deadline, process.isRunning else {
                    throw Failure(description: "expected \(count) lines, got \(lines.count):\n\(lines.joined(separator: "\n"))\nstderr:\n\(stderr)")
                }
                usleep(5_000)
            }
            return objects
        }

        /// Waits until stderr contains `text`.
        public func waitForStderr(_ text: String, timeout: TimeInterval = 15) throws {
            let deadline = Date().addingTimeInterval(timeout)
            while !stderr.contains(text) {
                guard Date() < deadline else { throw Failure(description: "stderr never said \(text):\n\(stderr)") }
                usleep(5_000)
            }
        }

        /// Sends a signal and waits for the exit status.
        public func stop(_ signal: Int32 = SIGINT, timeout: TimeInterval = 10) throws -> Int32 {
            kill(process.processIdentifier, signal)
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            guard !process.isRunning else { throw Failure(description: "\(process.executableURL?.lastPathComponent ?? "?") \(process.arguments ?? []) did not stop on signal \(signal)") }
            return process.terminationStatus
        }
    }

    /// Starts `audioroute` (or another built product, `binary`) under the testbed (through
    /// `launcher` instead of umockdev-wrapper when given: see `process`).
    public func start(_ arguments: [String], binary: String = UmockdevTestbed.binary, environment: [String: String] = [:], launcher: [String] = []) throws -> Running {
        let name = UUID().uuidString
        let out = scratch.appendingPathComponent("\(name).out")
        let err = scratch.appendingPathComponent("\(name).err")
        return Running(
            process: try process(path: binary, arguments, environment: environment, launcher: launcher, stdout: out, stderr: err), out: out, err: err)
    }

    /// Starts `executable ARGS` (a built product: `audioroute`, `audiorouted`)
    /// against the testbed, with `environment` added.
    public func start(executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Running {
        try start(arguments, binary: Self.products + "/" + executable, environment: environment)
    }

    /// Starts a monitor and waits until its watcher has enumerated `initialLines` lines' worth.
    public func monitor(category: String, options: String = "", initialLines: Int, logLevel: String = "info") throws -> Running {
        var arguments = ["monitor", "--direct", "--json", "--category", category, "--log-level", logLevel]
        if !options.isEmpty { arguments += ["--options", options] }
        let running = try start(arguments)
        try running.waitForLines(initialLines)
        // The netlink monitor is enabled before enumeration: once the initial lines are
        // out, every later uevent reaches it.
        return running
    }
}

extension JSON {
    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var strings: [String] {
        if case .array(let values) = self { return values.compactMap(\.string) }
        return []
    }
}

/// One `monitor --json` line, decoded for assertions.
public struct MonitorEvent: Equatable, CustomStringConvertible {
    public var event: String
    public var reason: String?
    public var uid: String?
    public var outputs: [String]
    public var inputs: [String]

    public init(_ json: JSON) {
        event = json["event"]?.string ?? "?"
        reason = json["reason"]?.string
        uid = json["port"]?["uid"]?.string
        outputs = json["current"]?["outputs"]?.strings ?? []
        inputs = json["current"]?["inputs"]?.strings ?? []
    }

    public init(_ event: String, _ reason: String?, uid: String? = nil, outputs: [String] = [], inputs: [String] = []) {
        self.event = event
        self.reason = reason
        self.uid = uid
        self.outputs = outputs
        self.inputs = inputs
    }

    public var description: String { "\(event) \(reason ?? "-") \(uid ?? "") out=\(outputs) in=\(inputs)" }
}
