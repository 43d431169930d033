// This process: how it ends normally, its groups, descriptors it is lent and the wall
// clock's date, for callers outside this module, which never see Glibc.
import Glibc

/// The running process (its environment, streams and signals: Environment, StandardStream,
/// ProcessSignal).
public enum CurrentProcess {
    /// Ends the process with `status` (exit(3): atexit handlers run, stdio is flushed, unlike
    /// `Environment.exitImmediately`).
    public static func exit(_ status: Int32) -> Never { Glibc.exit(status) }

    /// The directory of this process's executable (`/proc/self/exe`), to find programs
    /// installed beside it; nil if it cannot be read.
    public static func executableDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }

    /// Whether `path` names a file this process may execute.
    public static func isExecutable(_ path: String) -> Bool { access(path, X_OK) == 0 }

    /// This process's id (getpid), to ask logind which session it belongs to.
    public static var processID: UInt32 { UInt32(bitPattern: getpid()) }

    /// This process's real uid (getuid), to ask logind for its user's display session.
    public static var userID: UInt32 { getuid() }

    /// The gid of group `name`, if it exists.
    public static func groupID(named name: String) -> UInt32? {
        guard let group = getgrnam(name) else { return nil }
        return group.pointee.gr_gid
    }
}

/// A descriptor a caller lends (a log handler's: standard error, or a pipe in a test):
/// written and examined, never closed here.
public struct BorrowedDescriptor: Sendable, Hashable {
    public let rawValue: Int32
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

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

/// Other processes, as /proc shows them.
public enum ProcessTable {
    /// The command name of process `pid` (`/proc/PID/comm`: at most 15 bytes, which the process
    /// may set itself), without its newline; nil if the process is gone or the file cannot be read.
    /// Untrusted text: a caller prints it escaped (TerminalText).
    public static func command(of pid: UInt32) -> String? {
        guard pid > 0 else { return nil }
        let fd = open("/proc/\(pid)/comm", O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // One read of a few bytes (the kernel gives at most 16 with the newline): no buffer to
        // grow, nothing left on the daemon's heap.
        var buffer = [UInt8](repeating: 0, count: 64)
        var count = -1
        repeat { count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } } while count < 0 && errno == EINTR
        guard count > 0 else { return nil }
        let line = buffer[..<count].last == 10 ? buffer[..<(count - 1)] : buffer[..<count]
        return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
    }
}

/// The exit statuses of every AudioRoute program and script (sysexits.h; docs/client.md, "Exit
/// statuses"): 0 done, 1 a failure none of the others names (a request the daemon refused).
public enum ExitStatus {
    /// EX_USAGE: the command line is wrong (an unknown option or value, a missing argument).
    public static let usage: Int32 = 64
    /// EX_DATAERR: an input's content is wrong (a malformed scenario or report, an undecodable file).
    public static let dataError: Int32 = 65
    /// EX_NOINPUT: an input file does not exist or cannot be read.
    public static let noInput: Int32 = 66
    /// EX_UNAVAILABLE: a service needed is not there: the daemon (from the CLI), the bus (from the
    /// daemon), the sound server (from its helpers).
    public static let unavailable: Int32 = 69
    /// EX_SOFTWARE: an internal error.
    public static let software: Int32 = 70
    /// EX_OSERR: the system refused something every run needs (a signal descriptor, a thread).
    public static let osError: Int32 = 71
    /// EX_IOERR: reading or writing failed (standard input, the state directory).
    public static let ioError: Int32 = 74
    /// EX_CONFIG: the configuration is wrong or missing (no XDG_RUNTIME_DIR and no --runtime-dir).
    public static let config: Int32 = 78
}
