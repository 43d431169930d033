import AudioRouteCore
import Logging
import Synchronization
import Testing

@testable import AudioRouteWatchers
@testable import AudioRouteDBus
import AudioRouteSystem

/// Collects log records, to check that each fault is logged once and at which level.
final class LogCapture: Sendable {
    let records = Mutex<[(level: Logger.Level, message: String)]>([])

    var logger: Logger {
        var logger = Logger(label: "test") { _ in Handler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    func count(_ level: Logger.Level, containing text: String) -> Int {
        records.withLock { $0.filter { $0.level == level && $0.message.contains(text) }.count }
    }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            capture.records.withLock { $0.append((event.level, "\(event.message)")) }
        }
    }
}

/// Applies events to a state and, through an availability filter, to a tower, as the CLI and
/// the daemon do; the filter and the tower throw on any inconsistency (duplicate add, unknown
/// removal), which would fail the test. `events` are the state's, unfiltered.
struct Harness {
    var state: UdevPortState
    var known = AvailabilityFilter()
    var tower = Tower()
    var events: [PortEvent] = []

    init(logger: Logger) { state = UdevPortState(logger: logger) }

    mutating func apply(_ event: HardwareEvent) throws {
        for portEvent in state.apply(event) {
            events.append(portEvent)
            if let usable = try known.apply(portEvent) { _ = try tower.apply(usable) }
        }
    }

    var uids: Set<String> { Set(tower.ports.map(\.uid)) }

    /// The uids of the ports a card alone implies.
    static func portUIDs(of card: CardRecord) -> Set<String> {
        Set(CardClassifier.classify(card, jacks: []).ports.map(\.uid))
    }
}

@Suite struct PortStateTests {
    /// After lost uevents the loop re-enumerates (`.resynced`): whatever the events had
    /// built, the announced ports become exactly what the re-enumerated cards and jacks imply,
    /// announced as normal port events the tower accepts, with one warning per overflow.
    @Test func aResyncAnnouncesTheDifferenceFromTheReenumeration() throws {
        let log = LogCapture()
        var h = Harness(logger: log.logger)
        let laptop = Cards.hdaLaptop()
        let headphone = Cards.jack(laptop, "HDA Intel Front Headphone", event: 9, supported: .headphoneInsert, state: .headphoneInsert)
        try h.apply(.card(laptop))
        try h.apply(.jack(headphone))
        try h.apply(.card(Cards.usbHeadset()))
        try h.apply(.card(Cards.webcam()))
        let before = h.events.count

        // Meanwhile, unseen: the headset left, a DAC came, the headphones were pulled,
        // the webcam's priority changed; the laptop card is as it was.
        var pulled = headphone
        pulled.state = []
        var webcam = Cards.webcam()
        webcam.properties["AUDIOROUTE_PRIORITY"] = "70"
        let cards = [laptop, Cards.usbDAC(), webcam]
        try h.apply(.resynced(cards: cards, jacks: [pulled]))

        // What a watcher started now would announce.
        var fresh = Harness(logger: LogCapture().logger)
        try fresh.apply(.jack(pulled))
        for card in cards { try fresh.apply(.card(card)) }
        #expect(h.uids == fresh.uids)
        // Field for field, but for the tower's plug order (sequence), which differs by history.
        let unsequenced: (Port) -> Port = { port in
            var port = port
            port.sequence = 0
            return port
        }
        #expect(Set(h.tower.ports.map(unsequenced)) == Set(fresh.tower.ports.map(unsequenced)))
        #expect(Set(h.state.ports) == Set(fresh.state.ports))
        let events = Array(h.events[before...])
        let headset = Cards.usbHeadset()
        let gone = Harness.portUIDs(of: headset)
        #expect(events.contains { if case .removed(let uids) = $0 { Set(uids).isSuperset(of: gone) } else { false } }, "\(events)")
        #expect(events.contains { if case .added(let ports) = $0 { Set(ports.map(\.uid)) == Harness.portUIDs(of: Cards.usbDAC()) } else { false } }, "\(events)")
        #expect(events.contains { if case .updated(let port) = $0 { port.priority == 70 } else { false } }, "\(events)")
        // The pulled headphones stay known, unavailable: an update, and out of the tower.
        let headphones = "pci-0000:00:1b.0/headphones"
        #expect(events.contains { if case .updated(let port) = $0 { port.uid == headphones && port.availability == .unavailable } else { false } }, "\(events)")
        #expect(h.known.port(headphones)?.availability == .unavailable && !h.uids.contains(headphones))
        #expect(log.count(.warning, containing: "uevents were lost") == 1)

        // A second overflow that finds nothing new: no port events, one more warning.
        try h.apply(.resynced(cards: cards, jacks: [pulled]))
        #expect(h.events.count == before + events.count)
        #expect(log.count(.warning, containing: "uevents were lost") == 2)

        // Events after a resync apply to what it found: the DAC leaves normally.
        try h.apply(.cardRemoved(syspath: Cards.usbDAC().syspath, action: "remove"))
        #expect(!h.uids.isEmpty && h.uids == fresh.uids.subtracting(Harness.portUIDs(of: Cards.usbDAC())))
    }

    @Test func arrivalsAreOneEventPerDeviceAndRemovalsClean() throws {
        var h = Harness(logger: LogCapture().logger)
        try h.apply(.card(Cards.usbHeadset()))
        #expect(h.events.count == 1)
        guard case .added(let ports) = h.events.first else { Issue.record("expected added"); return }
        #expect(ports.count == 2)
        try h.apply(.cardRemoved(syspath: Cards.usbHeadset().syspath, action: "remove"))
        #expect(h.events.last == .removed(ports.map(\.uid)))
        #expect(h.uids.isEmpty)
    }

    @Test func cardWaitsForItsControlDeviceThenArrivesWhole() throws {
        var h = Harness(logger: LogCapture().logger)
        var card = Cards.usbHeadset()
        card.hasControl = false
        card.pcms = []
        try h.apply(.card(card))
        card.pcms = [PCMDevice(device: 0, playback: true)]
        try h.apply(.card(card))
        card.pcms.append(PCMDevice(device: 0, playback: false))
        try h.apply(.card(card))
        #expect(h.events.isEmpty)
        card.hasControl = true
        try h.apply(.card(card))
        #expect(h.events.count == 1)
        #expect(h.uids.count == 2)
        // The kernel disconnects the control device first on unplug: everything leaves at once.
        card.hasControl = false
        try h.apply(.card(card))
        #expect(h.events.count == 2)
        #expect(h.uids.isEmpty)
    }

    @Test func badInputIsLoggedOnceAndLeavesTheSetExact() throws {
        let log = LogCapture()
        var h = Harness(logger: log.logger)
        let headset = Cards.usbHeadset()
        try h.apply(.card(headset))
        let expected = h.uids

        // A duplicate add and a change with nothing new: no events.
        try h.apply(.card(headset))
        try h.apply(.card(headset))
        #expect(h.events.count == 1)
        #expect(log.count(.info, containing: "nothing new") == 1)

        // A remove for an unknown device, twice.
        try h.apply(.cardRemoved(syspath: "/sys/devices/virtual/sound/card9", action: "remove"))
        try h.apply(.cardRemoved(syspath: "/sys/devices/virtual/sound/card9", action: "remove"))
        #expect(log.count(.info, containing: "unknown card") == 1)

        // A card without PCM children.
        var empty = Cards.hdaLaptop()
        empty.pcms = []
        try h.apply(.card(empty))
        try h.apply(.card(empty))
        #expect(log.count(.notice, containing: "no PCM devices") == 1)

        // Garbage and non-UTF-8 properties.
        var garbage = Cards.webcam()
        garbage.properties["AUDIOROUTE_PRIORITY"] = "\u{FFFD}\u{FFFD}"
        garbage.faults = ["property ID_MODEL is not valid UTF-8"]
        garbage.properties["ID_MODEL"] = "Cam\u{FFFD}"
        try h.apply(.card(garbage))
        try h.apply(.card(garbage))
        #expect(log.count(.warning, containing: "not valid UTF-8") == 1)
        #expect(log.count(.warning, containing: "AUDIOROUTE_PRIORITY") == 1)
        #expect(h.tower.port("usb-046d_0804_8C1CA450-02/input")?.name == "Webcam C250")

        // A jack whose card is gone.
        let laptop = Cards.hdaLaptop()
        try h.apply(.card(laptop))
        try h.apply(.cardRemoved(syspath: laptop.syspath, action: "remove"))
        let orphan = Cards.jack(laptop, "HDA Intel Front Headphone", event: 12, supported: .headphoneInsert, state: .headphoneInsert)
        try h.apply(.jack(orphan))
        try h.apply(.jackState(syspath: orphan.syspath, state: []))
        try h.apply(.jackState(syspath: orphan.syspath, state: .headphoneInsert))
        #expect(log.count(.warning, containing: "which is gone") == 1)

        // An input device that is not a switch (the loop reports it as a fault).
        try h.apply(.fault(key: "event3#not-switch", message: "input device \"Keys\" on card0 is not a jack switch device: ignored"))
        try h.apply(.fault(key: "event3#not-switch", message: "input device \"Keys\" on card0 is not a jack switch device: ignored"))
        #expect(log.count(.notice, containing: "not a jack switch") == 1)

        // Switch state and removal for jacks never seen.
        try h.apply(.jackState(syspath: "/sys/x/event99", state: .headphoneInsert))
        try h.apply(.jackRemoved(syspath: "/sys/x/event99"))
        #expect(log.count(.info, containing: "unknown jack") == 2)

        #expect(h.uids == expected.union(["usb-046d_0804_8C1CA450-02/input"]))
        #expect(Set(h.state.usablePorts.map(\.uid)) == h.uids)
        #expect(Set(h.state.ports.map(\.uid)) == Set(h.known.ports.map(\.uid)))
    }

    @Test func jackFollowsItsSwitchesAndTheHeadsetMovesTogether() throws {
        var h = Harness(logger: LogCapture().logger)
        let card = Cards.hdaLaptop()
        let both: SwitchSet = [.headphoneInsert, .microphoneInsert]
        let jack = Cards.jack(card, "Headset Jack", event: 15, supported: both)
        try h.apply(.jack(jack))
        try h.apply(.card(card))
        _ = try h.tower.openSession(Session(id: "call"))
        _ = try h.tower.setCategory(.playAndRecord, session: "call")
        _ = try h.tower.setActive(true, session: "call")
        #expect(h.tower.route == Route(inputs: ["pci-0000:00:1b.0/mic"], outputs: ["pci-0000:00:1b.0/speaker"]))

        // The jack, readable and empty, makes both ports known and unavailable: never a route.
        #expect(h.known.ports.filter { $0.device == "pci-0000:00:1b.0/jack" }.map { "\($0.uid) \($0.availability.rawValue)" } == [
            "pci-0000:00:1b.0/headphones unavailable", "pci-0000:00:1b.0/headset-mic unavailable",
        ])

        // Plugged: each port turns available, one update each, which the filter gives the tower
        // as arrivals: the headphones take the output, then the headset mic the input, each a
        // new device for its side (docs/decisions.md, "A port's availability").
        let before = h.events.count
        let plugged = h.state.apply(.jackState(syspath: jack.syspath, state: both))
        #expect(plugged.count == 2)
        var reasons: [RouteChangeReason?] = []
        for event in plugged {
            guard case .updated(let port) = event else { Issue.record("not an update: \(event)"); continue }
            #expect(port.availability == .available)
            let usable = try h.known.apply(event)
            guard case .added(let arrived)? = usable else { Issue.record("not an arrival for the tower: \(String(describing: usable))"); continue }
            #expect(arrived.map(\.uid) == [port.uid])
            reasons.append(try h.tower.apply(.added(arrived)).change?.reason)
        }
        #expect(reasons == [.newDeviceAvailable, .newDeviceAvailable])
        #expect(h.tower.route == Route(inputs: ["pci-0000:00:1b.0/headset-mic"], outputs: ["pci-0000:00:1b.0/headphones"]))
        #expect(h.events.count == before)

        // The jack device gone: nothing is known of the jack, and both ports go together.
        let removed = h.state.apply(.jackRemoved(syspath: jack.syspath))
        #expect(removed == [.removed(["pci-0000:00:1b.0/headphones", "pci-0000:00:1b.0/headset-mic"])])
        let filtered = try h.known.apply(removed[0])
        #expect(filtered == removed[0])
        let back = try h.tower.apply(removed[0])
        #expect(back.change?.reason == .oldDeviceUnavailable)
        #expect(h.tower.route == Route(inputs: ["pci-0000:00:1b.0/mic"], outputs: ["pci-0000:00:1b.0/speaker"]))
    }

    @Test func configurationChangesAreUpdates() throws {
        var h = Harness(logger: LogCapture().logger)
        var card = Cards.usbDAC()
        try h.apply(.card(card))
        card.properties["AUDIOROUTE_ALSA_PCM"] = "routetest"
        try h.apply(.card(card))
        guard case .updated(let port) = h.events.last else { Issue.record("expected an update"); return }
        #expect(port.alsa == "routetest")
    }

    @Test func uidClashesAcrossCardsAreDropped() throws {
        let log = LogCapture()
        var h = Harness(logger: log.logger)
        let a = Cards.usbDAC()
        var b = a
        b.syspath = "/sys/devices/pci0000:00/0000:00:12.0/usb2/2-5/2-5:1.0/sound/card6"
        try h.apply(.card(a))
        try h.apply(.card(b))
        #expect(h.uids.count == 1)
        #expect(log.count(.warning, containing: "already owned") == 1)
    }

    @Test func stormOfAddsAndRemovesEndsExact() throws {
        var h = Harness(logger: LogCapture().logger)
        let cards = [Cards.usbHeadset(), Cards.usbDAC(), Cards.webcam(), Cards.gpuHDMI()]
        var generator = SystemRandomNumberGenerator()
        var present: Set<String> = []
        for _ in 0..<2000 {
            let card = cards.randomElement(using: &generator)!
            if Bool.random(using: &generator) {
                try h.apply(.card(card))
                present.insert(card.syspath)
            } else {
                try h.apply(.cardRemoved(syspath: card.syspath, action: "remove"))
                present.remove(card.syspath)
            }
        }
        let expected = Set(cards.filter { present.contains($0.syspath) }.flatMap { CardClassifier.classify($0).ports.map(\.uid) })
        #expect(h.uids == expected)
    }
}
