// The receiving end of sd_notify(3), which a service manager holds: what a testbed (the tests,
// the demo) waits on for audiorouted's READY=1.
import Glibc

/// A datagram socket bound at a path, or at "@name" in the abstract namespace: a
/// `NOTIFY_SOCKET` for a child. Closed, and its path removed, when it goes.
public final class NotifyReceiver: Sendable {
    /// The `NOTIFY_SOCKET` value.
    public let name: String
    private let fd: Int32

    public init(path: String) throws(Errno) {
        var address = sockaddr_un()
        var bytes = Array(path.utf8)
        // sun_path holds 108 bytes, with the path's terminating zero.
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw Errno(.invalidArgument, "bind: socket path of \(bytes.count) bytes", path: path)
        }
        let socketFD = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socketFD >= 0 else { throw Errno.current("socket", path: path) }
        address.sun_family = sa_family_t(AF_UNIX)
        let abstract = bytes[0] == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in for (index, byte) in bytes.enumerated() { buffer[index] = byte } }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, length) } }
        guard bound == 0 else {
            let error = Errno.current("bind", path: path)
            close(socketFD)
            throw error
        }
        fd = socketFD
        name = path
    }

    /// The next message within `milliseconds` (-1: for ever), or nil; a message is at most 4 KiB
    /// (sd_notify's are a few lines).
    public func receive(milliseconds: Int32) throws(Errno) -> String? {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, milliseconds)
        if ready < 0 {
            if Errno.Code.current == .interrupted { return nil }
            throw Errno.current("poll", path: name)
        }
        guard ready == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { throw Errno.current("recv", path: name) }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    deinit {
        close(fd)
        if !name.hasPrefix("@") { unlink(name) }
    }
}
