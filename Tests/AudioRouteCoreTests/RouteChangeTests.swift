// Spec §6: a route change is announced exactly when the route moves, with the
// reason the spec's table gives; portsChanged reports every arrival and removal.
@testable import AudioRouteCore
import Testing

@Suite("Spec §6: route change reasons")
struct RouteChangeReasonTests {
    @Test("newDeviceAvailable: a port arrived and the route moved to it; portsChanged names it")
    func newDevice() throws {
        var tower = try activeTower(laptop, .playback)
        let outcome = try tower.addPorts([port("hp", .headphones)])
        #expect(outcome.change?.uids == RouteChange(reason: .newDeviceAvailable, previous: Route(outputs: ["spk"]), current: Route(outputs: ["hp"])))
        #expect(outcome.portChanges.map(\.kind) == [.added])
        #expect(outcome.portChanges.map(\.port.uid) == ["hp"])
    }

    @Test("a change describes both routes' ports: a port that has just gone as it was")
    func describedPorts() throws {
        var tower = try activeTower(phone + wiredHeadset(sequence: 10), .playAndRecord)
        let hp = try #require(tower.port("hp"))
        let hsmic = try #require(tower.port("hsmic"))
        let change = try #require(try tower.removePorts(["hp", "hsmic"]).change)
        #expect(change.previousPorts == RoutePorts(outputs: [hp], inputs: [hsmic]))
        #expect(change.currentPorts == RoutePorts(outputs: [tower.port("rcv")!], inputs: [tower.port("mic")!]))
        #expect(change.previousPorts.route == change.previous)
        #expect(change.currentPorts.route == change.current)
        // An arrival: the new port as the tower took it (with its sequence).
        let arrived = try #require(try tower.addPorts([port("hp", .headphones)]).change)
        #expect(arrived.currentPorts.outputs == [tower.port("hp")!])
        #expect(arrived.previousPorts.outputs == [tower.port("rcv")!])
    }

    @Test("an arrival the route does not move to: no change, but portsChanged")
    func arrivalWithoutChange() throws {
        var tower = try activeTower(laptop + [port("hp", .headphones, sequence: 5)], .playback)
        let outcome = try tower.addPorts([port("hdmi", .HDMI)])
        #expect(outcome.change == nil)
        #expect(outcome.portChanges.map(\.port.uid) == ["hdmi"])
        #expect(outcome.portChanges.map(\.kind) == [.added])
    }

    @Test("oldDeviceUnavailable: a port of the route went away")
    func oldDevice() throws {
        var tower = try activeTower(phone + wiredHeadset(sequence: 10), .playAndRecord)
        let outcome = try tower.removePorts(["hp", "hsmic"])
        #expect(
            outcome.change?.uids
                == RouteChange(reason: .oldDeviceUnavailable, previous: Route(inputs: ["hsmic"], outputs: ["hp"]), current: Route(inputs: ["mic"], outputs: ["rcv"])))
        #expect(outcome.portChanges.map(\.kind) == [.removed, .removed])
        #expect(outcome.portChanges.map(\.port.uid) == ["hp", "hsmic"])
    }

    @Test("a removal outside the route: no change, but portsChanged")
    func removalWithoutChange() throws {
        var tower = try activeTower(laptop + [port("hp", .headphones, sequence: 5), port("hdmi", .HDMI, sequence: 4)], .playback)
        let outcome = try tower.removePorts(["hdmi"])
        #expect(outcome.change == nil)
        #expect(outcome.portChanges.map(\.port.uid) == ["hdmi"])
        #expect(outcome.events.isEmpty)
    }

    @Test("categoryChange: the controlling session's category, mode or options changed")
    func categoryChange() throws {
        var tower = try activeTower(phone, .playback)
        var outcome = try tower.setCategory(.playAndRecord, session: "app")
        #expect(outcome.change?.uids == RouteChange(reason: .categoryChange, previous: Route(outputs: ["spk"]), current: Route(inputs: ["mic"], outputs: ["rcv"])))
        outcome = try tower.setCategory(.playAndRecord, mode: .videoChat, session: "app")
        #expect(outcome.change?.reason == .categoryChange)
        #expect(tower.route.outputs == ["spk"])
        outcome = try tower.setCategory(.playAndRecord, options: .defaultToSpeaker, session: "app")
        #expect(outcome.change == nil, "same route, nothing announced")
    }

    @Test("categoryChange: the controlling session changed")
    func controllingSessionChange() throws {
        var tower = try makeTower(phone, sessions: [("call", .playAndRecord, .default, []), ("music", .playback, .default, [])])
        var outcome = try tower.setActive(true, session: "call")
        #expect(outcome.change?.uids == RouteChange(reason: .categoryChange, previous: Route(outputs: ["spk"]), current: Route(inputs: ["mic"], outputs: ["rcv"])))
        outcome = try tower.setActive(true, session: "music")
        #expect(outcome.change?.uids == RouteChange(reason: .categoryChange, previous: Route(inputs: ["mic"], outputs: ["rcv"]), current: Route(outputs: ["spk"])))
    }

    @Test("a change to a session that does not control the route announces nothing")
    func nonControllingSession() throws {
        var tower = try makeTower(phone, sessions: [("music", .playback, .default, []), ("idle", .soloAmbient, .default, [])])
        _ = try tower.setActive(true, session: "music")
        let outcome = try tower.setCategory(.playAndRecord, session: "idle")
        #expect(outcome.change == nil)
        #expect(tower.route == Route(outputs: ["spk"]))
    }

    @Test("override: the output override set and cleared")
    func overrideReason() throws {
        var tower = try activeTower(phone, .playAndRecord)
        var outcome = try tower.overrideOutput(.speaker, session: "app")
        #expect(outcome.change?.uids == RouteChange(reason: .override, previous: Route(inputs: ["mic"], outputs: ["rcv"]), current: Route(inputs: ["mic"], outputs: ["spk"])))
        outcome = try tower.overrideOutput(.none, session: "app")
        #expect(outcome.change?.uids == RouteChange(reason: .override, previous: Route(inputs: ["mic"], outputs: ["spk"]), current: Route(inputs: ["mic"], outputs: ["rcv"])))
    }

    @Test("override: the preferred input set and cleared")
    func preferredInputReason() throws {
        var tower = try activeTower(phone + wiredHeadset(sequence: 10), .playAndRecord)
        var outcome = try tower.setPreferredInput("mic", session: "app")
        #expect(outcome.change?.reason == .override)
        #expect(tower.route == Route(inputs: ["mic"], outputs: ["hp"]))
        outcome = try tower.setPreferredInput(nil, session: "app")
        #expect(outcome.change?.reason == .override)
        #expect(tower.route == Route(inputs: ["hsmic"], outputs: ["hp"]))
    }

    @Test("a user's port priority is a routing preference: reason override")
    func priorityReason() throws {
        var tower = try activeTower(laptop + [port("hp", .headphones, sequence: 5), port("hdmi", .HDMI, sequence: 6)], .playback)
        let outcome = try tower.setPriority(200, for: "hdmi")
        #expect(outcome.change?.uids == RouteChange(reason: .override, previous: Route(outputs: ["hp"]), current: Route(outputs: ["hdmi"])))
        #expect(outcome.portChanges.map(\.kind) == [.updated])
        expectError(.unknownPort("nope")) { try tower.setPriority(1, for: "nope") }
    }

    @Test("wakeFromSleep: nothing announced when re-evaluation does not move the route")
    func wake() throws {
        var tower = try activeTower(phone, .playAndRecord)
        let before = TowerSnapshot(tower)
        let outcome = tower.wake()
        #expect(outcome.change == nil)
        #expect(outcome.events.isEmpty)
        #expect(TowerSnapshot(tower) == before)
    }

    @Test("routeConfigurationChange: same ports, a route port's ALSA PCM changed")
    func configurationChange() throws {
        var tower = try activeTower(laptop + [port("usb", .usbAudio, direction: .output, sequence: 5, alsa: "plughw:CARD=A,DEV=0")], .playback)
        let outcome = try tower.updatePort(port("usb", .usbAudio, direction: .output, alsa: "plughw:CARD=A,DEV=1"))
        #expect(outcome.change?.uids == RouteChange(reason: .routeConfigurationChange, previous: Route(outputs: ["usb"]), current: Route(outputs: ["usb"])))
        #expect(outcome.portChanges.map(\.kind) == [.updated])
        #expect(tower.port("usb")?.sequence == 5, "an update keeps the port's sequence")
        #expect(tower.port("usb")?.alsa == "plughw:CARD=A,DEV=1")
        // Once announced, the same configuration is not announced again.
        #expect(tower.wake().change == nil)
    }

    @Test("a configuration change outside the route is not announced")
    func configurationChangeElsewhere() throws {
        var tower = try activeTower(laptop + [port("usb", .usbAudio, direction: .output, sequence: 5), port("hdmi", .HDMI, sequence: 4, alsa: "hdmi:0")], .playback)
        let outcome = try tower.updatePort(port("hdmi", .HDMI, alsa: "hdmi:1"))
        #expect(outcome.change == nil)
        expectError(.unknownPort("nope")) { try tower.updatePort(port("nope", .HDMI)) }
    }

    @Test("a port event names the reason when it also clears the override")
    func arrivalClearingOverride() throws {
        var tower = try activeTower(phone, .playAndRecord)
        _ = try tower.overrideOutput(.speaker, session: "app")
        let outcome = try tower.addPorts([port("usb", .usbAudio, direction: .duplex)])
        #expect(outcome.change?.uids == RouteChange(reason: .newDeviceAvailable, previous: Route(inputs: ["mic"], outputs: ["spk"]), current: Route(inputs: ["usb"], outputs: ["usb"])))
    }

    @Test("a port event names the reason when it also interrupts and replaces the controlling session")
    func removalChangingControllingSession() throws {
        var tower = try makeTower(phone + [port("usb", .usbAudio, direction: .output, sequence: 10)], sessions: [("music", .playback, .default, []), ("call", .playAndRecord, .default, .mixWithOthers)])
        _ = try tower.setActive(true, session: "call")
        _ = try tower.setActive(true, session: "music")
        #expect(tower.controllingSession?.id == "music")
        let outcome = try tower.removePorts(["usb"])
        #expect(events(outcome) == ["music:interruptionBegan(routeDisconnected)"])
        #expect(tower.controllingSession?.id == "call")
        #expect(outcome.change?.uids == RouteChange(reason: .oldDeviceUnavailable, previous: Route(outputs: ["usb"]), current: Route(inputs: ["mic"], outputs: ["rcv"])))
    }

    @Test("a port event names the reason even when it leaves a needed side empty")
    func removalLeavingNoRoute() throws {
        var tower = try activeTower([port("spk", .builtInSpeaker), port("mic", .builtInMic)], .record)
        let outcome = try tower.removePorts(["mic"])
        #expect(outcome.change?.uids == RouteChange(reason: .oldDeviceUnavailable, previous: Route(inputs: ["mic"]), current: Route()))
        #expect(tower.resolution.lacksSuitableRoute)
    }

    @Test("a port of another device taking or leaving the input is a new or old device, though the output stays (issue 14)")
    func anotherDevicesInput() throws {
        var tower = try activeTower(laptop, .playAndRecord)
        #expect(tower.route == Route(inputs: ["mic"], outputs: ["spk"]))
        let plugged = try tower.addPorts([port("usbmic", .usbAudio, device: "usb1", direction: .input)])
        #expect(plugged.change?.uids == RouteChange(reason: .newDeviceAvailable, previous: Route(inputs: ["mic"], outputs: ["spk"]), current: Route(inputs: ["usbmic"], outputs: ["spk"])))
        let unplugged = try tower.removePorts(["usbmic"])
        #expect(unplugged.change?.uids == RouteChange(reason: .oldDeviceUnavailable, previous: Route(inputs: ["usbmic"], outputs: ["spk"]), current: Route(inputs: ["mic"], outputs: ["spk"])))
    }

    @Test("the built-in mic leaving while the output is on line out is oldDeviceUnavailable (issue 14)")
    func inputLeavesBesideLineOut() throws {
        var tower = try activeTower(laptop + [port("line", .lineOut, sequence: 5)], .playAndRecord)
        #expect(tower.route == Route(inputs: ["mic"], outputs: ["line"]))
        let outcome = try tower.removePorts(["mic"])
        #expect(outcome.change?.uids == RouteChange(reason: .oldDeviceUnavailable, previous: Route(inputs: ["mic"], outputs: ["line"]), current: Route(outputs: ["line"])))
    }

    @Test("an update that moves the route to other devices is the arrival or departure it amounts to")
    func updateMovingToAnotherDevice() throws {
        var tower = try activeTower(laptop + [port("le", .bluetoothLE, device: "buds", direction: .output, sequence: 5)], .playAndRecord, options: .allowBluetooth)
        #expect(tower.route == Route(inputs: ["mic"], outputs: ["le"]))
        // The headset's microphone transport appears: the input moves to the headset.
        let gained = try tower.updatePort(port("le", .bluetoothLE, device: "buds", direction: .duplex))
        #expect(gained.change?.uids == RouteChange(reason: .newDeviceAvailable, previous: Route(inputs: ["mic"], outputs: ["le"]), current: Route(inputs: ["le"], outputs: ["le"])))
        let lost = try tower.updatePort(port("le", .bluetoothLE, device: "buds", direction: .output))
        #expect(lost.change?.uids == RouteChange(reason: .oldDeviceUnavailable, previous: Route(inputs: ["le"], outputs: ["le"]), current: Route(inputs: ["mic"], outputs: ["le"])))
    }

    @Test("outside port events an empty needed side names the reason, even for an override (docs/decisions.md)")
    func noSuitableRouteOutranksOverride() throws {
        var tower = try activeTower([port("spk", .builtInSpeaker), port("rcv", .builtInReceiver)], .playAndRecord)
        #expect(tower.route == Route(outputs: ["rcv"]))
        let outcome = try tower.overrideOutput(.speaker, session: "app")
        #expect(outcome.change?.uids == RouteChange(reason: .noSuitableRouteForCategory, previous: Route(outputs: ["rcv"]), current: Route(outputs: ["spk"])))
    }

    @Test("silent mode and screen lock never move the route")
    func silentModeKeepsRoute() throws {
        var tower = try activeTower(phone, .soloAmbient)
        #expect(tower.setSilentMode(true).change == nil)
        #expect(tower.setScreenLocked(true).change == nil)
        #expect(tower.route == Route(outputs: ["spk"]))
    }
}

@Suite("Spec §1/§6: ports and sequences")
struct PortSequenceTests {
    @Test("a new port gets a sequence larger than every earlier one: last in wins, even on re-plug")
    func lastInWins() throws {
        var tower = try activeTower(laptop, .playback)
        _ = try tower.addPorts([port("usb", .usbAudio, direction: .output)])
        _ = try tower.addPorts([port("hp", .headphones)])
        #expect(tower.port("hp")!.sequence > tower.port("usb")!.sequence)
        #expect(tower.port("usb")!.sequence > tower.port("mic")!.sequence)
        #expect(tower.route == Route(outputs: ["hp"]))
        _ = try tower.removePorts(["usb"])
        let outcome = try tower.addPorts([port("usb", .usbAudio, direction: .output)])
        #expect(outcome.change?.reason == .newDeviceAvailable)
        #expect(tower.route == Route(outputs: ["usb"]))
    }

    @Test("a restored port keeps the sequence its uid had (daemon restart)")
    func restoring() throws {
        var tower = Tower()
        _ = try tower.addPorts([port("a", .headphones), port("b", .usbAudio, direction: .output)])
        let memory = tower.sequences
        var restarted = Tower(sequences: memory)
        _ = try restarted.addPorts([port("b", .usbAudio, direction: .output), port("a", .headphones)], restoring: true)
        #expect(restarted.port("a")?.sequence == tower.port("a")?.sequence)
        #expect(restarted.port("b")?.sequence == tower.port("b")?.sequence)
        #expect(restarted.route == tower.route)
        _ = try restarted.addPorts([port("c", .HDMI)])
        #expect(restarted.port("c")!.sequence > restarted.port("b")!.sequence)
    }

    @Test("an explicit sequence is kept and later arrivals number above it")
    func explicitSequence() throws {
        var tower = Tower()
        _ = try tower.addPorts([port("a", .headphones, sequence: 40)])
        _ = try tower.addPorts([port("b", .headphones)])
        #expect(tower.port("a")?.sequence == 40)
        #expect(tower.port("b")!.sequence > 40)
    }

    @Test("a duplicate or unknown port is refused and nothing changes")
    func refusedPorts() throws {
        var tower = try activeTower(phone + wiredHeadset(sequence: 10), .playAndRecord)
        let before = TowerSnapshot(tower)
        expectError(.duplicatePort("hp")) { try tower.addPorts([port("usb", .usbAudio), port("hp", .headphones)]) }
        expectError(.duplicatePort("x")) { try tower.addPorts([port("x", .usbAudio), port("x", .headphones)]) }
        expectError(.unknownPort("nope")) { try tower.removePorts(["hp", "nope"]) }
        #expect(TowerSnapshot(tower) == before)
    }

    @Test("a uid listed twice in one removal removes the port once")
    func repeatedRemoval() throws {
        var tower = try activeTower(phone + wiredHeadset(sequence: 10), .playAndRecord)
        let outcome = try tower.removePorts(["hp", "hp"])
        #expect(outcome.portChanges.map(\.port.uid) == ["hp"])
        #expect(tower.port("hp") == nil)
        #expect(tower.route == Route(inputs: ["hsmic"], outputs: ["rcv"]))
    }

    @Test("watcher events apply as the matching tower calls")
    func portEvents() throws {
        var tower = try activeTower(laptop, .playback)
        #expect(try tower.apply(.added([port("hp", .headphones)])).change?.reason == .newDeviceAvailable)
        #expect(try tower.apply(.updated(port("hp", .headphones, alsa: "plughw:CARD=PCH,DEV=0"))).change?.reason == .routeConfigurationChange)
        #expect(try tower.apply(.removed(["hp"])).change?.reason == .oldDeviceUnavailable)
    }
}
