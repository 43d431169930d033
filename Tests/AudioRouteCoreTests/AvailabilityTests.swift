// The availability filter between the watchers and the tower: unavailable ports are known
// and listed, never routed; a port turning unavailable leaves the tower as an unplugged one
// does, and turning available again arrives as a plugged one does.
@testable import AudioRouteCore
import FoundationEssentials
import PropertyBased
import Testing

private func jack(_ uid: String, _ type: PortType, _ availability: Port.Availability, name: String? = nil) -> Port {
    Port(uid: uid, type: type, device: "jack", name: name, availability: availability)
}

@Suite("Availability filter")
struct AvailabilityFilterTests {
    @Test("an unavailable port is known and listed, and never given to the tower")
    func unavailablePortsAreListedOnly() throws {
        var filter = AvailabilityFilter()
        let speaker = port("spk", .builtInSpeaker, device: "internal")
        let headphones = jack("hp", .headphones, .unavailable)
        let hdmi = Port(uid: "hdmi", type: .HDMI, device: "gpu", priority: -1, availability: .unknown)
        #expect(try filter.apply(.added([speaker, headphones, hdmi])) == .added([speaker, hdmi]))
        #expect(filter.ports == [speaker, headphones, hdmi])
        #expect(filter.usablePorts == [speaker, hdmi])
        // A device whose every port is unavailable gives the tower nothing at all.
        #expect(try filter.apply(.added([jack("line", .lineOut, .unavailable)])) == nil)
        #expect(filter.ports.map(\.uid) == ["spk", "hp", "hdmi", "line"])
    }

    @Test("turning unavailable is a removal, available again an arrival; unavailable to unavailable is the listing's only")
    func transitions() throws {
        var filter = AvailabilityFilter()
        _ = try filter.apply(.added([jack("hp", .headphones, .unavailable), jack("hsmic", .headsetMic, .unavailable)]))
        let plugged = jack("hp", .headphones, .available)
        #expect(try filter.apply(.updated(plugged)) == .added([plugged]))
        let unknown = jack("hp", .headphones, .unknown)
        #expect(try filter.apply(.updated(unknown)) == .updated(unknown))
        #expect(try filter.apply(.updated(jack("hp", .headphones, .unavailable))) == .removed(["hp"]))
        let renamed = jack("hsmic", .headsetMic, .unavailable, name: "Front Mic")
        #expect(try filter.apply(.updated(renamed)) == nil)
        #expect(filter.port("hsmic") == renamed)
        // A port keeps its place in the listing when its availability changes.
        #expect(filter.ports.map(\.uid) == ["hp", "hsmic"])
        // Removing an unavailable port removes it from the listing only; a usable one leaves the tower too.
        _ = try filter.apply(.updated(plugged))
        #expect(try filter.apply(.removed(["hsmic", "hp", "hp"])) == .removed(["hp"]))
        #expect(filter.ports.isEmpty)
    }

    @Test("what the tower would refuse is refused, and changes nothing")
    func refusals() throws {
        var filter = AvailabilityFilter()
        _ = try filter.apply(.added([port("spk", .builtInSpeaker), jack("hp", .headphones, .unavailable)]))
        let before = filter
        // Known as unavailable is still known: announcing it again is a duplicate, not a plug.
        #expect(throws: SessionError.duplicatePort("hp")) { try filter.apply(.added([jack("hp", .headphones, .available)])) }
        #expect(throws: SessionError.duplicatePort("x")) {
            try filter.apply(.added([jack("x", .lineOut, .unavailable), jack("x", .lineOut, .available)]))
        }
        #expect(throws: SessionError.unknownPort("nope")) { try filter.apply(.removed(["hp", "nope"])) }
        #expect(throws: SessionError.unknownPort("nope")) { try filter.apply(.updated(jack("nope", .headphones, .available))) }
        #expect(filter == before)
    }

    @Test("through the tower, a jack turning unavailable is an unplug and available again a plug")
    func throughTheTower() throws {
        var filter = AvailabilityFilter()
        var tower = Tower()
        func apply(_ event: PortEvent) throws -> TowerOutcome? {
            guard let usable = try filter.apply(event) else { return nil }
            return try tower.apply(usable)
        }
        _ = try apply(.added(laptop.map { var p = $0; p.sequence = 0; return p } + [jack("hp", .headphones, .available)]))
        _ = try tower.openSession(Session(id: "music", configuration: try SessionConfiguration(category: .playback)))
        _ = try tower.setActive(true, session: "music")
        #expect(tower.route.outputs == ["hp"])
        let plugSequence = try #require(tower.port("hp")).sequence

        // Unplugged: the route leaves the headphones and the music is told it lost its route.
        let unplug = try #require(try apply(.updated(jack("hp", .headphones, .unavailable))))
        #expect(unplug.change?.reason == .oldDeviceUnavailable)
        #expect(unplug.change?.previousPorts.outputs.map(\.uid) == ["hp"])
        #expect(unplug.portChanges.map(\.kind) == [.removed])
        #expect(unplug.events.map(\.kind) == [.interruptionBegan(reason: .routeDisconnected)])
        #expect(tower.port("hp") == nil)
        #expect(tower.route.outputs == ["spk"])

        // Plugged again: a new connection, last in wins again.
        _ = try tower.setActive(true, session: "music")
        let plug = try #require(try apply(.updated(jack("hp", .headphones, .available))))
        #expect(plug.change?.reason == .newDeviceAvailable)
        #expect(plug.portChanges.map(\.kind) == [.added])
        #expect(try #require(tower.port("hp")).sequence > plugSequence)
        #expect(tower.route.outputs == ["hp"])
    }
}

// MARK: Properties

/// The ports the property draws from: a laptop's built-ins, a headset jack, line out, HDMI and USB.
private let availabilityPool: [Port] = [
    port("spk", .builtInSpeaker, device: "internal"), port("mic", .builtInMic, device: "internal"),
    port("hp", .headphones, device: "jack"), port("hsmic", .headsetMic, device: "jack"), port("line", .lineOut, device: "line"),
    port("hdmi", .HDMI, device: "gpu"), port("usb", .usbAudio, device: "usb", direction: .duplex),
]

struct AvailabilityRun: Sendable, CustomStringConvertible {
    var category: Category
    var events: [PortEvent]
    var description: String { "\(category.rawValue): \(events)" }
}

/// Random watcher events over the pool, each port with a random availability. Some are refused
/// on purpose (a known uid added again, an unknown one removed or updated).
func randomAvailabilityRun(using rng: inout some RandomNumberGenerator) -> AvailabilityRun {
    func somePort() -> Port {
        var chosen = availabilityPool.randomElement(using: &rng)!
        chosen.availability = Port.Availability.allCases.randomElement(using: &rng)!
        chosen.alsa = ["hw:0", "hw:1", nil].randomElement(using: &rng)!
        return chosen
    }
    let events: [PortEvent] = (0..<Int.random(in: 1...40, using: &rng)).map { _ in
        switch Int.random(in: 0..<10, using: &rng) {
        case 0, 1, 2: return .added((0..<Int.random(in: 1...2, using: &rng)).map { _ in somePort() })
        case 3, 4: return .removed((0..<Int.random(in: 1...2, using: &rng)).map { _ in Int.random(in: 0..<6, using: &rng) == 0 ? "nope" : availabilityPool.randomElement(using: &rng)!.uid })
        default: return .updated(somePort())
        }
    }
    return AvailabilityRun(category: [.playback, .playAndRecord, .record].randomElement(using: &rng)!, events: events)
}

let availabilityRuns = Generator<AvailabilityRun, Shrink.None<AvailabilityRun>> { rng in randomAvailabilityRun(using: &rng) }

/// What the tower must be given for `event` on `known`, worked out from the usable ports
/// before and after (not from the event's kind); nil if the event must be refused.
private func expectedTowerEvent(_ event: PortEvent, known: [Port]) -> PortEvent?? {
    let knownUIDs = known.map(\.uid)
    switch event {
    case .added(let new):
        let uids = new.map(\.uid)
        if uids.contains(where: knownUIDs.contains) || Set(uids).count != uids.count { return nil }
    case .removed(let uids): if !uids.allSatisfy(knownUIDs.contains) { return nil }
    case .updated(let port): if !knownUIDs.contains(port.uid) { return nil }
    // Not a port: passed on whatever is known.
    case .inputMuted: return .some(event)
    }
    var after = known
    after.apply(event)
    let usableBefore = known.filter(\.availability.isUsable)
    let usableAfter = after.filter(\.availability.isUsable)
    var arrived: [Port] = []
    var gone: [String] = []
    var changed: [Port] = []
    // In the event's order, as the watcher gave it.
    let order: [String]
    switch event {
    case .added(let new): order = new.map(\.uid)
    case .removed(let uids): order = uids
    case .updated(let port): order = [port.uid]
    case .inputMuted: order = []
    }
    for uid in order {
        let before = usableBefore.first { $0.uid == uid }
        let now = usableAfter.first { $0.uid == uid }
        switch (before, now) {
        case (nil, let now?): if !arrived.contains(now) { arrived.append(now) }
        case (.some, nil): if !gone.contains(uid) { gone.append(uid) }
        // Only an update keeps a usable port usable: the tower gets it even if nothing changed, as it always has.
        case (.some, let now?): changed.append(now)
        case (nil, nil): break
        }
    }
    let kinds = [!arrived.isEmpty, !gone.isEmpty, !changed.isEmpty].filter { $0 }.count
    precondition(kinds <= 1, "one watcher event moves the tower one way")
    if !arrived.isEmpty { return .some(.added(arrived)) }
    if !gone.isEmpty { return .some(.removed(gone)) }
    if let port = changed.first { return .some(.updated(port)) }
    return .some(nil)
}

/// A port without what the tower assigns (sequence), to compare the tower's copy with the watcher's.
private func announced(_ port: Port) -> Port {
    var port = port
    port.sequence = 0
    return port
}

@Suite("Properties: availability")
struct AvailabilityProperties {
    @Test("the tower's ports are the known ports that are not unavailable, at every step; arrivals and removals as a plug and an unplug")
    func towerSeesUsablePorts() async {
        await propertyCheck(count: 500, input: availabilityRuns) { run in
            var filter = AvailabilityFilter()
            var tower = Tower()
            do {
                _ = try tower.openSession(Session(id: "app", configuration: try SessionConfiguration(category: run.category)))
                _ = try tower.setActive(true, session: "app")
            } catch {
                Issue.record("\(error)")
                return
            }
            for event in run.events {
                let before = filter
                let counter = tower.sequences.counter
                let usableBefore = Set(tower.ports.map(\.uid))
                let expected = expectedTowerEvent(event, known: filter.ports)
                let output: PortEvent?
                do {
                    output = try filter.apply(event)
                } catch {
                    #expect(expected == nil, "\(event) refused with \(error)")
                    #expect(filter == before, "a refused \(event) changed the filter")
                    continue
                }
                #expect(expected == .some(output), "\(event) on \(before.ports.map { "\($0.uid):\($0.availability)" })")
                var outcome = TowerOutcome()
                if let output {
                    do {
                        outcome = try tower.apply(output)
                    } catch {
                        Issue.record("the tower refused \(output), which the filter passed: \(error)")
                    }
                }
                // The tower holds exactly the usable known ports, as announced (but for their sequence).
                #expect(Set(tower.ports.map(\.uid)) == Set(filter.usablePorts.map(\.uid)), "after \(event)")
                for port in filter.usablePorts {
                    #expect(tower.port(port.uid).map(announced) == announced(port), "\(port.uid) after \(event)")
                }
                #expect(!tower.ports.contains { $0.availability == .unavailable })
                // Arrivals and removals are reported as a plug's and an unplug's.
                let usableAfter = Set(tower.ports.map(\.uid))
                let added = outcome.portChanges.filter { $0.kind == .added }.map(\.port.uid)
                let removed = outcome.portChanges.filter { $0.kind == .removed }.map(\.port.uid)
                #expect(Set(added) == usableAfter.subtracting(usableBefore), "\(event)")
                #expect(Set(removed) == usableBefore.subtracting(usableAfter), "\(event)")
                // An arrival is a new connection: numbered after everything before it.
                for uid in added { #expect((tower.port(uid)?.sequence ?? 0) > counter, "\(uid) after \(event)") }
                if let change = outcome.change, !added.isEmpty || !removed.isEmpty {
                    let plain: RouteChangeReason = added.isEmpty ? .oldDeviceUnavailable : .newDeviceAvailable
                    #expect([plain, .routeConfigurationChange].contains(change.reason), "\(event): \(change.reason)")
                }
            }
        }
    }

    @Test("the generated runs hold every transition and refusal (the property above is not vacuous)")
    func transitionsAreGenerated() {
        var seen = Set<String>()
        var rng = SplitMix64(seed: 26)
        for _ in 0..<300 {
            var filter = AvailabilityFilter()
            for event in randomAvailabilityRun(using: &rng).events {
                let known = filter
                let output: PortEvent?
                do {
                    output = try filter.apply(event)
                } catch {
                    seen.insert("refused")
                    continue
                }
                switch (event, output) {
                case (.updated(let port), .added?): if known.port(port.uid)?.availability == .unavailable { seen.insert("unavailable -> usable") }
                case (.updated(let port), .removed?): if port.availability == .unavailable { seen.insert("usable -> unavailable") }
                case (.updated, nil): seen.insert("unavailable -> unavailable")
                case (.updated, .updated?): seen.insert("usable -> usable")
                case (.added(let ports), .added(let usable)?): if usable.count < ports.count { seen.insert("added, some unavailable") }
                case (.added, nil): seen.insert("added, all unavailable")
                case (.removed(let uids), _): if uids.contains(where: { known.port($0)?.availability == .unavailable }) { seen.insert("removed unavailable") }
                default: break
                }
            }
        }
        #expect(
            seen == [
                "refused", "unavailable -> usable", "usable -> unavailable", "unavailable -> unavailable", "usable -> usable",
                "added, some unavailable", "added, all unavailable", "removed unavailable",
            ])
    }
}

// MARK: Documents

@Suite("Availability in documents")
struct AvailabilityDocumentTests {
    @Test("Codable: an available port reads and writes as before availability existed; the others carry it")
    func codable() throws {
        let speaker = Port(uid: "spk", type: .builtInSpeaker, device: "pci", sequence: 3, alsa: "dmix:CARD=PCH,DEV=0")
        let written = String(decoding: try JSONEncoder().encode(speaker), as: UTF8.self)
        #expect(!written.contains("availability"), "\(written)")
        let old = #"{"uid":"spk","name":"Speaker","type":"builtInSpeaker","direction":"output","device":"pci","priority":0,"sequence":3,"alsa":"dmix:CARD=PCH,DEV=0"}"#
        #expect(try JSONDecoder().decode(Port.self, from: Data(old.utf8)) == speaker)
        for availability in [Port.Availability.unavailable, .unknown] {
            var port = speaker
            port.availability = availability
            let data = try JSONEncoder().encode(port)
            #expect(String(decoding: data, as: UTF8.self).contains(#""availability":"\#(availability.rawValue)""#))
            #expect(try JSONDecoder().decode(Port.self, from: data) == port)
        }
        let bad = #"{"uid":"x","name":"X","type":"headphones","direction":"output","device":"d","priority":0,"sequence":0,"availability":"plugged"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Port.self, from: Data(bad.utf8)) }
    }

    @Test("Port.json names the availability only when the port is not available; the listing's form always")
    func json() {
        var port = Port(uid: "hdmi", type: .HDMI, device: "gpu", priority: -1)
        let keys = ["uid", "type", "direction", "device", "name", "priority", "sequence", "alsa"]
        #expect(port.json.text == #"{"uid": "hdmi", "type": "HDMI", "direction": "output", "device": "gpu", "name": "HDMI", "priority": -1, "sequence": 0, "alsa": null}"#)
        #expect(port.json(withAvailability: true)["availability"] == "available")
        port.availability = .unknown
        guard case .object(let members) = port.json else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == keys + ["availability"])
        #expect(port.json["availability"] == "unknown")
        #expect(port.json(withAvailability: false)["availability"] == nil)
    }

    @Test("a scenario's port may say its availability; a wrong one is a named fault")
    func scenarioPorts() throws {
        let scenario = try Scenario.parse(
            Array(
                #"{"ports": [{"uid": "hp", "type": "headphones", "device": "jack", "availability": "unavailable"}, {"uid": "hdmi", "type": "HDMI", "device": "gpu", "availability": "unknown"}, {"uid": "spk", "type": "builtInSpeaker", "device": "pci", "availability": "available"}, {"uid": "mic", "type": "builtInMic", "device": "pci"}]}"#
                    .utf8))
        #expect(scenario.ports.map(\.availability) == [.unavailable, .unknown, .available, .available])
        #expect(throws: ScenarioError(path: "ports[0].availability", message: #"unknown availability "plugged"; one of: available, unavailable, unknown"#)) {
            try Scenario.parse(Array(#"{"ports": [{"uid": "hp", "type": "headphones", "device": "jack", "availability": "plugged"}]}"#.utf8))
        }
        #expect(throws: ScenarioError(path: "ports[0].availability", message: "expected a string, found a boolean")) {
            try Scenario.parse(Array(#"{"ports": [{"uid": "hp", "type": "headphones", "device": "jack", "availability": true}]}"#.utf8))
        }
    }

    @Test("simulate: an unavailable jack is never routed; plugging it is an update to available, unplugging one to unavailable")
    func simulation() throws {
        let document = #"""
            {"ports": [{"uid": "spk", "type": "builtInSpeaker", "device": "pci"},
                       {"uid": "hp", "type": "headphones", "device": "jack", "availability": "unavailable"}],
             "sessions": [{"id": "music", "category": "playback"}],
             "steps": [{"activate": "music"},
                       {"update": {"uid": "hp", "type": "headphones", "device": "jack", "availability": "available"}},
                       {"update": {"uid": "hp", "type": "headphones", "device": "jack", "availability": "unavailable"}},
                       {"setPriority": {"uid": "hp", "priority": 5}},
                       {"add": {"uid": "hp", "type": "headphones", "device": "jack"}},
                       {"remove": "hp"},
                       {"add": {"uid": "hp", "type": "headphones", "device": "jack"}}]}
            """#
        var lines: [JSON] = []
        _ = try Simulator.run(try Scenario.parse(Array(document.utf8))) { lines.append(try! JSON.parse($0)) }
        #expect(lines.count == 8)
        #expect(lines[0]["route"] == Route(outputs: ["spk"]).json)
        #expect(lines[2]["route"] == Route(outputs: ["hp"]).json)
        #expect(lines[2]["change"]?["reason"] == "newDeviceAvailable")
        #expect(lines[3]["route"] == Route(outputs: ["spk"]).json)
        #expect(lines[3]["change"]?["reason"] == "oldDeviceUnavailable")
        #expect(lines[3]["events"] == .array([.object([.init("session", "music"), .init("type", "interruptionBegan"), .init("reason", "routeDisconnected")])]))
        // An unavailable port is not in the tower: a priority for it is refused there...
        #expect(lines[4]["error"] == "unknownPort")
        // ...and it is still known: announcing it again is a duplicate, removing it is not.
        #expect(lines[5]["error"] == "duplicatePort")
        #expect(lines[6]["error"] == .null)
        #expect(lines[6]["change"] == .null)
        #expect(lines[7]["change"]?["reason"] == "newDeviceAvailable")
    }
}
