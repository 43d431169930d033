// This process: its environment, its executable, how it ends, the signals it takes and
// the descriptors it did not open (standard input, output and error), for callers
// outside this module, which never see Glibc.
import Glibc

/// The running process.
public enum CurrentProcess {
    /// The environment as a dictionary (a later duplicate of a name wins).
    public static var environment: [String: String] {
        var result: [String: String] = [:]
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") { result[String(text[..<equals])] = String(text[text.index(after: equals)...]) }
            index += 1
        }
        return result
    }

    /// One environment variable (getenv(3)).
    public static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    /// Ends the process with `status` (exit(3): atexit handlers run, stdio is flushed).
    public static func exit(_ status: Int32) -> Never { Glibc.exit(status) }

    /// A write to a peer that went away (a pipe whose reader exited, a socket) fails with
    /// EPIPE instead of killing the process. Inherited across exec.
    public static func ignoreBrokenPipe() {
        _ = signal(SIGPIPE, SIG_IGN)
    }

    /// The path of the running executable (/proc/self/exe), nil if it cannot be read.
    public static var executablePath: String? { try? FileNames.linkTarget("/proc/self/exe") }

    /// The gid of group `name`, if it exists.
    public static func groupID(named name: String) -> UInt32? {
        guard let group = getgrnam(name) else { return nil }
        return group.pointee.gr_gid
    }
}

/// Signal numbers, for `SignalStream` and `SignalForward`.
public enum SignalNumber {
    public static let terminate = SIGTERM
    public static let interrupt = SIGINT
    public static let hangUp = SIGHUP
    public static let kill = SIGKILL
}

/// A descriptor this process did not open and does not own (standard input, output, error;
/// one a caller lends): read and written, never closed here.
public struct BorrowedDescriptor: Sendable, Hashable {
    public let rawValue: Int32
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    public static let standardInput = BorrowedDescriptor(0)
    public static let standardOutput = BorrowedDescriptor(1)
    public static let standardError = BorrowedDescriptor(2)

    /// read(2) into `buffer`, retried on EINTR. 0 is the end of the file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        while true {
            let count = Glibc.read(rawValue, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            if Errno.Code.current == .interrupted { continue }
            throw Errno.current("read")
        }
    }

    /// Writes all of `bytes`, looping over short writes and EINTR. A write of 0 bytes
    /// (nothing more can be written) is EIO.
    public func writeAll(_ bytes: [UInt8]) throws(Errno) {
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeBytes { raw in Glibc.write(rawValue, raw.baseAddress! + done, raw.count - done) }
            if count > 0 {
                done += count
                continue
            }
            if count < 0 && Errno.Code.current == .interrupted { continue }
            throw count == 0 ? Errno(.ioError, "write") : Errno.current("write")
        }
    }

    /// Writes `text`; a failure is dropped (there is nowhere left to report it).
    public func write(_ text: String) {
        try? writeAll(Array(text.utf8))
    }

    /// The file's status (fstat(2)).
    public var status: FileStatus {
        get throws(Errno) { try FileStatus(descriptor: rawValue) }
    }
}

/// The wall clock's time, in UTC, to the second.
public struct UTCTime: Sendable, Hashable {
    public var year: Int
    /// 1…12.
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int

    /// Now (CLOCK_REALTIME).
    public static func now() -> UTCTime {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        return UTCTime(
            year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday), hour: Int(parts.tm_hour),
            minute: Int(parts.tm_min), second: Int(parts.tm_sec))
    }

    /// ISO 8601's basic form: `20260125T093005Z`.
    public var basicISO8601: String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)\(two(month))\(two(day))T\(two(hour))\(two(minute))\(two(second))Z"
    }
}
