// The built `audioroute` and `audiosession-probe`, run as child processes by the CLI and
// client tests.
import AudioRouteCore
import AudioRouteSystem
import CLinux
import Glibc

/// The built `audioroute`, run to completion.
public enum CLI {
    public static var audioroute: String { productsDirectory + "/audioroute" }

    public static func monotonicNanoseconds() -> Int64 { Int64(MonotonicClock.nanoseconds()) }

    /// Runs audioroute to its end (10 s at most); (status, stdout, stderr).
    public static func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let child = try ChildProcess(audioroute, arguments)
        let out = readAll(child.stdout)
        guard let status = child.wait(seconds: 10) else {
            child.signal(SIGKILL)
            throw TestFailure("audioroute \(arguments) did not finish")
        }
        return (status, out, child.availableStderr())
    }

    public static func readAll(_ fd: Int32) -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 10_000) == 1 else { break }
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Lines from a pipe, with a timeout.
public struct LineReader {
    public let fd: Int32
    private var buffer: [UInt8] = []

    public init(fd: Int32) { self.fd = fd }

    public mutating func next(seconds: Double) -> String? {
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let (secs, atto) = left.components
            guard poll(&poller, 1, Int32(secs * 1000 + atto / 1_000_000_000_000_000) + 1) == 1 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { return nil }
            buffer += chunk[0..<count]
        }
    }
}

/// An `audiosession-probe` process: one app with an AudioSession, driven line by line.
public final class Probe {
    public let process: ChildProcess
    private var reader: LineReader

    public init(address: String, app: String) throws {
        process = try ChildProcess(productsDirectory + "/audiosession-probe", [address, app], input: .pipe)
        reader = LineReader(fd: process.stdout)
    }

    /// Sends a command line.
    public func send(_ line: String) {
        process.send(Array((line + "\n").utf8))
    }

    /// The next JSON line within `seconds`.
    public func next(seconds: Double = 10) -> JSON? {
        guard let line = reader.next(seconds: seconds) else { return nil }
        return try? JSON.parse(line)
    }

    /// Lines until one satisfies `match` (returned), or nil after `seconds`.
    public func await(seconds: Double = 10, _ match: (JSON) -> Bool) -> JSON? {
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        while ContinuousClock.now < deadline {
            guard let object = next(seconds: 1) else { continue }
            if match(object) { return object }
        }
        return nil
    }

    /// Sends `line` and returns its reply or error.
    public func call(_ line: String) -> JSON? {
        send(line)
        return self.await { $0["reply"] != nil || $0["error"] != nil }
    }

    deinit { process.kill() }
}

