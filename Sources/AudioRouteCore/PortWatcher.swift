// The seam between hardware watchers and everything that consumes ports.

/// A source of ports: udev sound cards, evdev jack switches, BlueZ devices.
///
/// `run` first delivers the ports present now (one `.added` per device), then
/// every change, until the task is cancelled. It throws only when its source
/// cannot be reached at all at start (no system bus, no udev); a source that
/// comes and goes later (bluetoothd restarting) is followed, not thrown.
public protocol PortWatcher: Sendable {
    /// The source's name, for logs and messages ("udev", "jack", "bluez").
    var name: String { get }

    /// Watches until cancelled, handing each event to `deliver` in order.
    func run(deliver: @escaping @Sendable (PortEvent) async -> Void) async throws
}
