import AudioRouteSystem
import AudioRouteDBus
import AudioRouteCore
import Logging
import AudioRouteUCMHelper

/// A card, its jacks, and how they were classified.
public struct CardExplanation: Sendable, Hashable {
    public var card: CardRecord
    public var jacks: [JackRecord]
    public var classification: CardClassification
}

/// The port set that the current cards and jacks imply, kept by diffing.
///
/// Every hardware event replaces a snapshot (a card, a jack, a jack's switches);
/// the affected card is re-classified, and the difference from what was announced
/// becomes `PortEvent`s: removals first, then updates, then one `.added` with all
/// new ports of the card (so a headset's mic and earphones arrive together).
/// Whatever order or duplication events come in, the announced set is exactly
/// what the surviving devices imply. Oddities are logged once per device and fault.
public struct UdevPortState: Sendable {
    /// Cards by syspath.
    public private(set) var cards: [String: CardRecord] = [:]
    /// Jack switch devices by syspath.
    public private(set) var jacks: [String: JackRecord] = [:]
    /// Ports announced, per card syspath, in announcement order.
    public private(set) var announced: [String: [Port]] = [:]
    /// Which card announced each uid (uids are unique across cards).
    private var owners: [String: String] = [:]
    /// Cards seen and then removed: a jack event for one of them is a fault.
    private var removedCards: Set<String> = []
    private var loggedKeys: Set<String> = []
    /// Cards whose ports come from their UCM helper (docs/ucm.md), by syspath.
    public private(set) var ucmCards: [String: UCMCard] = [:]
    /// UCM cards whose helper failed or ended: udev's ports until the card goes.
    private var ucmFailed: Set<String> = []
    /// The device of each card's built-in mic announced muted (`.inputMuted`), by card syspath.
    private var mutedMics: [String: String] = [:]
    /// The control that muted each UCM card's built-in mic, while it is muted, by card syspath.
    private var mutedControls: [String: String] = [:]
    /// Whether UCM candidates wait for their helper (the daemon), or keep udev's ports (no helpers).
    let usesUCMHelpers: Bool
    let logger: Logger

    /// - Parameter usesUCMHelpers: a card in `ucmCandidates` announces no port until its helper
    ///   answers (`.ucm`): the UCM ports then, or udev's if it failed. False: udev's at once.
    public init(
        logger: Logger = Logger(label: "audioroute.udev"), usesUCMHelpers: Bool = false
    ) {
        self.logger = logger
        self.usesUCMHelpers = usesUCMHelpers
    }

    /// UCM candidates whose helper has not answered yet (nothing announced for them).
    public var ucmPending: Set<String> { Set(cards.keys.filter(awaitsHelper)) }

    /// Whether `syspath` is a UCM candidate whose helper has not answered yet.
    private func awaitsHelper(_ syspath: String) -> Bool {
        usesUCMHelpers && ucmCards[syspath] == nil && !ucmFailed.contains(syspath) && cards[syspath].flatMap(Self.ucmRequest) != nil
    }

    /// The cards whose ports may come from a UCM profile, by syspath: every complete card that
    /// the properties leave to it, each with the name the UCM helper opens (`hw:<card number>`)
    /// and the uid base of its ports. Whether it has a profile is alsa-lib's to say: the helper
    /// asks it, as PipeWire and PulseAudio do for every card (docs/ucm.md).
    public var ucmCandidates: [String: UCMCardRequest] {
        cards.compactMapValues(Self.ucmRequest)
    }

    /// The UCM helper's request for `card`, or nil when its ports are udev's whatever its
    /// profile: not complete, no usable id or uid, ignored or virtual, declared by
    /// `AUDIOROUTE_PORT_TYPE`, or `AUDIOROUTE_UCM=0`.
    static func ucmRequest(_ card: CardRecord) -> UCMCardRequest? {
        let props = card.properties
        guard card.hasControl, !card.pcms.isEmpty, props[AudioRouteProperty.portType] == nil,
            let id = card.attributes["id"], CardClassifier.isALSAIdentifier(id)
        else { return nil }
        if let ucm = props[AudioRouteProperty.ucm], ["0", "false", "no", "off"].contains(ucm.trimmingASCIIWhitespace().lowercased()) {
            return nil
        }
        if let ignore = props[AudioRouteProperty.ignore] {
            if CardClassifier.isTrue(ignore) { return nil }
        } else if CardClassifier.virtualCard(card) != nil {
            return nil
        }
        guard let base = CardClassifier.uidBase(card, bus: CardClassifier.busName(card), cardID: id, note: { _, _, _ in }) else { return nil }
        // By number, as PipeWire and PulseAudio open UCM: a profile that looks other cards up
        // (`${find-card}`) opens them as hw:<number>, and alsa-lib 1.2.8 crashes when it opens
        // one card under two names (uc_mgr_ctl_add links its list entry twice: docs/ucm.md).
        let name = card.attributes["number"].flatMap { Int($0) }.flatMap { (0..<256).contains($0) ? "hw:\($0)" : nil } ?? "hw:" + id
        let identity = card.info.map { [$0.driver, $0.name, $0.longName, $0.components].joined(separator: "\u{1F}") }
        return UCMCardRequest(name: name, base: base, identity: identity)
    }

    /// Every announced port, card by card in syspath order, the unavailable ones among them.
    public var ports: [Port] {
        announced.keys.sorted().flatMap { announced[$0]! }
    }

    /// The announced ports a route may use (not unavailable).
    public var usablePorts: [Port] { ports.filter(\.availability.isUsable) }

    /// Every card's classification now, with its jacks, in syspath order: what
    /// `audioroute ports --direct --explain` prints.
    public func explanations() -> [CardExplanation] {
        cards.keys.sorted().map { syspath in
            let card = cards[syspath]!
            let cardJacks = jacks.values.filter { $0.cardSyspath == syspath }.sorted { $0.syspath < $1.syspath }
            let result: CardClassification
            if let ucm = ucmCards[syspath] {
                result = Self.ucmClassification(ucm, record: card, jacks: cardJacks)
            } else {
                result = CardClassifier.classify(card, jacks: cardJacks)
            }
            return CardExplanation(card: card, jacks: cardJacks, classification: result)
        }
    }

    /// Applies one hardware event; returns the port events it causes, in order.
    public mutating func apply(_ event: HardwareEvent) -> [PortEvent] {
        switch event {
        case .card(let card):
            if let known = cards[card.syspath], known == card {
                once(.info, "dup:\(card.syspath)", "\(card.sysname): event for a known card with nothing new: ports unchanged")
                return []
            }
            cards[card.syspath] = card
            removedCards.remove(card.syspath)
            return reconcile(card.syspath)

        case .cardRemoved(let syspath, let action):
            ucmCards[syspath] = nil
            ucmFailed.remove(syspath)
            guard cards.removeValue(forKey: syspath) != nil else {
                once(.info, "unknown-remove:\(syspath)", "\(action) for unknown card \(syspath): ignored")
                return []
            }
            removedCards.insert(syspath)
            return reconcile(syspath)

        case .jack(let jack):
            if let known = jacks[jack.syspath], known == jack {
                once(.info, "dup-jack:\(jack.syspath)", "jack \(quotedName(jack.name)): add for a known jack with nothing new: ports unchanged")
                return []
            }
            if cards[jack.cardSyspath] == nil {
                if removedCards.contains(jack.cardSyspath) {
                    once(.warning, "orphan:\(jack.syspath)", "jack \(quotedName(jack.name)) belongs to card \(jack.cardSyspath), which is gone: no ports until the card returns")
                } else {
                    once(.debug, "early:\(jack.syspath)", "jack \(quotedName(jack.name)) seen before its card \(jack.cardSyspath)")
                }
            }
            jacks[jack.syspath] = jack
            return reconcile(jack.cardSyspath)

        case .jackState(let syspath, let state):
            guard var jack = jacks[syspath] else {
                once(.info, "unknown-jack:\(syspath)", "switch state for unknown jack \(syspath): ignored")
                return []
            }
            guard jack.state != state else { return [] }
            logger.debug("jack switches changed", metadata: ["jack": "\(jack.name)", "state": "\(state)"])
            jack.state = state
            jacks[syspath] = jack
            return reconcile(jack.cardSyspath)

        case .jackRemoved(let syspath):
            guard let jack = jacks.removeValue(forKey: syspath) else {
                once(.info, "unknown-jack-remove:\(syspath)", "remove for unknown jack \(syspath): ignored")
                return []
            }
            return reconcile(jack.cardSyspath)

        case .fault(let key, let message):
            once(.notice, key, message)
            return []

        case .ucm(let syspath, let card):
            guard cards[syspath].flatMap(Self.ucmRequest) != nil else {
                once(.info, "ucm-late:\(syspath)", "UCM ports for \(syspath), which is not a UCM card now: ignored")
                return []
            }
            if card == nil {
                guard ucmFailed.insert(syspath).inserted || ucmCards[syspath] != nil else { return [] }
            } else {
                guard ucmCards[syspath] != card else { return [] }
                ucmFailed.remove(syspath)
            }
            ucmCards[syspath] = card
            return reconcile(syspath)

        case .enumerated:
            return []

        case .resynced(let newCards, let newJacks):
            return resync(cards: newCards, jacks: newJacks)
        }
    }

    /// Replaces every card and jack with a re-enumeration's, classifies them all afresh,
    /// and announces the difference from what was announced before, as normal port events.
    private mutating func resync(cards newCards: [CardRecord], jacks newJacks: [JackRecord]) -> [PortEvent] {
        let before = announced
        let present = Set(newCards.map(\.syspath))
        removedCards.formUnion(cards.keys.filter { !present.contains($0) })
        removedCards.subtract(present)
        var byPath: [String: CardRecord] = [:]
        for card in newCards {
            byPath[card.syspath] = card
        }
        for syspath in ucmCards.keys where !present.contains(syspath) { ucmCards[syspath] = nil }
        ucmFailed.formIntersection(present)
        cards = byPath
        jacks = Dictionary(newJacks.map { ($0.syspath, $0) }) { _, last in last }
        announced = [:]
        owners = [:]
        for syspath in cards.keys.sorted() { announce(classify(syspath), for: syspath) }
        var events = PortEvent.diff(from: before, to: announced)
        let counts = events.reduce(into: (added: 0, removed: 0, updated: 0)) { counts, event in
            switch event {
            case .added(let ports): counts.added += ports.count
            case .removed(let uids): counts.removed += uids.count
            case .updated: counts.updated += 1
            case .inputMuted: break
            }
        }
        for syspath in Set(mutedMics.keys).union(cards.keys).sorted() { events += micMuteEvents(syspath) }
        logger.warning(
            "uevents were lost (the udev monitor's receive buffer overflowed): re-enumerated \(cards.count) cards and \(jacks.count) jacks; ports added \(counts.added), removed \(counts.removed), updated \(counts.updated)"
        )
        for event in events { logger.debug("port event", metadata: ["event": "\(event)"]) }
        return events
    }

    /// Re-classifies one card and announces the difference.
    private mutating func reconcile(_ cardSyspath: String) -> [PortEvent] {
        let previous = announced[cardSyspath] ?? []
        let desired = classify(cardSyspath)
        let events = PortEvent.diff(from: [cardSyspath: previous], to: [cardSyspath: desired])
        for uid in previous.map(\.uid) where !desired.contains(where: { $0.uid == uid }) { owners[uid] = nil }
        announce(desired, for: cardSyspath)
        let all = events + micMuteEvents(cardSyspath)
        for event in all { logger.debug("port event", metadata: ["event": "\(event)"]) }
        return all
    }

    /// The mixer switches the watcher must follow by name, by card syspath: the UCM cards'
    /// built-in mics' `CaptureSwitch` controls (`UCMCard.followedSwitches`).
    public var followedSwitches: [String: [String]] {
        ucmCards.compactMapValues { $0.followedSwitches.isEmpty ? nil : $0.followedSwitches }
    }

    /// The built-in mic of a card is muted while the card's capture switch is off: announced
    /// (`.inputMuted` of the mic port's device) when that changes, and unmuted when the card,
    /// its mic or its switch goes. The switch (index 0) is the first ADC's, which records PCM 0:
    /// it counts only for a built-in mic on PCM 0 (an HDA codec's analog mic, not a DMIC on
    /// another PCM beside it). A card without such a built-in mic port announces nothing.
    /// A UCM card's mic is muted by its own control instead: the `CaptureSwitch` of the data
    /// source the helper last said is enabled, off; a mic not enabled is not muted (its switch is
    /// the sequences'), and while a request is on its way nothing is muted. Once muted, it is
    /// unmuted when that control is on again (or the card, its mic or the helper goes), whether
    /// or not the route still enables it.
    private mutating func micMuteEvents(_ cardSyspath: String) -> [PortEvent] {
        let muted: String?
        if let ucm = ucmCards[cardSyspath] {
            let mic = announced[cardSyspath]?.first { $0.type == .builtInMic }
            if let before = mutedMics[cardSyspath], let control = mutedControls[cardSyspath] {
                // Muted until that control is on again, whatever the route does meanwhile: the mute
                // interrupts the session, the route may leave the mic, and its disable sequence
                // turns the switch off anyway; the user's unmute is the switch turned on.
                muted = mic?.device == before && cards[cardSyspath]?.namedSwitches[control] == false ? before : nil
                if muted == nil { mutedControls[cardSyspath] = nil }
            } else {
                guard ucm.enabled != nil else { return [] }
                let control = mic.flatMap { mic in ucm.ports.first { $0.port.uid == mic.uid } }.flatMap(ucm.enabledCaptureSwitch)
                muted = control.flatMap { cards[cardSyspath]?.namedSwitches[$0] } == false ? mic?.device : nil
                mutedControls[cardSyspath] = muted == nil ? nil : control
            }
        } else {
            mutedControls[cardSyspath] = nil
            let mic = announced[cardSyspath]?.first { $0.type == .builtInMic && $0.alsa?.cardPCM?.deviceNumber == 0 }?.device
            muted = cards[cardSyspath]?.captureSwitch == false ? mic : nil
        }
        let before = mutedMics[cardSyspath]
        guard muted != before else { return [] }
        mutedMics[cardSyspath] = muted
        var events: [PortEvent] = []
        if let before { events.append(.inputMuted(device: before, muted: false)) }
        if let muted { events.append(.inputMuted(device: muted, muted: true)) }
        return events
    }

    /// The ports a card implies now, less any whose uid another card owns.
    private mutating func classify(_ cardSyspath: String) -> [Port] {
        guard let card = cards[cardSyspath] else { return [] }
        var desired: [Port] = []
        let cardJacks = jacks.values.filter { $0.cardSyspath == cardSyspath }.sorted { $0.syspath < $1.syspath }
        let ports: [Port]
        if let ucm = ucmCards[cardSyspath] {
            let result = Self.ucmClassification(ucm, record: card, jacks: cardJacks)
            for note in result.notes { once(note.level, note.key, note.message) }
            ports = result.ports
        } else if awaitsHelper(cardSyspath) {
            // Its helper is starting: nothing rather than udev's ports for a moment, which would
            // make two route changes (and interrupt a player) when the UCM ones replace them.
            ports = []
        } else {
            let result = CardClassifier.classify(card, jacks: cardJacks)
            for note in result.notes { once(note.level, note.key, note.message) }
            ports = result.ports
        }
        for port in ports {
            if let owner = owners[port.uid], owner != cardSyspath {
                once(.warning, "uid-clash:\(cardSyspath):\(port.uid)", "\(card.sysname): port uid \(port.uid) is already owned by \(owner): port dropped")
                continue
            }
            desired.append(port)
        }
        return desired
    }

    /// A UCM card's ports that are there now, and what decided each: built-in ones always;
    /// one with a jack control when that jack is plugged, as the card's jack of that name says
    /// (its ALSA control read by the event loop, or an evdev device of that name), else as the
    /// helper read it; and when neither knows, offered with availability unknown (as HDMI is
    /// when its jack cannot be read). Their PCMs are shared as udev's are (`hw:` becomes dmix
    /// or dsnoop; `plughw:` with `AUDIOROUTE_ALSA_EXCLUSIVE=1` on the card): music and a call's
    /// prompt play at once.
    /// The `AUDIOROUTE_*` properties apply as to udev's ports (an admin's word, whatever the
    /// profile says): the card's `_ALSA_EXCLUSIVE` (plughw) to every port, its `_ALSA_PCM`,
    /// `_PRIORITY` and `_NAME` to the card's own ports (those not on its jack device), and a jack
    /// device's own to the ports its `JackControl` names; values that are not usable are noted.
    /// `record`: the card's udev record (nil: no properties).
    static func ucmClassification(_ card: UCMCard, record: CardRecord? = nil, jacks: [JackRecord]) -> CardClassification {
        var result = CardClassification()
        func note(_ level: ClassificationNote.Level, _ what: String, _ message: String) {
            guard let record else { return }
            result.notes.append(ClassificationNote(level, key: "\(record.syspath)#\(what)", "\(record.sysname): \(message)"))
        }
        let overrides = record.map { CardOverrides($0, note: note) } ?? .none
        result.decisions.append(
            ClassificationDecision(
                subject: "card", outcome: "ports from its UCM profile (verbs \(card.verbs.joined(separator: ", ")))",
                signal: "alsa-lib's UCM opened \(card.card)"))
        for note in card.notes {
            // The helper's notes say why a device gave no port, or why a mic's mute is not followed.
            let outcome = note.hasSuffix("its mute is not followed") ? "no mute" : "no port"
            result.decisions.append(ClassificationDecision(subject: "card", outcome: outcome, signal: "UCM: \(note)"))
        }
        for ucm in card.ports {
            var port = ucm.port
            let raw = port.alsa?.description ?? ""
            port.alsa = port.alsa.map { sharedPCM($0, direction: port.direction, exclusive: overrides.exclusive) }
            for index in port.dataSources.indices {
                port.dataSources[index].alsa = port.dataSources[index].alsa.map {
                    sharedPCM($0, direction: port.direction, exclusive: overrides.exclusive)
                }
            }
            if port.device.hasSuffix("/jack") {
                // Its jack device's words, as udev's jack ports take them.
                if let control = ucm.jackControl, let jack = jacks.first(where: { $0.name == control }) {
                    CardOverrides.applyJack(jack, to: &port, note: note)
                }
            } else {
                if let alsa = overrides.alsaPCM {
                    // The admin's PCM is every data source's: the route opens what they named.
                    port.alsa = alsa
                    for index in port.dataSources.indices { port.dataSources[index].alsa = alsa }
                }
                if let name = overrides.name { port.name = name }
                if let priority = overrides.priority { port.priority = priority }
            }
            let devices = card.verbs.compactMap { verb in ucm.devices[verb].map { "\(verb): \($0.joined(separator: ", "))" } }.joined(separator: "; ")
            var signal = "UCM device \(devices), PCM \(raw)" + (ucm.profilePriority.map { ", priority \($0)" } ?? "")
            let availability: PortAvailability
            if let control = ucm.jackControl {
                let plugged: Bool?
                if let jack = jacks.first(where: { $0.name == control }), jack.stateKnown {
                    plugged = !jack.state.intersection(jack.supported).isEmpty
                    signal += "; jack \(CardClassifier.quoted(control)) \(plugged! ? "on" : "off")"
                } else if let value = card.jacks[control] {
                    plugged = value
                    signal += "; jack \(CardClassifier.quoted(control)) \(value ? "on" : "off") (read by the UCM helper)"
                } else {
                    plugged = nil
                    signal += "; jack \(CardClassifier.quoted(control)) state unknown"
                }
                availability = plugged == nil ? .unknown : plugged! ? .connected : .unavailable
            } else {
                availability = .present
            }
            port.availability = availability.portAvailability
            result.ports.append(port)
            result.availability[port.uid] = availability
            result.decisions.append(
                ClassificationDecision(
                    subject: port.uid, outcome: "\(port.type.rawValue) \(port.direction.rawValue) on \(port.alsa?.description ?? "no PCM"), availability \(availability.rawValue)",
                    signal: signal))
            if !port.dataSources.isEmpty {
                let sources = port.dataSources.map { "\($0.id) (\($0.alsa?.description ?? "no PCM"))" }.joined(separator: ", ")
                result.decisions.append(
                    ClassificationDecision(
                        subject: port.uid, outcome: "data sources \(sources); enabled: the controlling session's preferred one, else \(port.dataSources[0].id)",
                        signal: "UCM: the verb's built-in mics, by CapturePriority"))
            }
        }
        return result
    }

    /// `hw:<card>,<device>` (UCM's usual PlaybackPCM/CapturePCM), `hw:<card>` (device 0) or
    /// `hw:CARD=<card>,DEV=<device>` through dmix (output), dsnoop (input) or plughw
    /// (exclusive); any other PCM (a subdevice, another plugin) as it is.
    static func sharedPCM(_ pcm: ALSADevice, direction: PortDirection, exclusive: Bool) -> ALSADevice {
        guard let hardware = pcm.cardPCM, hardware.plugin == .hw, hardware.otherArguments.isEmpty else { return pcm }
        return .card(hardware.through(CardClassifier.sharedPlugin(output: direction == .output, exclusive: exclusive)))
    }

    /// Records `ports` as what `cardSyspath` has announced, and their uids as its own.
    private mutating func announce(_ ports: [Port], for cardSyspath: String) {
        for port in ports { owners[port.uid] = cardSyspath }
        if ports.isEmpty { announced[cardSyspath] = nil } else { announced[cardSyspath] = ports }
    }

    private mutating func once(_ level: ClassificationNote.Level, _ key: String, _ message: String) {
        guard loggedKeys.insert(key).inserted else { return }
        // Bounded: a storm of distinct garbage must not grow memory without limit.
        if loggedKeys.count > 4096 { loggedKeys.removeAll(keepingCapacity: true) }
        switch level {
        case .debug: logger.debug("\(message)")
        case .info: logger.info("\(message)")
        case .notice: logger.notice("\(message)")
        case .warning: logger.warning("\(message)")
        }
    }

    private func quotedName(_ name: String) -> String { CardClassifier.quoted(name) }
}
