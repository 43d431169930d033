// BlueZ watcher benchmark: PropertiesChanged emitted -> PortEvent delivered
// latency over Connected toggles, and the watcher thread's idle wake-ups.
// Runs the real watcher against scripts/bluez-testbench.py (private dbus-daemon
// + dbusmock bluez5). Usage (from the package root):
//   swift run -c release --scratch-path .build-bluez audioroute-bluez-bench [toggles] [idle-seconds]

import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Foundation
import Synchronization

func monotonicNanos() -> UInt64 { MonotonicClock.nanoseconds() }

/// voluntary_ctxt_switches of each thread of this process, by thread name.
func voluntarySwitches() -> [(name: String, count: Int)] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.compactMap { tid in
        guard let status = try? String(contentsOfFile: "/proc/self/task/\(tid)/status", encoding: .utf8) else { return nil }
        var name = tid
        var count = 0
        for line in status.split(separator: "\n") {
            if line.hasPrefix("Name:") { name = line.dropFirst(5).trimmingCharacters(in: .whitespaces) + "/" + tid }
            if line.hasPrefix("voluntary_ctxt_switches:") { count = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0 }
        }
        return (name, count)
    }
}

final class Bench: @unchecked Sendable {
    let process = Process()
    let input = Pipe()
    let output = Pipe()
    var buffer: [UInt8] = []

    init(script: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    func line() -> String {
        let fd = output.fileHandleForReading.fileDescriptor
        while true {
            if let nl = buffer.firstIndex(of: 10) {
                let text = String(decoding: buffer[..<nl], as: UTF8.self)
                buffer.removeSubrange(...nl)
                return text
            }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { fatalError("bench script closed its output") }
            buffer += chunk[..<n]
        }
    }

    func send(_ json: String) -> String {
        input.fileHandleForWriting.write(Data((json + "\n").utf8))
        let reply = line()
        guard reply.hasPrefix("ok") else { fatalError("bench command failed: \(reply)") }
        return String(reply.dropFirst(2)).trimmingCharacters(in: .whitespaces)
    }

    func quit() {
        input.fileHandleForWriting.write(Data("{\"cmd\":\"quit\"}\n".utf8))
        process.waitUntilExit()
    }
}

let arguments = CommandLine.arguments
let toggles = arguments.count > 1 ? Int(arguments[1]) ?? 1000 : 1000
let idleSeconds = arguments.count > 2 ? Int(arguments[2]) ?? 10 : 10
let script = ProcessInfo.processInfo.environment["BLUEZ_TESTBENCH"] ?? "scripts/bluez-testbench.py"

let bench = try Bench(script: script)
let ready = bench.line()
guard ready.hasPrefix("ready ") else { fatalError("bench did not start: \(ready)") }
let address = String(ready.dropFirst(6))
let path = "/org/bluez/hci0/dev_00_11_22_33_44_55"
_ = bench.send(#"{"cmd":"adapter","name":"hci0"}"#)
_ = bench.send(#"{"cmd":"device","adapter":"hci0","address":"00:11:22:33:44:55","alias":"Bench"}"#)
_ = bench.send(
    #"{"cmd":"props","path":"\#(path)","iface":"org.bluez.Device1","props":{"UUIDs":["as",["0000110b-0000-1000-8000-00805f9b34fb"]],"ServicesResolved":["b",true]}}"#
)

let received = Mutex<[(UInt64, PortEvent)]>([])
let events = try await BluezWatcher(bus: .address(address)).events()
let consumer = Task {
    for await event in events {
        let now = monotonicNanos()
        received.withLock { $0.append((now, event)) }
    }
}

// Toggles: even i connects (ports added), odd i disconnects (ports removed).
let stampsText = await Task.detached { bench.send(#"{"cmd":"toggle","path":"\#(path)","count":\#(toggles)}"#) }.value
let stamps = stampsText.split(separator: " ").compactMap { UInt64($0) }
let deadline = monotonicNanos() + 10_000_000_000
while received.withLock({ $0.count }) < toggles && monotonicNanos() < deadline {
    try await Task.sleep(for: .milliseconds(10))
}
let got = received.withLock { $0 }
var latencies: [Double] = []
var mismatched = 0
for (index, (time, event)) in got.prefix(toggles).enumerated() {
    switch (index % 2, event) {
    case (0, .added), (1, .removed): break
    default: mismatched += 1
    }
    latencies.append(Double(time &- stamps[index]) / 1000)
}
latencies.sort()
func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}
print("toggles: \(toggles), events delivered: \(got.count), lost: \(toggles - min(got.count, toggles)), out of order: \(mismatched)")
print(
    String(
        format: "latency PropertiesChanged -> PortEvent (us): p50 %.0f  p99 %.0f  max %.0f", percentile(latencies, 0.5),
        percentile(latencies, 0.99), latencies.last ?? .nan))

// Idle: nothing happens on the bus; count each thread's voluntary context switches.
let before = voluntarySwitches()
try await Task.sleep(for: .seconds(idleSeconds))
let after = voluntarySwitches()
var total = 0
for thread in after {
    let was = before.first { $0.name == thread.name }?.count ?? 0
    let delta = thread.count - was
    if thread.name.hasPrefix(BluezWatcherThread.name) { print("idle \(idleSeconds) s: watcher thread \(thread.name) voluntary wake-ups: \(delta)") }
    total += delta
}
print("idle \(idleSeconds) s: whole process voluntary wake-ups (all threads, bench's own sleep included): \(total)")
consumer.cancel()
_ = await consumer.value
bench.quit()
