// After a resume, the hardware comes back in its own time (USB re-enumerates, a headset
// reconnects, a monitor wakes): the first route move a port causes between the sleep and a short
// window after the wake is the wake's, and is announced as `wakeFromSleep` (docs/decisions.md).

/// The window after a wake in which a port's route change is announced as `wakeFromSleep`.
public struct WakeWindow: Sendable, Hashable {
    /// How long after the wake a port's route change still counts as the wake's.
    public static let defaultLength: Duration = .seconds(10)

    public let length: Duration
    /// When the open window closes; nil when none is open.
    public private(set) var closes: ContinuousClock.Instant?
    /// Between the sleep and the wake: a port's change now is the wake's too. The kernel
    /// notices a device unplugged while asleep only as it resumes, and its uevent may reach the
    /// daemon before logind's `PrepareForSleep(false)`.
    public private(set) var asleep = false
    /// The wake of this sleep has had its route change (while asleep): no window after it.
    private var spent = false

    public init(length: Duration = WakeWindow.defaultLength) {
        self.length = length
    }

    /// The system woke at `now`: a window opens (a second wake restarts it), unless a port's
    /// change while asleep was already the wake's.
    public mutating func woke(at now: ContinuousClock.Instant) {
        closes = spent ? nil : now + length
        asleep = false
        spent = false
    }

    /// The system is going to sleep: a window still open is closed, and the first route change a
    /// port causes until the wake is the wake's.
    public mutating func sleeping() {
        closes = nil
        asleep = true
        spent = false
    }

    /// The reason to announce a route change with, made at `now` for `reason`: `wakeFromSleep`
    /// for the first change a port caused while asleep or inside the window, which closes it;
    /// else `reason`. Only a port's reasons are taken: an app's (category, override) stays its own.
    public mutating func reason(for reason: RouteChangeReason, at now: ContinuousClock.Instant) -> RouteChangeReason {
        switch reason {
        case .newDeviceAvailable, .oldDeviceUnavailable, .routeConfigurationChange:
            if asleep {
                guard !spent else { return reason }
                spent = true
                return .wakeFromSleep
            }
            guard let closes else { return reason }
            self.closes = nil
            return now <= closes ? .wakeFromSleep : reason
        default:
            if let closes, now > closes { self.closes = nil }
            return reason
        }
    }
}
