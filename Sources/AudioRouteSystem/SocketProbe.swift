// Whether a server listens on a Unix stream socket, checked by a connect (a socket file outlives
// a killed server), and which program it is (the peer's pid from SO_PEERCRED, its comm).
import Glibc

/// What a connect to a Unix stream socket found.
public enum SocketProbeResult: Sendable, Hashable {
    /// Nothing at the path.
    case absent
    /// Not a socket, or nobody accepts on it (ECONNREFUSED), or the path is unusable.
    case refused(Errno)
    /// Accepted; the peer's pid and program name when the kernel gave them.
    case live(pid: Int32?, program: String?)
}

public enum SocketProbe {
    /// Connects to the stream socket at `path` and closes at once. Never blocks: a full backlog
    /// (EAGAIN) counts as live, since someone listens.
    public static func probe(_ path: String) -> SocketProbeResult {
        var info = stat()
        guard stat(path, &info) == 0 else { return errno == ENOENT ? .absent : .refused(Errno.current("stat", path: path)) }
        var address = sockaddr_un()
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            return .refused(Errno(.invalidArgument, "connect: socket path of \(bytes.count) bytes", path: path))
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return .refused(Errno.current("socket", path: path)) }
        defer { close(fd) }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in for (index, byte) in bytes.enumerated() { buffer[index] = byte } }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + 1)
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) } }
        if connected != 0 && errno != EAGAIN && errno != EINPROGRESS { return .refused(Errno.current("connect", path: path)) }
        // struct ucred (pid, uid, gid): Glibc hides it without _GNU_SOURCE; the layout is fixed.
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var size = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0, credentials.pid > 0 else { return .live(pid: nil, program: nil) }
        return .live(pid: credentials.pid, program: programName(credentials.pid))
    }

    /// `/proc/PID/comm` without its newline; nil if it cannot be read.
    public static func programName(_ pid: Int32) -> String? {
        let fd = open("/proc/\(pid)/comm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // comm is at most 16 bytes (TASK_COMM_LEN) with its newline.
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        var name = buffer[..<count]
        while name.last == UInt8(ascii: "\n") { name = name.dropLast() }
        return String(decoding: name, as: UTF8.self)
    }
}
