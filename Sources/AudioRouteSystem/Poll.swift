// poll(2) and the monotonic clock, for the loops that sleep until a descriptor is ready.
import Glibc

/// The poll(2) events of a descriptor: what to wait for, and what happened.
public struct PollEvents: OptionSet, Sendable, Hashable {
    public var rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }
    /// Takes the low 16 bits of an `int` that holds poll events (sd_bus_get_events).
    public init(truncating raw: Int32) { rawValue = Int16(truncatingIfNeeded: raw) }

    /// POLLIN: input to read.
    public static let readable = PollEvents(rawValue: Int16(POLLIN))
    /// POLLOUT: room to write.
    public static let writable = PollEvents(rawValue: Int16(POLLOUT))
    /// POLLERR (reported only).
    public static let error = PollEvents(rawValue: Int16(POLLERR))
    /// POLLHUP (reported only).
    public static let hangUp = PollEvents(rawValue: Int16(POLLHUP))
}

/// One descriptor of a poll set.
public struct PollDescriptor: Sendable {
    public var fd: Int32
    public var events: PollEvents
    /// What poll(2) reported; empty before, and when nothing happened.
    public var returned: PollEvents = []

    public init(fd: Int32, events: PollEvents) {
        self.fd = fd
        self.events = events
    }
}

public enum Poll {
    /// poll(2) on `descriptors`, at most `timeoutMilliseconds` (-1: no timeout, so an idle
    /// caller makes no wake-ups). Returns how many have events; an interrupted wait (EINTR)
    /// returns 0 with nothing reported, for the caller to look again.
    @discardableResult
    public static func wait(_ descriptors: inout [PollDescriptor], timeoutMilliseconds: Int32) throws(Errno) -> Int {
        var fds = descriptors.map { pollfd(fd: $0.fd, events: $0.events.rawValue, revents: 0) }
        let count = fds.count
        let r = fds.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t(count), timeoutMilliseconds) }
        if r < 0 {
            let code = Errno.Code.current
            for index in descriptors.indices { descriptors[index].returned = [] }
            if code == .interrupted { return 0 }
            throw Errno(code, "poll")
        }
        for index in descriptors.indices { descriptors[index].returned = PollEvents(rawValue: fds[index].revents) }
        return Int(r)
    }
}
