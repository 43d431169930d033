// Pipes and FIFOs, and waiting on a descriptor: what talking to a child (or being one) takes.
import Glibc

/// The two ends of a pipe(2), both closed on exec (a child gets an end only through
/// `SpawnStream.duplicate`). After the spawn, keep our end; the child's closes.
public struct PipeEnds: ~Copyable, Sendable {
    public let readEnd: FileDescriptor
    public let writeEnd: FileDescriptor

    public init() throws(Errno) {
        var fds: [Int32] = [-1, -1]
        // pipe2 is _GNU_SOURCE-only in Glibc's module: pipe, then FD_CLOEXEC on each end.
        guard pipe(&fds) == 0 else { throw Errno.current("pipe") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        readEnd = FileDescriptor(adopting: fds[0])
        writeEnd = FileDescriptor(adopting: fds[1])
    }

    /// The read end; the write end closes.
    public consuming func keepingReadEnd() -> FileDescriptor { readEnd }

    /// The write end; the read end closes.
    public consuming func keepingWriteEnd() -> FileDescriptor { writeEnd }
}

extension FileDescriptor {
    /// Makes a FIFO at `path` (mkfifo).
    public static func makeFIFO(_ path: String, mode: UInt32 = 0o600) throws(Errno) {
        guard mkfifo(path, mode_t(mode)) == 0 else { throw Errno.current("mkfifo", path: path) }
    }

    /// Waits up to `milliseconds` (-1: for ever) until a read would not block: input, or its
    /// end (the writer closed) or an error. False on a timeout or a signal.
    public func waitReadable(milliseconds: Int32) throws(Errno) -> Bool {
        try poll(Int16(POLLIN), milliseconds: milliseconds)
    }

    /// Waits up to `milliseconds` for the other end of a pipe to close (or an error); false on
    /// a timeout or a signal, whatever there is to read.
    public func waitForHangUp(milliseconds: Int32) throws(Errno) -> Bool {
        try poll(0, milliseconds: milliseconds)
    }

    private func poll(_ events: Int16, milliseconds: Int32) throws(Errno) -> Bool {
        var entry = pollfd(fd: rawValue, events: events, revents: 0)
        let ready = Glibc.poll(&entry, 1, milliseconds)
        if ready < 0 {
            if Errno.Code.current == .interrupted { return false }
            throw Errno.current("poll")
        }
        return ready > 0
    }

    /// Sets a pipe's or FIFO's capacity (F_SETPIPE_SZ, rounded up to a page); false if refused (it
    /// cannot shrink below what it holds).
    @discardableResult
    public func setPipeCapacity(_ bytes: Int32) -> Bool {
        fcntl(rawValue, 1031 /* F_SETPIPE_SZ, _GNU_SOURCE-only */, bytes) >= 0
    }

    /// Makes reads and writes on this descriptor return `.wouldBlock` instead of waiting
    /// (O_NONBLOCK on the open file: a pipe end shared with no one else).
    public func setNonBlocking() throws(Errno) {
        let flags = fcntl(rawValue, F_GETFL)
        guard flags >= 0, fcntl(rawValue, F_SETFL, flags | O_NONBLOCK) == 0 else { throw Errno.current("fcntl") }
    }

    /// One read(2) of at most `count` bytes, retried on EINTR: what it read, empty at the end.
    public func read(upTo count: Int) throws(Errno) -> [UInt8] {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
        defer { buffer.deallocate() }
        let got = try read(into: buffer)
        return Array(buffer[0..<got])
    }

    /// Reads to the end of the file (or of the stream).
    public func readToEnd() throws(Errno) -> [UInt8] {
        var result: [UInt8] = []
        while true {
            let chunk = try read(upTo: 65536)
            if chunk.isEmpty { return result }
            result += chunk
        }
    }
}
