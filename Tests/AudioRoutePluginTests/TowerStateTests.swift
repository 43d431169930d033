// What the tower's signals do to a PCM's session state (ar_tower_signal), and what opening a busy device
// at hw_params does (ar_busy_step), in process.
import AudioRoutePlugin
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct TowerStateTests {
    private func apply(_ signals: [(String, String, Bool)], to start: ar_tower = ar_tower()) -> ([ar_tower_action], ar_tower) {
        var tower = start
        let actions = signals.map { ar_tower_signal(&tower, $0.0, $0.1, $0.1 == "began" ? "default" : "", $0.2 ? 1 : 0) }
        return (actions, tower)
    }

    @Test func anInterruptionHoldsUntilItEndsWithShouldResume() {
        var active = ar_tower()
        active.active = 1
        let (actions, tower) = apply([("Interruption", "began", false), ("Interruption", "ended", true)], to: active)
        #expect(actions == [AR_TOWER_HOLD, AR_TOWER_RESUME])
        #expect(tower.interrupted == 0)
        #expect(tower.active == 0)  // active again only when the daemon accepts SetActive
    }

    @Test func anEndWithoutShouldResumeKeepsTheWriterHeld() {
        let (actions, tower) = apply([("Interruption", "began", false), ("Interruption", "ended", false)])
        #expect(actions == [AR_TOWER_HOLD, AR_TOWER_NONE])
        #expect(tower.interrupted == 1)
    }

    @Test func anEndThatFollowsNoBeginningResumesNothing() {
        let (actions, _) = apply([("Interruption", "ended", true)])
        #expect(actions == [AR_TOWER_NONE])
    }

    @Test func duckingSilenceAndRouteChangesAreFlags() {
        let (actions, tower) = apply([("Ducked", "", false), ("Silenced", "", false), ("RouteChanged", "", false), ("Hello", "", false)])
        #expect(actions == [AR_TOWER_NONE, AR_TOWER_NONE, AR_TOWER_NONE, AR_TOWER_NONE])
        #expect(tower.ducked == 1 && tower.silenced == 1 && tower.route_changed == 1)
        let (_, undone) = apply([("Unducked", "", false), ("Unsilenced", "", false)], to: tower)
        #expect(undone.ducked == 0 && undone.silenced == 0)
    }

    /// The daemon went away: all it said of the stream is dropped, its hold too (no later daemon
    /// knows of it, so nothing else would release the writer), and the route file is read again.
    @Test func aLostDaemonDropsAllItSaidTheHoldToo() {
        var (_, tower) = apply([("Ducked", "", false), ("Silenced", "", false), ("Interruption", "began", false)])
        tower.route_changed = 0
        ar_tower_lost(&tower)
        #expect(tower.ducked == 0 && tower.silenced == 0 && tower.interrupted == 0 && tower.active == 0)
        #expect(tower.route_changed == 1)
    }

    /// The ways back from a hold that no `ended` lifts: the app's restart lifts any, the device's
    /// return only an unplug's (`routeDisconnected`); nothing to lift is said so.
    @Test func aRestartLiftsAnyHoldTheDevicesReturnOnlyAnUnplugs() {
        var byCall = ar_tower()
        _ = ar_tower_signal(&byCall, "Interruption", "began", "default", 0)
        #expect(ar_tower_device_back(&byCall) == 0 && byCall.interrupted == 1)
        #expect(ar_tower_restart(&byCall) == 1 && byCall.interrupted == 0)
        #expect(ar_tower_restart(&byCall) == 0)
        var byUnplug = ar_tower()
        _ = ar_tower_signal(&byUnplug, "Interruption", "began", "routeDisconnected", 0)
        #expect(byUnplug.disconnected == 1)
        #expect(ar_tower_device_back(&byUnplug) == 1 && byUnplug.interrupted == 0 && byUnplug.disconnected == 0)
        _ = ar_tower_signal(&byUnplug, "Interruption", "began", "routeDisconnected", 0)
        _ = ar_tower_signal(&byUnplug, "Interruption", "ended", "", 1)
        #expect(byUnplug.disconnected == 0)
    }

    /// The route's device busy at hw_params: activate first, then try again while the session
    /// is active and the second lasts; give up (deactivating) otherwise.
    @Test func aBusyDeviceActivatesTheSessionOnceThenTriesAgain() {
        let busy = -EBUSY
        var inactive = ar_tower()
        #expect(ar_busy_step(busy, 1, &inactive, 0, 0) == AR_BUSY_ACTIVATE)
        var active = ar_tower()
        active.active = 1
        #expect(ar_busy_step(busy, 1, &active, 1, 0) == AR_BUSY_RETRY)
        #expect(ar_busy_step(0, 1, &active, 1, 0) == AR_BUSY_DONE)  // stays active
        #expect(ar_busy_step(busy, 1, &active, 1, 1) == AR_BUSY_GIVE_UP)
        #expect(ar_busy_step(-ENODEV, 1, &active, 1, 0) == AR_BUSY_GIVE_UP)
        #expect(ar_busy_step(busy, 0, &active, 1, 0) == AR_BUSY_GIVE_UP)  // the daemon went away
        var interrupted = ar_tower()
        interrupted.interrupted = 1
        #expect(ar_busy_step(busy, 1, &interrupted, 1, 0) == AR_BUSY_GIVE_UP)  // the tower took it back
    }

    /// Without a daemon, for another error, or when the session is already active or held by an
    /// interruption, a busy device fails as before: no activation.
    @Test func aBusyDeviceFailsAsBeforeWhenActivatingCannotHelp() {
        var inactive = ar_tower()
        #expect(ar_busy_step(0, 1, &inactive, 0, 0) == AR_BUSY_DONE)
        #expect(ar_busy_step(-EBUSY, 0, &inactive, 0, 0) == AR_BUSY_DONE)
        #expect(ar_busy_step(-EINVAL, 1, &inactive, 0, 0) == AR_BUSY_DONE)
        var active = ar_tower()
        active.active = 1
        #expect(ar_busy_step(-EBUSY, 1, &active, 0, 0) == AR_BUSY_DONE)
        var interrupted = ar_tower()
        interrupted.interrupted = 1
        #expect(ar_busy_step(-EBUSY, 1, &interrupted, 0, 0) == AR_BUSY_DONE)
    }
}
