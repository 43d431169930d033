// Owned descriptors: closed exactly once, when their owner lets go.
import CLinux
import Glibc

/// An open file descriptor, owned: `deinit` closes it. Not copyable, so it has one owner;
/// `release()` hands the number on to a C library that takes ownership.
public struct FileDescriptor: ~Copyable, Sendable {
    /// The descriptor's number, valid while this value lives.
    public let rawValue: Int32

    /// Takes ownership of `rawValue`, an open descriptor.
    public init(adopting rawValue: Int32) { self.rawValue = rawValue }

    /// How to open a file: O_* flags. O_CLOEXEC is always added.
    public struct OpenOptions: OptionSet, Sendable {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        public static let readOnly = OpenOptions([])
        public static let writeOnly = OpenOptions(rawValue: O_WRONLY)
        public static let readWrite = OpenOptions(rawValue: O_RDWR)
        public static let create = OpenOptions(rawValue: O_CREAT)
        public static let exclusive = OpenOptions(rawValue: O_EXCL)
        public static let truncate = OpenOptions(rawValue: O_TRUNC)
        public static let append = OpenOptions(rawValue: O_APPEND)
        public static let nonBlocking = OpenOptions(rawValue: O_NONBLOCK)
        public static let noFollow = OpenOptions(rawValue: O_NOFOLLOW)
        public static let directory = OpenOptions(rawValue: O_DIRECTORY)
    }

    /// open(2), retried on EINTR.
    public static func open(_ path: String, _ options: OpenOptions = .readOnly, mode: UInt32 = 0o600) throws(Errno) -> FileDescriptor {
        while true {
            let fd = Glibc.open(path, options.rawValue | O_CLOEXEC, mode_t(mode))
            if fd >= 0 { return FileDescriptor(adopting: fd) }
            if Errno.Code.current == .interrupted { continue }
            throw Errno.current("open", path: path)
        }
    }

    /// read(2) into `buffer`, retried on EINTR. 0 is the end of the file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        while true {
            let count = Glibc.read(rawValue, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            if Errno.Code.current == .interrupted { continue }
            throw Errno.current("read")
        }
    }

    /// write(2) of as much of `buffer` as it takes, retried on EINTR.
    public func write(_ buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
        while true {
            let count = Glibc.write(rawValue, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            if Errno.Code.current == .interrupted { continue }
            throw Errno.current("write")
        }
    }

    /// Writes all of `bytes`, looping over short writes.
    public func writeAll(_ bytes: [UInt8]) throws(Errno) {
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                Glibc.write(rawValue, raw.baseAddress! + done, raw.count - done)
            }
            if count >= 0 { done += count; continue }
            if Errno.Code.current == .interrupted { continue }
            throw Errno.current("write")
        }
    }

    /// Gives up ownership: the caller (or the C library it hands the number to) closes it.
    public consuming func release() -> Int32 {
        let fd = rawValue
        discard self
        return fd
    }

    deinit { _ = Glibc.close(rawValue) }
}

/// An eventfd(2), non-blocking: one thread writes to wake another that polls it.
public struct EventFD: ~Copyable, Sendable {
    public let descriptor: FileDescriptor

    public init() throws(Errno) {
        let fd = clinux_eventfd_cloexec_nonblock()
        guard fd >= 0 else { throw Errno.current("eventfd") }
        descriptor = FileDescriptor(adopting: fd)
    }

    public var rawValue: Int32 { descriptor.rawValue }

    /// Adds one: a poller on it wakes.
    public func signal() {
        var one: UInt64 = 1
        _ = Glibc.write(descriptor.rawValue, &one, 8)
    }

    /// Resets it after it fired (non-blocking: nothing to read is fine).
    public func drain() {
        var count: UInt64 = 0
        _ = Glibc.read(descriptor.rawValue, &count, 8)
    }
}

extension FileDescriptor {
    /// Drops the next datagram queued on socket `fd` unread (recv(2) of zero bytes, without
    /// waiting), for a socket a C library owns (udev's monitor). Throws EAGAIN when none is queued.
    public static func discardDatagram(socket fd: Int32) throws(Errno) {
        guard recv(fd, nil, 0, Int32(MSG_DONTWAIT)) >= 0 else { throw Errno.current("recv") }
    }
}
