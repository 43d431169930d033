// The seam between hardware watchers and everything that consumes ports.

/// A source of ports: udev sound cards, evdev jack switches, BlueZ devices.
///
/// `run` first delivers the ports present now (one `.added` per device), then
/// calls `enumerated` once, then delivers every change, until the task is
/// cancelled. It throws only when its source cannot be reached at all at start
/// (no system bus, no udev); a source that comes and goes later (bluetoothd
/// restarting) is followed, not thrown.
///
/// The marker is what lets the daemon tell a port that was already there when it
/// (re)started, which keeps its remembered place in last-in-wins, from a new plug,
/// and send `READY=1` once the route reflects the hardware.
public protocol PortWatcher: Sendable {
    /// The source's name, for logs and messages ("udev", "jack", "bluez").
    var name: String { get }

    /// Watches until cancelled, handing each event to `deliver` in order, and
    /// calling `enumerated` once, after the ports present at start.
    func run(
        deliver: @escaping @Sendable (PortEvent) async -> Void,
        enumerated: @escaping @Sendable () async -> Void
    ) async throws
}

extension PortWatcher {
    /// Watches until cancelled, for a consumer that does not need the enumeration marker.
    public func run(deliver: @escaping @Sendable (PortEvent) async -> Void) async throws {
        try await run(deliver: deliver, enumerated: {})
    }
}
