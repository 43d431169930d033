// What the tower's signals do to a PCM's session state (ar_tower_signal), in process.
import AudioRoutePlugin
import Testing

@Suite struct TowerStateTests {
    private func apply(_ signals: [(String, String, Bool)], to start: ar_tower = ar_tower()) -> ([ar_tower_action], ar_tower) {
        var tower = start
        let actions = signals.map { ar_tower_signal(&tower, $0.0, $0.1, $0.2 ? 1 : 0) }
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

    /// The daemon went away: what it said of the stream's gain is dropped; a hold is not.
    @Test func aLostDaemonDropsItsDerivedStateButNotAHold() {
        var (_, tower) = apply([("Ducked", "", false), ("Silenced", "", false), ("Interruption", "began", false)])
        ar_tower_lost(&tower)
        #expect(tower.ducked == 0 && tower.silenced == 0 && tower.interrupted == 1)
    }
}
