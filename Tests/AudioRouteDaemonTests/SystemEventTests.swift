// logind's events as the route service applies them: the screen lock silences what the
// seeds' lock silences, a wake makes the next route move a port causes `wakeFromSleep`.
import AudioRouteCore
import AudioRouteDaemon
import AudioRouteTestKit
import AudioRouteWatchers
import Testing

private let speaker = Port(uid: "pci-speaker", type: .builtInSpeaker, device: "pci", alsa: "dmix:CARD=PCH,DEV=0")
private let hdmi = Port(uid: "hdmi", type: .HDMI, device: "gpu", alsa: "hdmi:CARD=PCH,DEV=0")
private let usb = Port(uid: "usb-dac", type: .usbAudio, device: "usb-dac", direction: .output, alsa: "dmix:CARD=DAC,DEV=0")

extension EventLog {
    /// Skips events until one for a session, which it returns.
    func nextSessionEvent() async throws -> SessionEvent {
        while let event = try await next() {
            if case .session(let sessionEvent) = event { return sessionEvent }
        }
        throw TestFailure("event stream ended")
    }
}

@Suite struct SystemEventTests {
    @Test func aLockSilencesAmbientAndSoloAmbientSessionsAndAnUnlockEndsIt() async throws {
        try await withTemporaryDirectory { dir in
            let udev = TestWatcher(name: "udev")
            let harness = Harness(dir: dir, watchers: [udev])
            let routes = harness.routeService
            let setUp = EventLog(routes.events.subscribe())
            try await harness.running {
                udev.feed.yield(.added([speaker]))
                _ = try await setUp.nextRouteChange()
                // Mixable playback, so that the soloAmbient session activated last interrupts nobody.
                try await routes.openSession(id: "ambient")
                try await routes.setCategory(.ambient, session: "ambient")
                try await routes.setActive(true, session: "ambient")
                try await routes.openSession(id: "music")
                try await routes.setCategory(.playback, options: .mixWithOthers, session: "music")
                try await routes.setActive(true, session: "music")
                try await routes.openSession(id: "solo")
                try await routes.setActive(true, session: "solo")
                #expect(await routes.sessions.allSatisfy(\.isActive))
                // From here: what the lock announces.
                let events = EventLog(routes.events.subscribe())

                await routes.apply(SystemEvent.screenLocked(true))
                #expect(await routes.screenLocked)
                #expect(try await events.next() == .screenLockChanged(true))
                // Playback is not silenced: two events, for the ambient and the soloAmbient session.
                var silenced = [try await events.nextSessionEvent(), try await events.nextSessionEvent()]
                silenced.sort { $0.session < $1.session }
                #expect(silenced == [SessionEvent(session: "ambient", kind: .silenced), SessionEvent(session: "solo", kind: .silenced)])

                // A repeated lock announces nothing; the unlock ends the silencing.
                await routes.apply(SystemEvent.screenLocked(true))
                await routes.apply(SystemEvent.screenLocked(false))
                #expect(try await events.next() == .screenLockChanged(false))
                var unsilenced = [try await events.nextSessionEvent(), try await events.nextSessionEvent()]
                unsilenced.sort { $0.session < $1.session }
                #expect(unsilenced == [SessionEvent(session: "ambient", kind: .unsilenced), SessionEvent(session: "solo", kind: .unsilenced)])
                #expect(!(await routes.screenLocked))
            }
        }
    }

    @Test func afterAWakeTheNextPortMoveIsWakeFromSleepAndTheOneAfterItsOwn() async throws {
        try await withTemporaryDirectory { dir in
            let udev = TestWatcher(name: "udev")
            let harness = Harness(dir: dir, watchers: [udev])
            let routes = harness.routeService
            let events = EventLog(routes.events.subscribe())
            try await harness.running {
                udev.feed.yield(.added([speaker]))
                #expect(try await events.nextRouteChange().reason == .newDeviceAvailable)

                // A wake that moves nothing announces nothing: the next change is the DAC's.
                await routes.apply(SystemEvent.sleeping)
                await routes.apply(SystemEvent.woke)
                udev.feed.yield(.added([usb]))
                var change = try await events.nextRouteChange()
                #expect(change.reason == .wakeFromSleep)
                #expect(change.current.outputs == ["usb-dac"])

                udev.feed.yield(.removed(["usb-dac"]))
                change = try await events.nextRouteChange()
                #expect(change.reason == .oldDeviceUnavailable)

                // Going to sleep closes a window no port has used; a port's move while asleep
                // (seen as the kernel resumes, before logind's wake) is the next wake's, and that
                // wake opens no second window.
                await routes.apply(SystemEvent.woke)
                await routes.apply(SystemEvent.sleeping)
                udev.feed.yield(.added([usb]))
                #expect(try await events.nextRouteChange().reason == .wakeFromSleep)
                await routes.apply(SystemEvent.woke)
                udev.feed.yield(.removed(["usb-dac"]))
                #expect(try await events.nextRouteChange().reason == .oldDeviceUnavailable)
            }
        }
    }

    @Test func afterAWakeAMonitorBackWithinItsGraceMovesNothing() async throws {
        try await withTemporaryDirectory { dir in
            let udev = TestWatcher(name: "udev")
            let harness = Harness(dir: dir, watchers: [udev], displayGrace: DisplayGrace(window: .seconds(10), hold: .seconds(1)))
            let routes = harness.routeService
            let events = EventLog(routes.events.subscribe())
            try await harness.running {
                udev.feed.yield(.added([speaker, hdmi]))
                #expect(try await events.nextRouteChange().current.outputs == ["hdmi"])

                await routes.apply(SystemEvent.woke)
                // The monitor drops its audio and brings it back: the route stays on it, unannounced.
                udev.feed.yield(.removed(["hdmi"]))
                udev.feed.yield(.added([hdmi]))
                // Past the hold: still nothing; the next change is the DAC's, and the wake's.
                try await Task.sleep(for: .milliseconds(1500))
                #expect(await routes.route.outputs == ["hdmi"])
                udev.feed.yield(.added([usb]))
                let change = try await events.nextRouteChange()
                #expect(change.reason == .wakeFromSleep)
                #expect(change.previous.outputs == ["hdmi"] && change.current.outputs == ["usb-dac"])
            }
        }
    }

    @Test func afterAWakeAMonitorThatStaysAwayLeavesWhenItsGraceEnds() async throws {
        try await withTemporaryDirectory { dir in
            let udev = TestWatcher(name: "udev")
            let harness = Harness(dir: dir, watchers: [udev], displayGrace: DisplayGrace(window: .seconds(10), hold: .milliseconds(500)))
            let routes = harness.routeService
            let events = EventLog(routes.events.subscribe())
            try await harness.running {
                udev.feed.yield(.added([speaker, hdmi]))
                _ = try await events.nextRouteChange()
                await routes.apply(SystemEvent.woke)
                let gone = ContinuousClock.now
                udev.feed.yield(.removed(["hdmi"]))
                let change = try await events.nextRouteChange()
                #expect(ContinuousClock.now - gone >= .milliseconds(500), "removed before its grace ended")
                #expect(change.current.outputs == ["pci-speaker"])
                #expect(change.reason == .wakeFromSleep)

                // Going to sleep ends the grace: a monitor's removal while asleep is at once
                // (the wake's move), and one after the wake window with its own reason.
                udev.feed.yield(.added([hdmi]))
                _ = try await events.nextRouteChange()
                await routes.apply(SystemEvent.sleeping)
                let asleep = ContinuousClock.now
                udev.feed.yield(.removed(["hdmi"]))
                #expect(try await events.nextRouteChange().reason == .wakeFromSleep)
                #expect(ContinuousClock.now - asleep < .milliseconds(500), "held while asleep")
                await routes.apply(SystemEvent.woke)
                udev.feed.yield(.added([hdmi]))
                _ = try await events.nextRouteChange()
                udev.feed.yield(.removed(["hdmi"]))
                let held = try await events.nextRouteChange()
                #expect(held.reason == .oldDeviceUnavailable, "the wake's move was the one while asleep")
            }
        }
    }
}
