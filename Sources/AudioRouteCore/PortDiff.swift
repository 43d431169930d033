extension PortEvent {
    /// The events that take a consumer from `old` ports to `new` ports, both grouped by
    /// device (a sound card, a Bluetooth device), group by group in key order: removals
    /// first, then updates (same uid, other fields), then arrivals (a group's new ports in
    /// one `.added`, so a headset's mic and earphones move together).
    ///
    /// The inverse of folding with `[Port].apply`: applying the result to `old`'s ports
    /// gives `new`'s. Watchers use it to announce a change, and the udev watcher to
    /// announce what a re-enumeration found after lost uevents (docs/ports.md).
    public static func diff(from old: [String: [Port]], to new: [String: [Port]]) -> [PortEvent] {
        var removals: [PortEvent] = []
        var updates: [PortEvent] = []
        var additions: [PortEvent] = []
        for key in Set(old.keys).union(new.keys).sorted() {
            let before = old[key] ?? []
            let after = new[key] ?? []
            let gone = before.filter { port in !after.contains { $0.uid == port.uid } }.map(\.uid)
            if !gone.isEmpty { removals.append(.removed(gone)) }
            var arrived: [Port] = []
            for port in after {
                if let previous = before.first(where: { $0.uid == port.uid }) {
                    if previous != port { updates.append(.updated(port)) }
                } else {
                    arrived.append(port)
                }
            }
            if !arrived.isEmpty { additions.append(.added(arrived)) }
        }
        return removals + updates + additions
    }
}
