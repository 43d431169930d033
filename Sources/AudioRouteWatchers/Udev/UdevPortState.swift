import AudioRouteSystem
import AudioRouteDBus
import AudioRouteCore
import Logging

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
    /// Earpiece answers per card syspath, asked once per card (and again if its id changes).
    private var earpieces: [String: Bool] = [:]
    /// Whether a card has an earpiece per its UCM profile (computed off the hot path, cached by syspath).
    private let earpiece: @Sendable (CardRecord) -> Bool
    let logger: Logger

    public init(logger: Logger = Logger(label: "audioroute.udev"), earpiece: @escaping @Sendable (CardRecord) -> Bool = { _ in false }) {
        self.logger = logger
        self.earpiece = earpiece
    }

    /// Every announced port, card by card in syspath order.
    public var ports: [Port] {
        announced.keys.sorted().flatMap { announced[$0]! }
    }

    /// Every card's classification now, with its jacks, in syspath order: what
    /// `audioroute ports --direct --explain` prints.
    public func explanations() -> [CardExplanation] {
        cards.keys.sorted().map { syspath in
            let card = cards[syspath]!
            let cardJacks = jacks.values.filter { $0.cardSyspath == syspath }.sorted { $0.syspath < $1.syspath }
            let result = CardClassifier.classify(card, jacks: cardJacks, hasEarpiece: earpieces[syspath] ?? false)
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
            if earpieces[card.syspath] == nil || cards[card.syspath]?.attributes["id"] != card.attributes["id"] {
                earpieces[card.syspath] = CardClassifier.mayHaveEarpiece(card) && earpiece(card)
            }
            cards[card.syspath] = card
            removedCards.remove(card.syspath)
            return reconcile(card.syspath)

        case .cardRemoved(let syspath, let action):
            earpieces[syspath] = nil
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
            if earpieces[card.syspath] == nil || cards[card.syspath]?.attributes["id"] != card.attributes["id"] {
                earpieces[card.syspath] = CardClassifier.mayHaveEarpiece(card) && earpiece(card)
            }
            byPath[card.syspath] = card
        }
        for syspath in earpieces.keys where !present.contains(syspath) { earpieces[syspath] = nil }
        cards = byPath
        jacks = Dictionary(newJacks.map { ($0.syspath, $0) }) { _, last in last }
        announced = [:]
        owners = [:]
        for syspath in cards.keys.sorted() { announce(classify(syspath), for: syspath) }
        let events = PortEvent.diff(from: before, to: announced)
        let counts = events.reduce(into: (added: 0, removed: 0, updated: 0)) { counts, event in
            switch event {
            case .added(let ports): counts.added += ports.count
            case .removed(let uids): counts.removed += uids.count
            case .updated: counts.updated += 1
            }
        }
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
        for event in events { logger.debug("port event", metadata: ["event": "\(event)"]) }
        return events
    }

    /// The ports a card implies now, less any whose uid another card owns.
    private mutating func classify(_ cardSyspath: String) -> [Port] {
        guard let card = cards[cardSyspath] else { return [] }
        var desired: [Port] = []
        let cardJacks = jacks.values.filter { $0.cardSyspath == cardSyspath }.sorted { $0.syspath < $1.syspath }
        let result = CardClassifier.classify(card, jacks: cardJacks, hasEarpiece: earpieces[cardSyspath] ?? false)
        for note in result.notes { once(note.level, note.key, note.message) }
        for port in result.ports {
            if let owner = owners[port.uid], owner != cardSyspath {
                once(.warning, "uid-clash:\(cardSyspath):\(port.uid)", "\(card.sysname): port uid \(port.uid) is already owned by \(owner): port dropped")
                continue
            }
            desired.append(port)
        }
        return desired
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
