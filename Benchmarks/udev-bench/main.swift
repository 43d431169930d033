// udev watcher benchmark (docs/benchmarks.md, "udev watcher").
//
//   swift build -c release --product udev-bench
//   .build/release/udev-bench [--events 1000] [--storm 1000] [--idle 10] [--fixtures Tests/Fixtures/udev]
//
// The orchestrator (this process, not preloaded) starts the umockdev emitter
// (share/demo/emitter.py under umockdev-wrapper), then, against its
// testbed and under umockdev-wrapper, itself in `receive` mode (the udev watcher:
// hardwareEvents() -> UdevPortState -> PortEvent) and `udevadm monitor --udev
// --property`. Both write a line per event to a pipe; this process stamps each
// line with CLOCK_MONOTONIC when it reads it, so both sides pay the same pipe hop.
//
// latency: N uevents, each a port update, paced 2 ms apart: p50/p99/max of
//          (line read) - (uevent sent), for ours and for udevadm.
// storm:   M plug/unplug cycles of a USB DAC (10 uevents per cycle): port
//          events counted, final port set checked, receiver RSS before/after.
// idle:    voluntary context switches of every receiver thread over S seconds.

import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Foundation
import Logging

func monotonicNanoseconds() -> UInt64 { MonotonicClock.nanoseconds() }

func writeLine(_ text: String) {
    var bytes = Array(text.utf8)
    bytes.append(10)
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(1, buffer.baseAddress! + offset, buffer.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}

// MARK: Receiver (runs under umockdev-wrapper)

/// The udev watcher, reporting every port event on stdout as it is delivered.
func receive() async throws {
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = .error
        return handler
    }
    // Occupy low descriptor numbers: umockdev's netlink emulation confuses two
    // monitors (ours and udevadm's) whose sockets have the same fd number.
    for _ in 0..<24 { _ = open("/dev/null", O_RDONLY) }
    let watcher = UdevWatcher()
    var state = UdevPortState(logger: Logger(label: "bench"))
    // "PORTS" on stdin prints the current port set.
    let query = Thread {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(0, &buffer, buffer.count) > 0 { kill(getpid(), SIGUSR1) }
        exit(0)
    }
    query.start()
    signal(SIGUSR1, SIG_IGN)
    let usr1 = DispatchSource.makeSignalSource(signal: SIGUSR1)
    let shared = SharedPorts()
    usr1.setEventHandler { writeLine("P " + shared.uids.joined(separator: ",")) }
    usr1.resume()
    for try await event in watcher.hardwareEvents() {
        if case .enumerated = event { writeLine("READY") }
        for portEvent in state.apply(event) {
            let stamp = monotonicNanoseconds()
            switch portEvent {
            case .added(let ports): writeLine("E \(stamp) added \(ports.map(\.uid).joined(separator: ","))")
            case .removed(let uids): writeLine("E \(stamp) removed \(uids.joined(separator: ","))")
            case .updated(let port): writeLine("E \(stamp) updated \(port.uid)")
            case .inputMuted(let device, let muted): writeLine("E \(stamp) \(muted ? "muted" : "unmuted") \(device)")
            }
            shared.uids = state.ports.map(\.uid)
        }
    }
}

final class SharedPorts: @unchecked Sendable {
    private let lock = NSLock()
    private var value: [String] = []
    var uids: [String] {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}

// MARK: Orchestrator

/// A child process whose stdout lines are stamped when read.
final class Child: @unchecked Sendable {
    let process = Process()
    private let output = Pipe()
    private let input = Pipe()
    private let lock = NSLock()
    private var collected: [(stamp: UInt64, line: String)] = []

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        let fd = output.fileHandleForReading.fileDescriptor
        let reader = Thread { [self] in
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(fd, &buffer, buffer.count)
                let stamp = monotonicNanoseconds()
                if count <= 0 { return }
                pending.append(contentsOf: buffer[0..<count])
                var lines: [(UInt64, String)] = []
                while let newline = pending.firstIndex(of: 10) {
                    lines.append((stamp, String(decoding: pending[..<newline], as: UTF8.self)))
                    pending.removeSubrange(...newline)
                }
                lock.withLock { collected += lines }
            }
        }
        reader.start()
    }

    var lines: [(stamp: UInt64, line: String)] { lock.withLock { collected } }

    func send(_ line: String) { try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8)) }

    /// Waits until a line satisfies `match`, returning it.
    @discardableResult
    func wait(timeout: Double = 60, from start: Int = 0, _ match: (String) -> Bool) throws -> (stamp: UInt64, line: String) {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let found = lines.dropFirst(start).first(where: { match($0.line) }) { return found }
            usleep(1000)
        }
        throw BenchError("timed out waiting for \(process.arguments ?? [])")
    }

    func stop() {
        if process.isRunning {
            try? input.fileHandleForWriting.close()
            usleep(100_000)
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let index = min(sorted.count - 1, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1)
    return sorted[max(0, index)]
}

func format(_ value: Double) -> String { String(format: "%.3f", value) }

/// Sum over threads of a /proc status field.
func threadsSum(_ pid: Int32, _ field: String) -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    return tasks.reduce(0) { total, task in
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
        return total + (Int(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0)
    }
}

func status(_ pid: Int32, _ field: String) -> String {
    let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    return text.split(separator: "\n").first { $0.hasPrefix(field + ":") }.map { $0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces) } ?? "?"
}

/// The process that `umockdev-wrapper X` became (it execs X, so the pid is the same).
func orchestrate(events: Int, storm: Int, idle: Int, fixtures: String) throws {
    let dacFile = fixtures + "/usb-dac-actions-usb-audio.umockdev"
    let dacUSB = "/devices/pci0000:00/0000:00:12.0/usb2/2-4"
    let dacCard = dacUSB + "/2-4:1.0/sound/card3"
    let dacPort = "usb-ACTIONS_USB_AUDIO_4512482ADF0FEEEE-00/output"

    let emitter = try Child(["/usr/bin/umockdev-wrapper", "/usr/bin/python3", fixtures + "/../../../share/demo/emitter.py"])
    defer { emitter.stop() }
    let ready = try emitter.wait { $0.hasPrefix("READY ") }
    let root = String(ready.line.dropFirst(6))
    defer { try? FileManager.default.removeItem(atPath: root) }
    var mark = emitter.lines.count
    emitter.send("load \(dacFile)")
    try emitter.wait(from: mark) { $0.hasPrefix("OK") }

    let selfPath = CommandLine.arguments[0].hasPrefix("/") ? CommandLine.arguments[0] : FileManager.default.currentDirectoryPath + "/" + CommandLine.arguments[0]
    let receiver = try Child(["/usr/bin/umockdev-wrapper", selfPath, "receive"], environment: ["UMOCKDEV_DIR": root])
    defer { receiver.stop() }
    try receiver.wait { $0 == "READY" }
    let udevadm = try Child(["/usr/bin/umockdev-wrapper", "/usr/bin/udevadm", "monitor", "--udev", "--property", "--subsystem-match=sound"], environment: ["UMOCKDEV_DIR": root])
    defer { udevadm.stop() }
    try udevadm.wait { $0.hasPrefix("UDEV - the event") }
    usleep(300_000)

    // Latency.
    var ours0 = receiver.lines.count
    var theirs0 = udevadm.lines.count
    mark = emitter.lines.count
    emitter.send("bench \(events) \(dacCard)")
    try emitter.wait(timeout: 120, from: mark) { $0.hasPrefix("OK bench") }
    usleep(500_000)
    let sent = emitter.lines.dropFirst(mark).filter { $0.line.hasPrefix("T ") }.map { UInt64($0.line.split(separator: " ")[2])! }
    let oursLines = receiver.lines.dropFirst(ours0).filter { $0.line.hasPrefix("E ") }
    let theirsLines = udevadm.lines.dropFirst(theirs0).filter { $0.line.hasPrefix("UDEV ") && $0.line.contains(" change ") }
    func latencies(_ stamps: [UInt64]) -> [Double] {
        zip(sent, stamps).map { Double(Int64(bitPattern: $1 &- $0)) / 1e6 }.sorted()
    }
    let ours = latencies(oursLines.map(\.stamp))
    let oursInProcess = latencies(oursLines.map { UInt64($0.line.split(separator: " ")[1])! })
    let theirs = latencies(theirsLines.map(\.stamp))
    print("## latency: \(events) uevents (change, each a port update), paced 2 ms")
    print("")
    print("| receiver | received | p50 ms | p99 ms | max ms |")
    print("|---|---|---|---|---|")
    print("| udevadm monitor --udev --property (line read) | \(theirsLines.count)/\(sent.count) | \(format(percentile(theirs, 50))) | \(format(percentile(theirs, 99))) | \(format(theirs.last ?? .nan)) |")
    print("| audioroute udev watcher, port event (line read) | \(oursLines.count)/\(sent.count) | \(format(percentile(ours, 50))) | \(format(percentile(ours, 99))) | \(format(ours.last ?? .nan)) |")
    print("| audioroute udev watcher, port event (in process) | \(oursLines.count)/\(sent.count) | \(format(percentile(oursInProcess, 50))) | \(format(percentile(oursInProcess, 99))) | \(format(oursInProcess.last ?? .nan)) |")
    print("")
    print("p99 ratio ours/udevadm (line read): \(format(percentile(ours, 99) / percentile(theirs, 99)))")
    print("")

    // Idle: per thread, because the process total includes the Swift runtime's.
    let pid = receiver.process.processIdentifier
    func perThread(_ pid: Int32) -> [String: (name: String, waitingIn: String, voluntary: Int)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var result: [String: (String, String, Int)] = [:]
        for task in tasks {
            let base = "/proc/\(pid)/task/\(task)/"
            let name = ((try? String(contentsOfFile: base + "comm", encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
            let waiting = ((try? String(contentsOfFile: base + "wchan", encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
            let text = (try? String(contentsOfFile: base + "status", encoding: .utf8)) ?? ""
            let line = text.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") } ?? ""
            result[task] = (name, waiting, Int(line.split(separator: "\t").last ?? "") ?? 0)
        }
        return result
    }
    let before = perThread(pid)
    let udevadmBefore = threadsSum(udevadm.process.processIdentifier, "voluntary_ctxt_switches")
    sleep(UInt32(idle))
    let after = perThread(pid)
    let udevadmAfter = threadsSum(udevadm.process.processIdentifier, "voluntary_ctxt_switches")
    print("## idle: \(idle) s, no events: voluntary context switches per thread")
    print("")
    print("| process / thread | blocked in | voluntary switches |")
    print("|---|---|---|")
    for (task, state) in after.sorted(by: { $0.key < $1.key }) {
        let delta = state.voluntary - (before[task]?.voluntary ?? 0)
        print("| receiver tid \(task) \(state.name) | \(state.waitingIn) | \(delta) |")
    }
    print("| udevadm monitor (all threads) | - | \(udevadmAfter - udevadmBefore) |")
    print("")

    // Storm.
    let rssBefore = status(pid, "VmRSS")
    ours0 = receiver.lines.count
    theirs0 = udevadm.lines.count
    mark = emitter.lines.count
    let started = monotonicNanoseconds()
    emitter.send("unplug \(dacUSB)")
    emitter.send("storm \(storm) \(dacFile) \(dacUSB)")
    emitter.send("load \(dacFile)")
    let stormReply = try emitter.wait(timeout: 600, from: mark) { $0.hasPrefix("OK storm") }
    let lastSent = try emitter.wait(timeout: 600, from: mark) { $0 == "OK load" }.stamp
    let emitted = Int(stormReply.line.split(separator: " ").last!)! + 10
    let expected = storm + 1
    let deadline = Date().addingTimeInterval(120)
    var added = 0
    var removed = 0
    while Date() < deadline {
        let lines = receiver.lines.dropFirst(ours0)
        added = lines.filter { $0.line.contains(" added ") }.count
        removed = lines.filter { $0.line.contains(" removed ") }.count
        if added >= expected && removed >= expected { break }
        usleep(10_000)
    }
    let drained = receiver.lines.dropFirst(ours0).last { $0.line.hasPrefix("E ") }?.stamp ?? monotonicNanoseconds()
    usleep(300_000)
    let portsMark = receiver.lines.count
    receiver.send("PORTS")
    let final = try receiver.wait(from: portsMark) { $0.hasPrefix("P ") }
    let rssAfter = status(pid, "VmRSS")
    let udevadmSeen = udevadm.lines.dropFirst(theirs0).filter { $0.line.hasPrefix("UDEV ") }.count
    print("## storm: \(storm) plug/unplug cycles of a USB DAC, \(emitted) uevents (sound + usb)")
    print("")
    print("| measure | value |")
    print("|---|---|")
    print("| port events: added / removed (expected \(expected) each) | \(added) / \(removed) |")
    print("| final port set | \(final.line.dropFirst(2)) (expected \(dacPort)) |")
    print("| sound uevents seen by udevadm monitor | \(udevadmSeen) |")
    print("| storm duration, first uevent to last port event (paced by the Python emitter) | \(format(Double(drained - started) / 1e9)) s |")
    print("| last port event relative to the emitter's final reply (negative: before it) | \(format(Double(Int64(bitPattern: drained &- lastSent)) / 1e6)) ms |")
    print("| receiver VmRSS before / after | \(rssBefore) / \(rssAfter) |")
    let ok = added == expected && removed == expected && final.line == "P " + dacPort
    print("")
    print("storm result: \(ok ? "none lost, final set exact" : "MISMATCH")")
}

// MARK: Main

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "receive" {
    try await receive()
} else {
    func option(_ name: String, _ fallback: String) -> String {
        guard let index = arguments.firstIndex(of: name), arguments.index(after: index) < arguments.endIndex else { return fallback }
        return arguments[arguments.index(after: index)]
    }
    do {
        try orchestrate(
            events: Int(option("--events", "1000"))!, storm: Int(option("--storm", "1000"))!,
            idle: Int(option("--idle", "10"))!, fixtures: option("--fixtures", "Tests/Fixtures/udev"))
    } catch {
        FileHandle.standardError.write(Data("udev-bench: \(error)\n".utf8))
        exit(1)
    }
}
