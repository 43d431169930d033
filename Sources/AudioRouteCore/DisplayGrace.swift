// A monitor that wakes after the computer drops its HDMI/DP audio for a moment: without a
// grace, the route would go to the speakers and come back a few seconds later, two route
// changes and an interruption for nothing (docs/decisions.md, "The system's own events").

/// After a wake, a display output (HDMI, DisplayPort) that goes away is held in the route for
/// a short time; if it comes back meanwhile, nothing happened.
public struct DisplayGrace: Sendable, Hashable {
    /// How long after a wake a display output's removal is held.
    public static let defaultWindow: Duration = .seconds(10)
    /// How long one removal is held before it takes effect.
    public static let defaultHold: Duration = .seconds(5)

    public let window: Duration
    public let hold: Duration
    private var windowCloses: ContinuousClock.Instant?
    /// The held ports, with when each removal takes effect.
    public private(set) var held: [String: ContinuousClock.Instant] = [:]

    public init(window: Duration = DisplayGrace.defaultWindow, hold: Duration = DisplayGrace.defaultHold) {
        self.window = window
        self.hold = hold
    }

    /// The system woke at `now`: display removals in the window are held.
    public mutating func woke(at now: ContinuousClock.Instant) {
        windowCloses = now + window
    }

    /// Going to sleep: no removal is held from now on (those held keep their time).
    public mutating func sleeping() {
        windowCloses = nil
    }

    /// Splits a removal of `uids` (described by `ports`) at `now`: the uids to remove now, and
    /// the display outputs held instead, until `until` (then ask ``release(_:heldUntil:)``).
    public mutating func remove(
        _ uids: [String], ports: [Port], at now: ContinuousClock.Instant
    ) -> (now: [String], held: [String], until: ContinuousClock.Instant) {
        guard let windowCloses, now <= windowCloses else { return (uids, [], now) }
        var removeNow: [String] = []
        var holding: [String] = []
        for uid in uids {
            let type = ports.first { $0.uid == uid }?.type
            if type == .HDMI || type == .displayPort {
                held[uid] = now + hold
                holding.append(uid)
            } else {
                removeNow.append(uid)
            }
        }
        return (removeNow, holding, now + hold)
    }

    /// A port arrived: true if it was held (its removal is forgotten, and it never left).
    public mutating func returned(_ uid: String) -> Bool {
        held.removeValue(forKey: uid) != nil
    }

    /// The hold that ends at `until` is over: those of `uids` still held by it, now to be removed.
    /// A port that came back (and maybe went again, held anew) is not among them.
    public mutating func release(_ uids: [String], heldUntil until: ContinuousClock.Instant) -> [String] {
        let due = uids.filter { held[$0] == until }
        for uid in due { held[uid] = nil }
        return due
    }
}
