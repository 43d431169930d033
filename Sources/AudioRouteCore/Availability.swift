// Between the watchers and the tower: watchers announce every port they know, each with its
// availability; the tower (and so the resolver) sees only the ports a route may use, as it
// did before ports had an availability. A port turning unavailable leaves the tower as an
// unplugged one does, and turning available again arrives as a plugged one does.

/// Every port the watchers know, with its availability, and the events that keep the tower's
/// ports equal to the known ports a route may use (`Port.Availability.isUsable`).
///
/// A watcher sets `availability` on the ports it announces and sends its events as before;
/// the consumer passes each through `apply` and gives the tower what comes out.
public struct AvailabilityFilter: Sendable, Hashable {
    /// Every known port as its watcher last announced it, in the order they were first
    /// announced (a port keeps its place when its availability changes).
    public private(set) var ports: [Port] = []

    /// No port known yet.
    public init() {}

    /// The known port `uid`, whatever its availability.
    public func port(_ uid: String) -> Port? { ports.first { $0.uid == uid } }

    /// The known ports a route may use, in the order of `ports`.
    public var usablePorts: [Port] { ports.filter(\.availability.isUsable) }

    /// Takes a watcher's event into the known ports and returns what the tower is to apply,
    /// or nil when the tower's ports do not change:
    /// - `.added`: the usable ones of the new ports arrive (together, as one device's do);
    /// - `.removed`: those of the ports that were usable go;
    /// - `.updated`: a usable port turning unavailable is removed, an unavailable one turning
    ///   usable arrives (a new connection: it gets a new sequence), a usable one staying usable
    ///   is updated, an unavailable one staying unavailable changes the listing only;
    /// - `.inputMuted`: passed on.
    ///
    /// Refuses what the tower would refuse, changing nothing: an arrival of a uid already
    /// known, even as unavailable, or given twice (`duplicatePort`); a removal or update of a
    /// uid not known (`unknownPort`).
    public mutating func apply(_ event: PortEvent) throws(SessionError) -> PortEvent? {
        switch event {
        case .added(let new):
            for (offset, port) in new.enumerated() {
                if self.port(port.uid) != nil || new[..<offset].contains(where: { $0.uid == port.uid }) {
                    throw .duplicatePort(port.uid)
                }
            }
            ports += new
            let usable = new.filter(\.availability.isUsable)
            return usable.isEmpty ? nil : .added(usable)
        case .removed(let uids):
            for uid in uids where port(uid) == nil { throw .unknownPort(uid) }
            var gone: [String] = []
            for uid in uids where !gone.contains(uid) && port(uid)?.availability.isUsable == true { gone.append(uid) }
            ports.removeAll { uids.contains($0.uid) }
            return gone.isEmpty ? nil : .removed(gone)
        case .updated(let port):
            guard let index = ports.firstIndex(where: { $0.uid == port.uid }) else { throw .unknownPort(port.uid) }
            let wasUsable = ports[index].availability.isUsable
            ports[index] = port
            switch (wasUsable, port.availability.isUsable) {
            case (true, true): return .updated(port)
            case (true, false): return .removed([port.uid])
            case (false, true): return .added([port])
            case (false, false): return nil
            }
        case .inputMuted:
            // Not a port: passed on as it is.
            return event
        }
    }
}
