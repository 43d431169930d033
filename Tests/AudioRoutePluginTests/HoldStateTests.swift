// What holding a stream keeps (ar_hold_*): the frames to replay, the activation that follows a
// resume, and the stash's count, in process.
import AudioRoutePlugin
import Testing

@Suite struct HoldStateTests {
    @Test func aHoldKeepsWhatTheDeviceHadNotPlayedOnceAndGivesItBackAtItsEnd() {
        var hold = ar_hold()
        #expect(ar_hold_begin(&hold, 480) == 1)
        #expect(ar_hold_begin(&hold, 960) == 0)  // a second interruption does not drop it again
        #expect(hold.holding == 1)
        #expect(ar_hold_end(&hold) == 480)
        #expect(hold.holding == 0)
    }

    @Test func anUnknownDelayReplaysNothing() {
        var hold = ar_hold()
        ar_hold_begin(&hold, -32)
        #expect(hold.replay == 0)
    }

    @Test func theAppsRestartDiscardsWhatWasHeldAndAsksForTheSessionAgain() {
        var hold = ar_hold()
        ar_hold_begin(&hold, 480)
        hold.activation_failed = 1
        ar_hold_restarted(&hold)
        #expect(hold.holding == 0)
        #expect(hold.replay == 0)
        #expect(hold.activation_failed == 0)
        #expect(hold.resuming_by_itself == 1)
    }

    @Test func aRefusedActivationAfterResumingByItselfHoldsAgainElseIsNotAskedAgain() {
        var resumed = ar_hold()
        ar_hold_device_back(&resumed)
        #expect(ar_hold_activation(&resumed, 0) == 1)
        #expect(resumed.activation_failed == 0)
        #expect(resumed.resuming_by_itself == 0)

        var plain = ar_hold()
        #expect(ar_hold_activation(&plain, 0) == 0)
        #expect(plain.activation_failed == 1)

        var accepted = ar_hold()
        ar_hold_restarted(&accepted)
        #expect(ar_hold_activation(&accepted, 1) == 0)
        #expect(accepted.activation_failed == 0)
        #expect(accepted.resuming_by_itself == 0)
    }

    @Test func theStashTakesABuffersWorthAndGivesItBack() {
        var hold = ar_hold()
        #expect(ar_hold_stash(&hold, 100) == 0)  // no stash (capture, or before hw_params)
        hold.capacity = 4000
        #expect(ar_hold_stash(&hold, 3000) == 3000)
        #expect(ar_hold_stash(&hold, 3000) == 1000)
        #expect(ar_hold_stash(&hold, 1) == 0)
        ar_hold_unstash(&hold, 2500)
        #expect(hold.stashed == 1500)
        ar_hold_unstash(&hold, 9999)
        #expect(hold.stashed == 0)
    }
}
