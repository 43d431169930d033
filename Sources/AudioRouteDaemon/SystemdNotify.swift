// sd_notify without libsystemd: one datagram to $NOTIFY_SOCKET.
#if canImport(Glibc)
import Glibc
#endif

/// Tells the service manager about the daemon's state (sd_notify(3)).
public enum SystemdNotify {
    /// Sends `state` ("READY=1", "STOPPING=1", "STATUS=...") to the socket named
    /// by `NOTIFY_SOCKET`: a filesystem path, or an abstract socket when it
    /// starts with "@". Returns false when there is no socket to tell (not
    /// started by systemd), throws when the socket is named but unusable.
    @discardableResult
    public static func notify(_ state: String, socketPath: String? = environmentSocket()) throws(NotifyError) -> Bool {
        guard let socketPath, !socketPath.isEmpty else { return false }
        guard socketPath.hasPrefix("/") || socketPath.hasPrefix("@") else { throw NotifyError(socket: socketPath, errno: EAFNOSUPPORT) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }  // abstract namespace
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity || (path.first == 0 && path.count <= capacity) else {
            throw NotifyError(socket: socketPath, errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.enumerated() { buffer[index] = byte }
        }
        // An abstract name's length is exact (no terminating NUL counted).
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + path.count + (path.first == 0 ? 0 : 1))
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw NotifyError(socket: socketPath, errno: errno) }
        defer { close(fd) }
        let message = Array(state.utf8)
        let sent = message.withUnsafeBytes { bytes in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, length) }
            }
        }
        guard sent == message.count else { throw NotifyError(socket: socketPath, errno: sent < 0 ? errno : EMSGSIZE) }
        return true
    }

    /// `NOTIFY_SOCKET` from the environment.
    public static func environmentSocket() -> String? { getenv("NOTIFY_SOCKET").map { String(cString: $0) } }

    /// The notification socket could not be used.
    public struct NotifyError: Error, Sendable, Hashable, CustomStringConvertible {
        public var socket: String
        public var errno: Int32

        public init(socket: String, errno: Int32) {
            self.socket = socket
            self.errno = errno
        }

        public var description: String { "sd_notify to \(socket): \(String(cString: strerror(errno)))" }
    }
}
