import AudioRouteCore
import Logging

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
        }
    }

    /// Re-classifies one card and announces the difference.
    private mutating func reconcile(_ cardSyspath: String) -> [PortEvent] {
        var desired: [Port] = []
        if let card = cards[cardSyspath] {
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
        }
        let previous = announced[cardSyspath] ?? []
        var events: [PortEvent] = []
        let removed = previous.filter { old in !desired.contains { $0.uid == old.uid } }.map(\.uid)
        if !removed.isEmpty { events.append(.removed(removed)) }
        for port in desired {
            if let old = previous.first(where: { $0.uid == port.uid }), old != port { events.append(.updated(port)) }
        }
        let added = desired.filter { new in !previous.contains { $0.uid == new.uid } }
        if !added.isEmpty { events.append(.added(added)) }

        for uid in removed { owners[uid] = nil }
        for port in added { owners[port.uid] = cardSyspath }
        if desired.isEmpty { announced[cardSyspath] = nil } else { announced[cardSyspath] = desired }
        for event in events { logger.debug("port event", metadata: ["event": "\(event)"]) }
        return events
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
