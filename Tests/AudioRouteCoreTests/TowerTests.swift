// Spec §7: sessions and arbitration in the control tower.
@testable import AudioRouteCore
import Testing

private let nonMixable: [Category] = [.soloAmbient, .playback, .record, .playAndRecord, .multiRoute]

/// Mixable configurations: ambient, and the options that imply mixWithOthers.
private let mixable: [(Category, CategoryOptions)] = [
    (.ambient, []), (.ambient, .duckOthers), (.playback, .mixWithOthers), (.playback, .duckOthers),
    (.playAndRecord, .mixWithOthers), (.multiRoute, .mixWithOthers), (.playback, .interruptSpokenAudioAndMixWithOthers),
]

@Suite("Spec §7: interruption")
struct InterruptionTests {
    @Test("activating a non-mixable session interrupts an active non-mixable one", arguments: nonMixable, nonMixable)
    func nonMixableInterrupts(first: Category, second: Category) throws {
        var tower = try makeTower(phone, sessions: [("a", first, .default, []), ("b", second, .default, [])])
        _ = try tower.setActive(true, session: "a")
        let outcome = try tower.setActive(true, session: "b")
        #expect(events(outcome) == ["a:interruptionBegan(default)"])
        #expect(tower.session("a")?.isActive == false)
        #expect(tower.session("b")?.isActive == true)
    }

    @Test("every other active non-mixable session is interrupted, in session order")
    func interruptsAll() throws {
        // Two non-mixable sessions can be active together only if one was mixable
        // when it activated; switch it afterwards.
        var tower = try makeTower(phone, sessions: [("a", .playback, .default, .mixWithOthers), ("b", .playback, .default, []), ("c", .playAndRecord, .default, [])])
        _ = try tower.setActive(true, session: "a")
        _ = try tower.setActive(true, session: "b")
        _ = try tower.setCategory(.playback, session: "a")
        let outcome = try tower.setActive(true, session: "c")
        #expect(events(outcome) == ["a:interruptionBegan(default)", "b:interruptionBegan(default)"])
    }

    @Test("mixable sessions keep playing when a non-mixable one activates", arguments: mixable)
    func mixableKeepsPlaying(category: Category, options: CategoryOptions) throws {
        var tower = try makeTower(phone, sessions: [("mix", category, .default, options), ("solo", .playback, .default, [])])
        _ = try tower.setActive(true, session: "mix")
        let outcome = try tower.setActive(true, session: "solo")
        #expect(!events(outcome).contains { $0.contains("interruption") })
        #expect(tower.session("mix")?.isActive == true)
        // And a mixable session activating leaves the non-mixable one playing.
        _ = try tower.setActive(false, session: "mix")
        let again = try tower.setActive(true, session: "mix")
        #expect(!events(again).contains { $0.contains("interruption") })
        #expect(tower.session("solo")?.isActive == true)
    }

    @Test("interruptSpokenAudioAndMixWithOthers interrupts spokenAudio sessions and mixes with the rest")
    func interruptSpokenAudio() throws {
        var tower = try makeTower(
            phone,
            sessions: [
                ("podcast", .playback, .spokenAudio, .mixWithOthers), ("music", .playback, .default, []),
                ("nav", .playback, .voicePrompt, .interruptSpokenAudioAndMixWithOthers),
            ])
        _ = try tower.setActive(true, session: "podcast")
        _ = try tower.setActive(true, session: "music")
        let outcome = try tower.setActive(true, session: "nav")
        #expect(events(outcome) == ["podcast:interruptionBegan(default)"])
        #expect(tower.session("music")?.isActive == true)
        #expect(tower.session("nav")?.isActive == true)
        let end = try tower.setActive(false, session: "nav", notifyOthers: true)
        #expect(events(end) == ["podcast:interruptionEnded(shouldResume: true)"])
    }

    @Test("a plain mixWithOthers session does not interrupt spoken audio")
    func plainMixDoesNotInterruptSpoken() throws {
        var tower = try makeTower(phone, sessions: [("podcast", .playback, .spokenAudio, .mixWithOthers), ("nav", .playback, .default, .mixWithOthers)])
        _ = try tower.setActive(true, session: "podcast")
        #expect(events(try tower.setActive(true, session: "nav")) == [])
        #expect(tower.session("podcast")?.isActive == true)
    }

    @Test("notifyOthersOnDeactivation: the interrupted get ended(shouldResume: true); without it, nothing")
    func notifyOthers() throws {
        for notify in [true, false] {
            var tower = try makeTower(phone, sessions: [("a", .playback, .default, []), ("b", .playAndRecord, .default, [])])
            _ = try tower.setActive(true, session: "a")
            _ = try tower.setActive(true, session: "b")
            let outcome = try tower.setActive(false, session: "b", notifyOthers: notify)
            #expect(events(outcome) == (notify ? ["a:interruptionEnded(shouldResume: true)"] : []))
            #expect(tower.session("a")?.isActive == false, "resuming is the session's own decision")
            // The began is not followed by a late ended either.
            _ = try tower.setActive(true, session: "b")
            #expect(events(try tower.setActive(false, session: "b", notifyOthers: true)) == [])
        }
    }

    @Test("only the sessions this one interrupted are told")
    func onlyOwnInterruptions() throws {
        var tower = try makeTower(phone, sessions: [("a", .playback, .default, []), ("b", .playback, .default, []), ("c", .playback, .default, [])])
        _ = try tower.setActive(true, session: "a")
        _ = try tower.setActive(true, session: "b")  // interrupts a
        _ = try tower.setActive(true, session: "c")  // interrupts b
        #expect(events(try tower.setActive(false, session: "c", notifyOthers: true)) == ["b:interruptionEnded(shouldResume: true)"])
    }

    @Test("a session that reactivated on its own is not told its interruption ended")
    func reactivatedNotTold() throws {
        var tower = try makeTower(phone, sessions: [("a", .playback, .default, []), ("b", .playback, .default, .mixWithOthers)])
        _ = try tower.setActive(true, session: "a")
        _ = try tower.setCategory(.playback, session: "b")
        _ = try tower.setActive(true, session: "b")  // interrupts a
        _ = try tower.setCategory(.playback, options: .mixWithOthers, session: "b")
        _ = try tower.setActive(true, session: "a")  // a resumes on its own; b is mixable now
        #expect(events(try tower.setActive(false, session: "b", notifyOthers: true)) == [])
    }

    @Test("closing a session deactivates it with notifyOthers and forgets it")
    func closeSession() throws {
        var tower = try makeTower(phone, sessions: [("a", .playback, .default, []), ("b", .playAndRecord, .default, [])])
        _ = try tower.setActive(true, session: "a")
        _ = try tower.setActive(true, session: "b")
        let outcome = try tower.closeSession("b")
        #expect(events(outcome) == ["a:interruptionEnded(shouldResume: true)"])
        #expect(tower.session("b") == nil)
        #expect(tower.controllingSession == nil)
        #expect(tower.route == Route(outputs: ["spk"]))
        expectError(.unknownSession("b")) { try tower.closeSession("b") }
    }

    @Test("a closed interrupter that was itself interrupted lets its victims resume when nothing else holds them")
    func closingAnInterruptedInterrupter() throws {
        var tower = try makeTower(
            phone, sessions: [("music", .playback, .default, []), ("prompt", .playback, .default, []), ("call", .playAndRecord, .voiceChat, [])])
        _ = try tower.setActive(true, session: "music")
        _ = try tower.setActive(true, session: "prompt")  // interrupts music
        _ = try tower.setActive(true, session: "call")  // interrupts the prompt
        // The prompt's client ends during the call: the music does not resume into the call…
        #expect(events(try tower.closeSession("prompt")) == [])
        #expect(tower.session("music")?.isInterrupted == true)
        // …but when the call ends, once.
        #expect(events(try tower.setActive(false, session: "call", notifyOthers: true)) == ["music:interruptionEnded(shouldResume: true)"])
        #expect(events(try tower.setActive(false, session: "call", notifyOthers: true)) == [])
        // With nothing else active, a closed interrupter's victims resume even though it had been interrupted itself.
        _ = try tower.setActive(true, session: "music")
        _ = try tower.openSession(Session(id: "alarm", configuration: try SessionConfiguration(category: .playback)))
        _ = try tower.openSession(Session(id: "nav", configuration: try SessionConfiguration(category: .playback)))
        _ = try tower.setActive(true, session: "alarm")  // interrupts music
        _ = try tower.setActive(true, session: "nav")  // interrupts the alarm
        _ = try tower.setActive(false, session: "nav")  // without notifyOthers: the alarm stays down
        #expect(events(try tower.closeSession("alarm")) == ["music:interruptionEnded(shouldResume: true)"])
    }

    @Test("a mixable session that stays active does not hold an interrupted session")
    func aMixableSessionHoldsNothing() throws {
        var tower = try makeTower(
            phone, sessions: [("music", .playback, .default, []), ("prompt", .playback, .default, []), ("chime", .ambient, .default, [])])
        _ = try tower.setActive(true, session: "music")
        _ = try tower.setActive(true, session: "chime")
        _ = try tower.setActive(true, session: "prompt")  // interrupts music; the ambient chime mixes
        let ended = events(try tower.setActive(false, session: "prompt", notifyOthers: true))
        #expect(ended.filter { $0.hasPrefix("music:") } == ["music:interruptionEnded(shouldResume: true)"], "\(ended)")
    }

    @Test("opening a session in the deprecated category warns")
    func deprecatedOnOpen() throws {
        var tower = Tower()
        let session = Session(id: "old", configuration: try SessionConfiguration(category: .audioProcessing))
        let outcome = try tower.openSession(session)
        #expect(outcome.warnings == ["category audioProcessing is deprecated and routes nothing"])
    }

    @Test("activating an active session, or deactivating an inactive one, does nothing")
    func idempotentActivation() throws {
        var tower = try activeTower(phone, .playback)
        let before = TowerSnapshot(tower)
        let outcome = try tower.setActive(true, session: "app")
        #expect(outcome == TowerOutcome())
        #expect(TowerSnapshot(tower) == before)
        _ = try tower.setActive(false, session: "app")
        #expect(try tower.setActive(false, session: "app", notifyOthers: true) == TowerOutcome())
    }

    @Test("requests for unknown sessions are refused and nothing changes")
    func unknownSessions() throws {
        var tower = try activeTower(phone, .playAndRecord)
        let before = TowerSnapshot(tower)
        expectError(.unknownSession("x")) { try tower.setActive(true, session: "x") }
        expectError(.unknownSession("x")) { try tower.setCategory(.playback, session: "x") }
        expectError(.unknownSession("x")) { try tower.overrideOutput(.speaker, session: "x") }
        expectError(.unknownSession("x")) { try tower.setPrefersInterruptionOnRouteDisconnect(false, session: "x") }
        expectError(.duplicateSession("app")) { try tower.openSession(Session(id: "app")) }
        #expect(TowerSnapshot(tower) == before)
    }
}

@Suite("Spec §7: ducking")
struct DuckingTests {
    @Test("duckOthers ducks the other active sessions while active, and unducks them when it deactivates",
        arguments: [Category.ambient, .playback, .playAndRecord, .multiRoute])
    func duckOthers(category: Category) throws {
        var tower = try makeTower(phone, sessions: [("music", .playback, .default, []), ("fitness", category, .default, .duckOthers)])
        _ = try tower.setActive(true, session: "music")
        let on = try tower.setActive(true, session: "fitness")
        #expect(events(on).filter { $0.contains("duck") } == ["music:ducked"])
        #expect(tower.session("music")?.isActive == true)
        let off = try tower.setActive(false, session: "fitness")
        #expect(events(off).filter { $0.contains("duck") } == ["music:unducked"])
    }

    @Test("a session that activates while a ducker plays is ducked at once")
    func lateSessionDucked() throws {
        var tower = try makeTower(phone, sessions: [("fitness", .playback, .default, .duckOthers), ("music", .playback, .default, [])])
        _ = try tower.setActive(true, session: "fitness")
        #expect(events(try tower.setActive(true, session: "music")) == ["music:ducked"])
    }

    @Test("the suggested gain is 0.3 and appears in the simulation line")
    func gain() {
        #expect(abs(Double(SessionEvent.duckedGain) - 0.3) < 1e-6)
        guard case .double(let gain)? = SessionEvent(session: "m", kind: .ducked).json["gain"] else {
            Issue.record("ducked carries no gain")
            return
        }
        #expect(abs(gain - 0.3) < 1e-6)
        #expect(SessionEvent(session: "m", kind: .unducked).json["gain"] == nil)
    }

    @Test("without duckOthers nobody is ducked")
    func noDucking() throws {
        var tower = try makeTower(phone, sessions: [("music", .playback, .default, []), ("chime", .ambient, .default, [])])
        _ = try tower.setActive(true, session: "music")
        #expect(!events(try tower.setActive(true, session: "chime")).contains { $0.contains("duck") })
    }

    @Test("an interrupted session is not unducked later; it starts afresh")
    func interruptedNotUnducked() throws {
        var tower = try makeTower(phone, sessions: [("music", .playback, .default, []), ("fitness", .ambient, .default, .duckOthers), ("call", .playAndRecord, .default, [])])
        _ = try tower.setActive(true, session: "music")
        _ = try tower.setActive(true, session: "fitness")
        let call = try tower.setActive(true, session: "call")
        #expect(events(call) == ["music:interruptionBegan(default)", "call:ducked"])
        #expect(events(try tower.setActive(false, session: "fitness")) == ["call:unducked"])
    }
}

@Suite("Spec §7: controlling session")
struct ControllingSessionTests {
    @Test("the route follows the most recent active non-mixable session, else the most recent active one, else the system default")
    func controllingSession() throws {
        var tower = try makeTower(
            phone,
            sessions: [("m1", .playAndRecord, .default, .mixWithOthers), ("n", .record, .default, []), ("m2", .playback, .default, .mixWithOthers)])
        #expect(tower.controllingSession == nil)
        #expect(tower.route == Route(outputs: ["spk"]), "system default: soloAmbient")

        _ = try tower.setActive(true, session: "m1")
        #expect(tower.controllingSession?.id == "m1")
        #expect(tower.route == Route(inputs: ["mic"], outputs: ["rcv"]))

        _ = try tower.setActive(true, session: "n")
        #expect(tower.controllingSession?.id == "n")
        #expect(tower.route == Route(inputs: ["mic"]))

        let later = try tower.setActive(true, session: "m2")
        #expect(tower.controllingSession?.id == "n", "a non-mixable session outranks a more recent mixable one")
        #expect(later.change == nil)

        _ = try tower.setActive(false, session: "n")
        #expect(tower.controllingSession?.id == "m2")
        #expect(tower.route == Route(outputs: ["spk"]))

        _ = try tower.setActive(false, session: "m2")
        #expect(tower.controllingSession?.id == "m1")
        #expect(tower.route == Route(inputs: ["mic"], outputs: ["rcv"]))

        _ = try tower.setActive(false, session: "m1")
        #expect(tower.controllingSession == nil)
        #expect(tower.route == Route(outputs: ["spk"]))
    }

    @Test("among mixable sessions the most recently activated controls")
    func mostRecentMixable() throws {
        var tower = try makeTower(phone, sessions: [("a", .playAndRecord, .default, .mixWithOthers), ("b", .ambient, .default, [])])
        _ = try tower.setActive(true, session: "b")
        _ = try tower.setActive(true, session: "a")
        #expect(tower.controllingSession?.id == "a")
        _ = try tower.setActive(false, session: "b")
        _ = try tower.setActive(true, session: "b")
        #expect(tower.controllingSession?.id == "b")
        #expect(tower.route == Route(outputs: ["spk"]))
    }

    @Test("an inactive session's category does not move the route")
    func inactiveDoesNotControl() throws {
        var tower = try makeTower(phone, sessions: [("call", .playAndRecord, .default, [])])
        #expect(tower.route == Route(outputs: ["spk"]))
        _ = try tower.overrideOutput(.speaker, session: "call")
        #expect(tower.route == Route(outputs: ["spk"]))
    }
}

@Suite("Spec §7: route disconnect")
struct RouteDisconnectTests {
    @Test("active playback whose output goes away is interrupted with reason routeDisconnected")
    func interrupted() throws {
        var tower = try activeTower(laptop + [port("hp", .headphones, sequence: 5)], .playback)
        let outcome = try tower.removePorts(["hp"])
        #expect(events(outcome) == ["app:interruptionBegan(routeDisconnected)"])
        #expect(tower.session("app")?.isActive == false)
        #expect(tower.route == Route(outputs: ["spk"]))
        #expect(outcome.change?.reason == .oldDeviceUnavailable)
    }

    @Test("prefersInterruptionOnRouteDisconnect = false opts out")
    func optOut() throws {
        var tower = try activeTower(laptop + [port("hp", .headphones, sequence: 5)], .playback)
        try tower.setPrefersInterruptionOnRouteDisconnect(false, session: "app")
        let outcome = try tower.removePorts(["hp"])
        #expect(events(outcome) == [])
        #expect(tower.session("app")?.isActive == true)
        #expect(outcome.change?.uids == RouteChange(reason: .oldDeviceUnavailable, previous: Route(outputs: ["hp"]), current: Route(outputs: ["spk"])))
    }

    @Test("only playback is interrupted", arguments: [Category.ambient, .soloAmbient, .playAndRecord, .multiRoute])
    func otherCategories(category: Category) throws {
        var tower = try activeTower(laptop + [port("hp", .headphones, sequence: 5)], category)
        #expect(tower.route.outputs.contains("hp"))
        let outcome = try tower.removePorts(["hp"])
        #expect(events(outcome) == [])
        #expect(tower.session("app")?.isActive == true)
    }

    @Test("removing a port outside the route does not interrupt")
    func outsideRoute() throws {
        var tower = try activeTower(laptop + [port("hp", .headphones, sequence: 5), port("hdmi", .HDMI, sequence: 6)], .playback)
        #expect(events(try tower.removePorts(["hdmi"])) == [])
        #expect(tower.session("app")?.isActive == true)
    }

    @Test("an inactive playback session is not interrupted")
    func inactive() throws {
        var tower = try makeTower(laptop + [port("hp", .headphones, sequence: 5)], sessions: [("app", .playback, .default, [])])
        #expect(events(try tower.removePorts(["hp"])) == [])
    }
}

@Suite("Spec §7: hints and other audio")
struct HintTests {
    @Test("secondaryAudioShouldBeSilencedHint and silenceSecondaryAudioHint for ambient sessions")
    func secondaryAudioHint() throws {
        var tower = try makeTower(phone, sessions: [("game", .ambient, .default, []), ("mix", .playback, .default, .mixWithOthers), ("music", .playback, .default, [])])
        _ = try tower.setActive(true, session: "game")
        _ = try tower.setActive(true, session: "mix")
        #expect(!tower.secondaryAudioShouldBeSilencedHint(for: "game"), "only mixable sessions play")
        let on = try tower.setActive(true, session: "music")
        #expect(events(on) == ["game:silenceSecondaryAudioBegin"], "sent to ambient sessions only")
        #expect(tower.secondaryAudioShouldBeSilencedHint(for: "game"))
        #expect(tower.secondaryAudioShouldBeSilencedHint(for: "mix"))
        #expect(!tower.secondaryAudioShouldBeSilencedHint(for: "music"), "not for the non-mixable session itself")
        let off = try tower.setActive(false, session: "music")
        #expect(events(off) == ["game:silenceSecondaryAudioEnd"])
        #expect(!tower.secondaryAudioShouldBeSilencedHint(for: "game"))
    }

    @Test("an ambient session that activates while another session plays gets the begin hint")
    func lateAmbient() throws {
        var tower = try makeTower(phone, sessions: [("music", .playback, .default, []), ("game", .ambient, .default, [])])
        _ = try tower.setActive(true, session: "music")
        #expect(events(try tower.setActive(true, session: "game")) == ["game:silenceSecondaryAudioBegin"])
    }

    @Test("isOtherAudioPlaying while any other session is active")
    func otherAudio() throws {
        var tower = try makeTower(phone, sessions: [("a", .ambient, .default, []), ("b", .playback, .default, [])])
        #expect(!tower.isOtherAudioPlaying(for: "a"))
        _ = try tower.setActive(true, session: "a")
        #expect(!tower.isOtherAudioPlaying(for: "a"))
        #expect(tower.isOtherAudioPlaying(for: "b"))
        _ = try tower.setActive(true, session: "b")
        #expect(tower.isOtherAudioPlaying(for: "a"))
        _ = try tower.setActive(false, session: "a")
        #expect(!tower.isOtherAudioPlaying(for: "b"))
    }
}

@Suite("Spec §7: silent mode and screen lock")
struct SilencingTests {
    @Test("silent mode silences ambient and soloAmbient sessions only", arguments: Category.allCases)
    func silentMode(category: Category) throws {
        var tower = try activeTower(phone, category)
        let on = tower.setSilentMode(true)
        let silenced = category == .ambient || category == .soloAmbient
        #expect(events(on) == (silenced ? ["app:silenced"] : []))
        #expect(tower.silentMode)
        let off = tower.setSilentMode(false)
        #expect(events(off) == (silenced ? ["app:unsilenced"] : []))
    }

    @Test("screen lock silences ambient and soloAmbient sessions only", arguments: Category.allCases)
    func screenLock(category: Category) throws {
        var tower = try activeTower(phone, category)
        let silenced = category == .ambient || category == .soloAmbient
        #expect(events(tower.setScreenLocked(true)) == (silenced ? ["app:silenced"] : []))
        #expect(tower.screenLocked)
        #expect(events(tower.setScreenLocked(false)) == (silenced ? ["app:unsilenced"] : []))
    }

    @Test("silenced while either holds; told once; an inactive session is not told")
    func both() throws {
        var tower = try makeTower(phone, sessions: [("a", .ambient, .default, []), ("b", .soloAmbient, .default, [])])
        _ = try tower.setActive(true, session: "a")
        #expect(events(tower.setSilentMode(true)) == ["a:silenced"])
        #expect(events(tower.setScreenLocked(true)) == [])
        #expect(events(tower.setSilentMode(false)) == [])
        #expect(events(try tower.setActive(true, session: "b")) == ["a:silenceSecondaryAudioBegin", "b:silenced"])
        #expect(events(tower.setScreenLocked(false)) == ["a:unsilenced", "b:unsilenced"])
    }
}

@Suite("Sequences and priorities per device")
struct DevicePortTests {
    @Test("the ports of a device that arrive together share one sequence; the next device gets a larger one")
    func oneSequencePerDevice() throws {
        var tower = Tower()
        _ = try tower.addPorts(phone.map { port($0.uid, $0.type, device: $0.device) })
        _ = try tower.addPorts(wiredHeadset(sequence: 0) + [port("usb", .usbAudio, direction: .duplex)])
        let sequences = Dictionary(uniqueKeysWithValues: tower.ports.map { ($0.uid, $0.sequence) })
        #expect(Set(["spk", "rcv", "mic"].map { sequences[$0]! }).count == 1)
        #expect(sequences["hp"] == sequences["hsmic"])
        #expect(sequences["hp"]! > sequences["spk"]!)
        #expect(sequences["usb"]! > sequences["hp"]!)
    }

    @Test("a profile joining a device already present brings the whole device forward")
    func lateProfileBringsDeviceForward() throws {
        var tower = try activeTower(phone, .playAndRecord, options: [.allowBluetooth, .allowBluetoothA2DP])
        _ = try tower.addPorts([port("bt-hfp", .bluetoothHFP, device: "bt", direction: .duplex)])
        _ = try tower.addPorts([port("usb", .usbAudio, direction: .duplex)])
        #expect(tower.route == Route(inputs: ["usb"], outputs: ["usb"]))
        let outcome = try tower.addPorts([port("bt-a2dp", .bluetoothA2DP, device: "bt")])
        // HFP stands for the headset, which is now the last in.
        #expect(tower.route == Route(inputs: ["bt-hfp"], outputs: ["bt-hfp"]))
        #expect(outcome.change?.reason == .newDeviceAvailable)
        // And the A2DP port, outside the route, cannot move it by leaving.
        let removal = try tower.removePorts(["bt-a2dp"])
        #expect(removal.change == nil)
    }

    @Test("the Bluetooth profiles of one device share its priority")
    func bluetoothProfilesSharePriority() throws {
        var tower = try activeTower(phone, .playAndRecord, options: [.allowBluetooth, .allowBluetoothA2DP])
        _ = try tower.addPorts([port("bt-hfp", .bluetoothHFP, device: "bt", direction: .duplex, priority: 150)])
        _ = try tower.addPorts([port("bt-a2dp", .bluetoothA2DP, device: "bt")])
        #expect(tower.port("bt-a2dp")?.priority == 150)
        let outcome = try tower.setPriority(20, for: "bt-a2dp")
        #expect(tower.port("bt-hfp")?.priority == 20)
        #expect(outcome.portChanges.map(\.port.uid) == ["bt-a2dp", "bt-hfp"])
        // Other devices keep theirs.
        _ = try tower.addPorts([port("usb", .usbAudio, direction: .duplex)])
        _ = try tower.setPriority(40, for: "usb")
        #expect(tower.port("bt-hfp")?.priority == 20)
    }
}

@Suite("Profile switches on one device")
struct ProfileSwitchTests {
    @Test("HFP coming and going on a headset that is the whole route is a configuration change")
    func hfpArrivesAndLeaves() throws {
        // No built-in microphone: the headset is all the route has, before and after.
        var tower = try activeTower([port("spk", .builtInSpeaker, device: "internal", sequence: 1)], .playAndRecord, options: [.allowBluetooth, .allowBluetoothA2DP])
        let connect = try tower.addPorts([port("bt-a2dp", .bluetoothA2DP, device: "bt")])
        #expect(connect.change?.reason == .newDeviceAvailable)
        #expect(tower.route == Route(outputs: ["bt-a2dp"]))
        let hfp = try tower.addPorts([port("bt-hfp", .bluetoothHFP, device: "bt", direction: .duplex)])
        #expect(tower.route == Route(inputs: ["bt-hfp"], outputs: ["bt-hfp"]))
        #expect(hfp.change?.reason == .routeConfigurationChange)
        let gone = try tower.removePorts(["bt-hfp"])
        #expect(tower.route == Route(outputs: ["bt-a2dp"]))
        #expect(gone.change?.reason == .routeConfigurationChange)
        let off = try tower.removePorts(["bt-a2dp"])
        #expect(off.change?.reason == .oldDeviceUnavailable)
    }

    @Test("HFP taking the input from the built-in mic moves the route to the headset: a new device, then an old one")
    func hfpTakesTheInput() throws {
        // The route's devices go from {bt, internal} to {bt}: not a profile switch on the same devices.
        var tower = try activeTower(phone, .playAndRecord, options: [.allowBluetooth, .allowBluetoothA2DP])
        _ = try tower.addPorts([port("bt-a2dp", .bluetoothA2DP, device: "bt")])
        #expect(tower.route == Route(inputs: ["mic"], outputs: ["bt-a2dp"]))
        let hfp = try tower.addPorts([port("bt-hfp", .bluetoothHFP, device: "bt", direction: .duplex)])
        #expect(tower.route == Route(inputs: ["bt-hfp"], outputs: ["bt-hfp"]))
        #expect(hfp.change?.reason == .newDeviceAvailable)
        let gone = try tower.removePorts(["bt-hfp"])
        #expect(tower.route == Route(inputs: ["mic"], outputs: ["bt-a2dp"]))
        #expect(gone.change?.reason == .oldDeviceUnavailable)
    }

    @Test("a wired headset's mic switch: a configuration change when the headset is the whole route, else a new device")
    func headsetMicSwitch() throws {
        var alone = try activeTower([port("spk", .builtInSpeaker, device: "internal", sequence: 1)], .playAndRecord)
        _ = try alone.addPorts([port("hp", .headphones, device: "jack")])
        let mic = try alone.addPorts([port("hsmic", .headsetMic, device: "jack")])
        #expect(alone.route == Route(inputs: ["hsmic"], outputs: ["hp"]))
        #expect(mic.change?.reason == .routeConfigurationChange)
        #expect(try alone.removePorts(["hsmic"]).change?.reason == .routeConfigurationChange)

        // With a built-in mic the input moves from the machine to the headset.
        var withMic = try activeTower(laptop, .playAndRecord)
        let headphones = try withMic.addPorts([port("hp", .headphones, device: "jack")])
        #expect(headphones.change?.reason == .newDeviceAvailable)
        #expect(withMic.route == Route(inputs: ["mic"], outputs: ["hp"]))
        let headsetMic = try withMic.addPorts([port("hsmic", .headsetMic, device: "jack")])
        #expect(withMic.route == Route(inputs: ["hsmic"], outputs: ["hp"]))
        #expect(headsetMic.change?.reason == .newDeviceAvailable)
        #expect(try withMic.removePorts(["hsmic"]).change?.reason == .oldDeviceUnavailable)
    }

    @Test("a profile leaving a headset that keeps playing does not interrupt playback")
    func profileLeavingDoesNotInterrupt() throws {
        var tower = try activeTower(phone, .playback)
        _ = try tower.addPorts([port("bt-a2dp", .bluetoothA2DP, device: "bt"), port("bt-le", .bluetoothLE, device: "bt", direction: .output)])
        #expect(tower.route == Route(outputs: ["bt-a2dp"]))
        let outcome = try tower.removePorts(["bt-a2dp"])
        #expect(tower.route == Route(outputs: ["bt-le"]))
        #expect(outcome.change?.reason == .routeConfigurationChange)
        #expect(outcome.events.isEmpty)
        #expect(tower.session("app")?.isActive == true)
        // The whole headset going does.
        let gone = try tower.removePorts(["bt-le"])
        #expect(gone.events == [SessionEvent(session: "app", kind: .interruptionBegan(reason: .routeDisconnected))])
    }
}
