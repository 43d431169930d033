// After a resume, the hardware comes back in its own time (USB re-enumerates, a headset
// reconnects, a monitor wakes): the first route move a port causes in a short window after the
// wake is the wake's, and is announced as `wakeFromSleep` (docs/decisions.md).

/// The window after a wake in which a port's route change is announced as `wakeFromSleep`.
public struct WakeWindow: Sendable, Hashable {
    /// How long after the wake a port's route change still counts as the wake's.
    public static let defaultLength: Duration = .seconds(10)

    public let length: Duration
    /// When the open window closes; nil when none is open.
    public private(set) var closes: ContinuousClock.Instant?

    public init(length: Duration = WakeWindow.defaultLength) {
        self.length = length
    }

    /// The system woke at `now`: a window opens (a second wake restarts it).
    public mutating func woke(at now: ContinuousClock.Instant) {
        closes = now + length
    }

    /// The system is going to sleep: a window still open is closed.
    public mutating func sleeping() {
        closes = nil
    }

    /// The reason to announce a route change with, made at `now` for `reason`: `wakeFromSleep`
    /// for the first change a port caused inside the window, which closes it; else `reason`.
    /// Only a port's reasons are taken: an app's (category, override) stays its own.
    public mutating func reason(for reason: RouteChangeReason, at now: ContinuousClock.Instant) -> RouteChangeReason {
        guard let closes else { return reason }
        guard now <= closes else {
            self.closes = nil
            return reason
        }
        switch reason {
        case .newDeviceAvailable, .oldDeviceUnavailable, .routeConfigurationChange:
            self.closes = nil
            return .wakeFromSleep
        default:
            return reason
        }
    }
}
