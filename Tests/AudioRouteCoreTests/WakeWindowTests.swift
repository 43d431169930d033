import AudioRouteCore
import Testing

@Suite struct WakeWindowTests {
    let start = ContinuousClock.now

    @Test func withoutAWakeEveryReasonIsItsOwn() {
        var window = WakeWindow()
        for reason in RouteChangeReason.allCases {
            #expect(window.reason(for: reason, at: start) == reason)
        }
    }

    @Test func theFirstPortChangeInsideTheWindowIsTheWakesAndClosesIt() {
        var window = WakeWindow(length: .seconds(10))
        window.woke(at: start)
        #expect(window.reason(for: .newDeviceAvailable, at: start + .seconds(3)) == .wakeFromSleep)
        // Closed by the first: the next is a plug of its own.
        #expect(window.reason(for: .oldDeviceUnavailable, at: start + .seconds(4)) == .oldDeviceUnavailable)
    }

    @Test(arguments: [RouteChangeReason.newDeviceAvailable, .oldDeviceUnavailable, .routeConfigurationChange])
    func everyPortReasonIsTaken(reason: RouteChangeReason) {
        var window = WakeWindow()
        window.woke(at: start)
        #expect(window.reason(for: reason, at: start) == .wakeFromSleep)
    }

    @Test func anAppsChangeStaysItsOwnAndLeavesTheWindowOpen() {
        var window = WakeWindow()
        window.woke(at: start)
        #expect(window.reason(for: .categoryChange, at: start + .seconds(1)) == .categoryChange)
        #expect(window.reason(for: .override, at: start + .seconds(1)) == .override)
        #expect(window.reason(for: .newDeviceAvailable, at: start + .seconds(2)) == .wakeFromSleep)
    }

    @Test func afterTheWindowAChangeIsItsOwn() {
        var window = WakeWindow(length: .seconds(10))
        window.woke(at: start)
        #expect(window.reason(for: .newDeviceAvailable, at: start + .seconds(10)) == .wakeFromSleep)
        window.woke(at: start)
        #expect(window.reason(for: .newDeviceAvailable, at: start + .milliseconds(10_001)) == .newDeviceAvailable)
        // Closed for good: not reopened by time going backwards in a caller's mistake.
        #expect(window.reason(for: .newDeviceAvailable, at: start + .seconds(1)) == .newDeviceAvailable)
    }

    @Test func goingToSleepClosesTheWindowAndASecondWakeRestartsIt() {
        var window = WakeWindow(length: .seconds(10))
        window.woke(at: start)
        window.sleeping()
        #expect(window.reason(for: .newDeviceAvailable, at: start + .seconds(1)) == .newDeviceAvailable)
        window.woke(at: start)
        window.woke(at: start + .seconds(8))
        #expect(window.reason(for: .newDeviceAvailable, at: start + .seconds(15)) == .wakeFromSleep)
    }
}
