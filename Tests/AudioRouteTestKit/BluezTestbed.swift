// Drives scripts/bluez-testbench.py (a private dbus-daemon with python-dbusmock's
// bluez5 template) and runs the real BluezWatcher against it, applying its events
// to a core Tower so tests can check ports and routes.

import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Foundation
import Logging
import Synchronization
import Testing

public struct TestbedError: Error, CustomStringConvertible {
    public var description: String
    public init(description: String) { self.description = description }
}

/// Log lines a watcher wrote, for asserting that bad input was reported.
public final class LogStore: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    public func append(_ line: String) { lines.withLock { $0.append(line) } }
    public var all: [String] { lines.withLock { $0 } }
    public func count(containing text: String) -> Int { all.filter { $0.contains(text) }.count }
}

public struct CapturingLogHandler: LogHandler {
    public let store: LogStore
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level = .debug

    public init(store: LogStore) { self.store = store }

    public func log(event: LogEvent) { store.append("\(event.level): \(event.message)") }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
}

/// What the watcher delivered, applied to a tower.
public struct Delivered: Sendable {
    public var tower: Tower
    public var events: [PortEvent] = []
    public var changes: [RouteChange] = []
    /// Events the tower refused (a duplicate add, an unknown removal): watcher bugs.
    public var refused: [String] = []

    public var bluetoothPorts: [AudioRouteCore.Port] { tower.ports.filter { $0.uid.hasPrefix("bt:") } }
}

/// The python side: one dbus-daemon and one bluez5 mock, started and stopped by the script.
public final class BluezMockBus: @unchecked Sendable {
    public let process = Process()
    public let stdinPipe = Pipe()
    public let stdoutPipe = Pipe()
    private var buffer: [UInt8] = []
    public let address: String

    public static var scriptPath: String {
        // Tests/AudioRouteLinuxTests/<this file> -> <package>/scripts/bluez-testbench.py
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/bluez-testbench.py").path
    }

    public init() throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Self.scriptPath]
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        try process.run()
        var ready = ""
        do {
            ready = try Self.readLine(stdoutPipe.fileHandleForReading.fileDescriptor, &buffer)
        } catch {
            process.terminate()
            throw error
        }
        guard ready.hasPrefix("ready ") else {
            process.terminate()
            throw TestbedError(description: "bluez test bench did not start: \(ready)")
        }
        address = String(ready.dropFirst("ready ".count))
    }

    private static func readLine(_ fd: Int32, _ buffer: inout [UInt8]) throws -> String {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw TestbedError(description: "bluez test bench closed its output") }
            buffer += chunk[..<n]
        }
    }

    /// Sends one command and returns its result; throws on `error`.
    @discardableResult
    public func send(_ command: [String: Any]) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: command)
        stdinPipe.fileHandleForWriting.write(data + Data("\n".utf8))
        let line = try Self.readLine(stdoutPipe.fileHandleForReading.fileDescriptor, &buffer)
        if line == "ok" { return "" }
        if line.hasPrefix("ok ") { return String(line.dropFirst(3)) }
        throw TestbedError(description: "bench command \(command["cmd"] ?? "?") failed: \(line)")
    }

    public func close() {
        try? stdinPipe.fileHandleForWriting.write(contentsOf: Data("{\"cmd\":\"quit\"}\n".utf8))
        try? stdinPipe.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}

/// A test's whole bench: the mock bus, a watcher on it and the tower its events feed.
public final class BluezTestbed: Sendable {
    public let bus: BluezMockBus
    public let logs = LogStore()
    private let state: Mutex<Delivered>
    private let task = Mutex<Task<Void, Never>?>(nil)

    // Device1.UUIDs: the REMOTE's services (a headset is an A2DP sink and a hands-free unit).
    public static let a2dp = "0000110b-0000-1000-8000-00805f9b34fb"
    public static let hfp = "0000111e-0000-1000-8000-00805f9b34fb"
    public static let hsp = "00001108-0000-1000-8000-00805f9b34fb"
    public static let pacs = "00001850-0000-1000-8000-00805f9b34fb"

    // MediaTransport1.UUID: the LOCAL endpoint's role. Real bluetoothd 5.66 in the real-kernel
    // guest (issue 18) gives the computer's transport to a headset 0000110a, not 0000110b.
    /// This machine is the A2DP source: it plays to the headset.
    public static let localA2DPSource = "0000110a-0000-1000-8000-00805f9b34fb"
    /// This machine is the A2DP sink: a phone plays to it (a car kit), not a port.
    public static let localA2DPSink = "0000110b-0000-1000-8000-00805f9b34fb"
    /// This machine is the HFP audio gateway: the headset is the port.
    public static let localHFPGateway = "0000111f-0000-1000-8000-00805f9b34fb"
    /// This machine is the hands-free unit (a headset itself), not a port.
    public static let localHandsFree = "0000111e-0000-1000-8000-00805f9b34fb"
    /// Audio/Video, wearable headset.
    public static let headsetClass: UInt32 = 0x240404

    public init(builtIn: Bool = true) throws {
        bus = try BluezMockBus()
        var tower = Tower()
        if builtIn {
            _ = try tower.addPorts([
                AudioRouteCore.Port(uid: "spk", type: .builtInSpeaker, device: "internal"),
                AudioRouteCore.Port(uid: "mic", type: .builtInMic, device: "internal"),
            ])
        }
        _ = try tower.openSession(Session(id: "app"))
        _ = try tower.setActive(true, session: "app")
        state = Mutex(Delivered(tower: tower))
    }

    public var watcher: BluezWatcher {
        let store = logs
        return BluezWatcher(bus: .address(bus.address), logger: Logger(label: "test.bluez") { _ in CapturingLogHandler(store: store) })
    }

    /// Starts the watcher; returns once it has connected and enumerated.
    public func startWatcher() async throws {
        let events = try await watcher.events()
        let task = Task { [self] in
            for await event in events {
                self.state.withLock { delivered in
                    delivered.events.append(event)
                    do {
                        let outcome = try delivered.tower.apply(event)
                        if let change = outcome.change { delivered.changes.append(change) }
                    } catch {
                        delivered.refused.append("\(event): \(error)")
                    }
                }
            }
        }
        self.task.withLock { $0 = task }
    }

    /// Waits until the watcher's event sequence has ended by itself.
    public func untilFinished(timeout: Duration = .seconds(10)) async throws {
        guard let task = self.task.withLock({ $0 }) else { return }
        let finished = Mutex(false)
        let watcher = Task {
            await task.value
            finished.withLock { $0 = true }
        }
        defer { watcher.cancel() }
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while !finished.withLock({ $0 }) {
            if clock.now >= deadline { throw TestbedError(description: "the watcher's events did not end") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    public func stop() async {
        let task = self.task.withLock { $0 }
        task?.cancel()
        _ = await task?.result
        bus.close()
    }

    public var delivered: Delivered { state.withLock { $0 } }

    public func setCategory(_ category: AudioRouteCore.Category, options: CategoryOptions = []) throws -> Route {
        try state.withLock { delivered in
            _ = try delivered.tower.setCategory(category, options: options, session: "app")
            return delivered.tower.route
        }
    }

    /// Waits until `condition` holds for what was delivered (a readiness check, not a fixed sleep).
    public func until(_ what: String, timeout: Duration = .seconds(10), _ condition: (Delivered) -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            if condition(delivered) { return }
            if clock.now >= deadline {
                throw TestbedError(description: "timed out waiting for \(what); delivered \(delivered.events)")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    public func uids(_ delivered: Delivered) -> Set<String> { Set(delivered.bluetoothPorts.map(\.uid)) }

    // MARK: Mock helpers

    public static func devicePath(_ adapter: String, _ address: String) -> String {
        "/org/bluez/\(adapter)/dev_" + address.replacingOccurrences(of: ":", with: "_")
    }

    @discardableResult
    public func addAdapter(_ name: String = "hci0") throws -> String { try bus.send(["cmd": "adapter", "name": name]) }

    /// A local controller's own address (Adapter1.Address; the mock derives it from the name).
    public func adapterAddress(_ name: String = "hci0") throws -> String {
        try bus.send(["cmd": "get_property", "path": "/org/bluez/" + name, "iface": "org.bluez.Adapter1", "name": "Address"])
    }

    /// A MediaTransport1 as bluetoothd exports it: `<device>/<name>`, its `UUID` the LOCAL endpoint's role
    /// (real bluetoothd 5.66 in the real-kernel guest, issue 18), idle until the audio server acquires it.
    @discardableResult
    public func addTransport(device: String, uuid: String, name: String = "sep1/fd0") throws -> String {
        let path = device + "/" + name
        try addObject(path, interface: "org.bluez.MediaTransport1", ["Device": ["o", device], "UUID": ["s", uuid], "State": ["s", "idle"]])
        return path
    }

    @discardableResult
    public func addDevice(_ address: String, alias: String, adapter: String = "hci0") throws -> String {
        try bus.send(["cmd": "device", "adapter": adapter, "address": address, "alias": alias])
    }

    public func setProperties(_ path: String, _ properties: [String: [Any]], interface: String = "org.bluez.Device1") throws {
        try bus.send(["cmd": "props", "path": path, "iface": interface, "props": properties])
    }

    /// A headset that connects as BlueZ reports it: Connected, then services resolved with its UUIDs.
    public func connectHeadset(_ address: String, uuids: [String], adapter: String = "hci0", cls: UInt32 = headsetClass) throws {
        let path = Self.devicePath(adapter, address)
        try bus.send(["cmd": "connect", "adapter": adapter, "address": address])
        try setProperties(path, ["UUIDs": ["as", uuids], "Class": ["u", cls], "ServicesResolved": ["b", true]])
    }

    public func disconnect(_ address: String, adapter: String = "hci0") throws {
        let path = Self.devicePath(adapter, address)
        try setProperties(path, ["ServicesResolved": ["b", false]])
        try bus.send(["cmd": "disconnect", "adapter": adapter, "address": address])
    }

    public func addObject(_ path: String, interface: String, _ properties: [String: [Any]]) throws {
        try bus.send(["cmd": "add_object", "path": path, "iface": interface, "props": properties])
    }

    public func removeObject(_ path: String, interface: String) throws {
        try bus.send(["cmd": "remove_object", "path": path, "iface": interface])
    }
}

/// Runs `body` with a started bench and always stops it (kills the mock and bus, removes the temp dir).
public func withBluezTestbed(builtIn: Bool = true, startWatcher: Bool = true, _ body: (BluezTestbed) async throws -> Void) async throws {
    let bench = try BluezTestbed(builtIn: builtIn)
    do {
        if startWatcher { try await bench.startWatcher() }
        try await body(bench)
    } catch {
        await bench.stop()
        throw error
    }
    await bench.stop()
    #expect(bench.delivered.refused.isEmpty, "the tower refused watcher events: \(bench.delivered.refused)")
}
