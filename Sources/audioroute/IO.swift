#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An errno from a failed system call, named.
struct SystemError: Error, CustomStringConvertible {
    var errno: Int32
    var description: String { String(cString: strerror(errno)) }
}

/// CLOCK_MONOTONIC, the clock of the kernel's uevents and of `udevadm monitor`.
enum MonotonicClock {
    static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    static func milliseconds() -> Int64 { Int64(nanoseconds() / 1_000_000) }
}

enum FileIO {
    /// Reads a whole file.
    static func readFile(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError(errno: errno) }
        defer { close(fd) }
        return try readAll(fd: fd)
    }

    /// Reads a descriptor to its end.
    static func readAll(fd: Int32) throws -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemError(errno: errno)
            }
            if count == 0 { return result }
            result.append(contentsOf: chunk[0..<count])
        }
    }

    /// Writes all of `bytes`, across partial writes and EINTR.
    static func writeAll(fd: Int32, _ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}

/// Lines collected and written in large chunks (a 10,000-step run is one write per 64 KiB).
struct OutputBuffer {
    let fd: Int32
    private var pending: [UInt8] = []

    init(fd: Int32) {
        self.fd = fd
        pending.reserveCapacity(65536)
    }

    mutating func append(_ line: String) { append(Array(line.utf8)) }

    mutating func append(_ line: [UInt8]) {
        pending.append(contentsOf: line)
        pending.append(UInt8(ascii: "\n"))
        if pending.count >= 65536 { flush() }
    }

    mutating func flush() {
        pending.withUnsafeBytes { FileIO.writeAll(fd: fd, $0) }
        pending.removeAll(keepingCapacity: true)
    }
}

/// Messages for a person, on standard error.
enum Terminal {
    static func error(_ message: String) { line("audioroute: error: \(message)") }
    static func warning(_ message: String) { line("audioroute: warning: \(message)") }
    /// A state worth knowing that is not a failure (a source this machine lacks).
    static func note(_ message: String) { line("audioroute: \(message)") }

    static func line(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { FileIO.writeAll(fd: 2, $0) }
    }
}
