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
        window.woke(at: start + .seconds(1))
        window.sleeping()
        window.woke(at: start + .seconds(20))
        #expect(window.reason(for: .newDeviceAvailable, at: start + .seconds(25)) == .wakeFromSleep)
        window.woke(at: start)
        window.woke(at: start + .seconds(8))
        #expect(window.reason(for: .newDeviceAvailable, at: start + .seconds(15)) == .wakeFromSleep)
    }

    /// A device unplugged while asleep is seen as the kernel resumes, maybe before logind's
    /// wake: that move is the wake's, and the wake opens no second window.
    @Test func theFirstPortChangeWhileAsleepIsTheWakesAndTheWakeOpensNoWindowAfterIt() {
        var window = WakeWindow(length: .seconds(10))
        window.sleeping()
        #expect(window.asleep)
        #expect(window.reason(for: .categoryChange, at: start) == .categoryChange)
        #expect(window.reason(for: .oldDeviceUnavailable, at: start) == .wakeFromSleep)
        #expect(window.reason(for: .newDeviceAvailable, at: start + .seconds(1)) == .newDeviceAvailable)
        window.woke(at: start + .seconds(2))
        #expect(!window.asleep)
        #expect(window.reason(for: .newDeviceAvailable, at: start + .seconds(3)) == .newDeviceAvailable)
        // The next sleep is a new one.
        window.sleeping()
        window.woke(at: start + .seconds(30))
        #expect(window.reason(for: .newDeviceAvailable, at: start + .seconds(31)) == .wakeFromSleep)
    }
}

@Suite struct DisplayGraceTests {
    let start = ContinuousClock.now
    let ports = [
        Port(uid: "hdmi", type: .HDMI, device: "gpu"), Port(uid: "dp", type: .displayPort, device: "gpu"),
        Port(uid: "usb", type: .usbAudio, device: "usb", direction: .output),
    ]

    @Test func withoutAWakeEveryRemovalIsNow() {
        var grace = DisplayGrace()
        let split = grace.remove(["hdmi", "usb"], ports: ports, at: start)
        #expect(split.now == ["hdmi", "usb"] && split.held.isEmpty)
    }

    @Test func afterAWakeDisplayOutputsAreHeldAndOthersGoNow() {
        var grace = DisplayGrace(window: .seconds(10), hold: .seconds(5))
        grace.woke(at: start)
        let split = grace.remove(["hdmi", "usb", "dp"], ports: ports, at: start + .seconds(2))
        #expect(split.now == ["usb"])
        #expect(split.held == ["hdmi", "dp"])
        #expect(split.until == start + .seconds(7))
        // Its hold ends: removed then.
        #expect(grace.release(split.held, heldUntil: split.until) == ["hdmi", "dp"])
        #expect(grace.held.isEmpty)
    }

    @Test func aDisplayBackInTimeIsNeitherRemovedNorAdded() {
        var grace = DisplayGrace(window: .seconds(10), hold: .seconds(5))
        grace.woke(at: start)
        let split = grace.remove(["hdmi"], ports: ports, at: start + .seconds(1))
        let hdmiBack = grace.returned("hdmi")
        let usbBack = grace.returned("usb")
        #expect(hdmiBack && !usbBack)
        let released = grace.release(split.held, heldUntil: split.until)
        #expect(released.isEmpty)
    }

    @Test func aDisplayBackAndGoneAgainIsHeldByItsNewRemovalOnly() {
        var grace = DisplayGrace(window: .seconds(10), hold: .seconds(5))
        grace.woke(at: start)
        let first = grace.remove(["hdmi"], ports: ports, at: start + .seconds(1))
        let back = grace.returned("hdmi")
        #expect(back)
        let second = grace.remove(["hdmi"], ports: ports, at: start + .seconds(3))
        #expect(grace.release(first.held, heldUntil: first.until).isEmpty)
        #expect(grace.release(second.held, heldUntil: second.until) == ["hdmi"])
    }

    @Test func outsideTheWindowOrAfterSleepARemovalIsNow() {
        var grace = DisplayGrace(window: .seconds(10), hold: .seconds(5))
        grace.woke(at: start)
        let late = grace.remove(["hdmi"], ports: ports, at: start + .milliseconds(10_001))
        #expect(late.now == ["hdmi"] && late.held.isEmpty)
        grace.woke(at: start)
        grace.sleeping()
        let asleep = grace.remove(["hdmi"], ports: ports, at: start + .seconds(1))
        #expect(asleep.now == ["hdmi"] && asleep.held.isEmpty)
    }
}
