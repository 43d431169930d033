// The daemon's side of the UCM helper (docs/ucm.md): one `audioroute-ucm` process for every
// card, asked about each card as it arrives. libasound's UCM costs about 1.6 MiB of RSS, which
// the daemon's budget has not got, so the daemon never links it: it starts the helper, asks it
// to open each card, reads the card's ports from its hello (or why it has none), and writes it
// the verb and devices each route needs. The helper runs while some card is open in it or
// being opened, and is stopped when none is: a machine whose cards have no profile keeps none.
import AudioRouteCore
import AudioRouteSystem
import Logging
import Synchronization

/// The helper's answer about one card: its profile's ports (`card`), or nil when it has no
/// profile, failed, or the helper ended (the card's ports are udev's again).
public struct UCMAnswer: Sendable, Hashable {
    public let syspath: String
    public let card: UCMCard?

    public init(syspath: String, card: UCMCard?) {
        self.syspath = syspath
        self.card = card
    }
}

/// A card the UCM helper is asked about: the name it opens (`hw:<card number>`), the uid base its
/// ports take (the one udev's classification gives the card: docs/ports.md, "Uids"), and what
/// the card says of itself, when read (a card with the same driver, names and components as one
/// that had no profile has none either).
public struct UCMCardRequest: Sendable, Hashable {
    /// What the helper opens: `hw:<card number>`.
    public var name: String
    /// The uid base of the card's ports (`pci-0000:00:1f.3`).
    public var base: String
    /// The card's CARD_INFO (driver, names, components) as one text; nil when not read.
    public var identity: String?

    /// A card to ask about.
    public init(name: String, base: String, identity: String? = nil) {
        self.name = name
        self.base = base
        self.identity = identity
    }
}

/// The UCM helper and the cards asked of it, by card syspath. Told which cards to ask about by
/// the udev watcher as cards come and go; told every route by the route service (`apply`).
public final class UCMHelpers: Sendable {
    /// The helper's path (`audioroute-ucm`).
    public let executable: String
    /// Set in the helper's environment: ALSA_CONFIG_UCM2 when the daemon was given a UCM root.
    let environment: [String: String]
    let logger: Logger
    private let registry: Mutex<Registry>

    private struct Entry {
        var request: UCMCardRequest
        /// Which asking of the card this is: a card closed and asked again (the same name, a
        /// card number reused) is another entry, whose watchdog is not the old one's.
        var generation: UInt64
        /// The card's ports and verbs, once its hello came (public uids).
        var card: UCMCard?
        /// The last state asked for (nil: none yet, or one that could not be written or failed).
        var requested: UCMState?
        /// Answers the helper owes for this entry: its open's (until the hello or the failure)
        /// and one per request written.
        var owed = 0
        /// When the oldest of them is overdue (monotonic nanoseconds); nil when none is owed.
        var due: UInt64?
    }

    private struct Registry {
        var helper: HelperProcess?
        /// Cards asked about (pending or open), by syspath.
        var entries: [String: Entry] = [:]
        /// Answers the helper still owes, by card name, for entries that are gone (their open's,
        /// their requests', their close's): the helper answers in order, so these come before
        /// anything for a new entry of the same name, and are not its.
        var stale: [String: Int] = [:]
        /// Cards whose profile could not be opened, or whose helper failed, with the name asked:
        /// not asked again until the card goes (they would fail the same way each time).
        var failed: [String: String] = [:]
        /// The identities of cards the helper found no profile for, latest last: a card that says
        /// the same of itself (a headset plugged again) is not asked, and starts no helper.
        var withoutProfile: [String] = []
        var nextGeneration: UInt64 = 0
        /// How long each answer may take, in nanoseconds.
        let timeout: UInt64
        /// Whether the watchdog thread runs (while some answer is owed).
        var watching = false
        /// Where the cards' answers go (the last `reconcile`'s): a request on its way is told there.
        var deliver: (@Sendable (UCMAnswer) -> Void)?

        /// Forgets `syspath`'s entry; what the helper still owes for it, and the close's answer
        /// when `closing`, become stale.
        mutating func remove(_ syspath: String, closing: Bool) {
            guard let entry = entries.removeValue(forKey: syspath) else { return }
            let owed = entry.owed + (closing ? 1 : 0)
            if owed > 0 { stale[entry.request.name, default: 0] += owed }
        }

        /// The entry a line about `name` is for; nil when the line answers an entry that is gone
        /// (then counted off) or no entry has that name. `answer`: the line answers an open, a
        /// request or a close (a jack event answers nothing).
        mutating func entry(named name: String, answer: Bool) -> String? {
            if let owed = stale[name] {
                if answer { stale[name] = owed > 1 ? owed - 1 : nil }
                return nil
            }
            return entries.first { $0.value.request.name == name }?.key
        }

        /// One answer came for `syspath`: one fewer owed; the next is due a timeout from now.
        mutating func answered(_ syspath: String, now: UInt64) {
            guard var entry = entries[syspath] else { return }
            entry.owed = max(0, entry.owed - 1)
            entry.due = entry.owed > 0 ? now + timeout : nil
            entries[syspath] = entry
        }

        /// One more answer owed by `syspath`, due a timeout from now if none was owed.
        mutating func owe(_ syspath: String, now: UInt64) {
            guard var entry = entries[syspath] else { return }
            if entry.owed == 0 { entry.due = now + timeout }
            entry.owed += 1
            entries[syspath] = entry
        }

        /// The helper said what is current on `syspath`'s card: its card with that state, once no
        /// other request is owed (an answer to an older request is not what the card is now).
        mutating func settled(_ syspath: String, _ state: UCMState) -> UCMAnswer? {
            guard var entry = entries[syspath], var card = entry.card, entry.owed == 0 else { return nil }
            card.enabled = state
            entry.card = card
            entries[syspath] = entry
            return UCMAnswer(syspath: syspath, card: card)
        }

        /// The helper goes: nothing it owes will come.
        mutating func forgetHelper() {
            helper = nil
            stale = [:]
        }
    }

    /// How many card identities without a profile are remembered.
    static let rememberedWithoutProfile = 64

    /// - Parameters:
    ///   - ucmRoot: the UCM tree the helper reads (its ALSA_CONFIG_UCM2); nil: libasound's default.
    ///   - environment: more variables for the helper (`ports --alsa-info`: an ALSA_CONFIG_PATH
    ///     whose fake cards stand for a report's).
    ///   - answerTimeout: how long the helper has for each answer (`helloTimeout`; shorter in tests).
    public init(
        executable: String, ucmRoot: String? = nil, environment: [String: String] = [:], answerTimeout: Duration = UCMHelpers.helloTimeout,
        logger: Logger = Logger(label: "audioroute.ucm")
    ) {
        self.executable = executable
        self.answerTimeoutNanoseconds = UInt64(answerTimeout.components.seconds) * 1_000_000_000
            + UInt64(answerTimeout.components.attoseconds / 1_000_000_000)
        self.environment = environment.merging(ucmRoot.map { ["ALSA_CONFIG_UCM2": $0] } ?? [:]) { _, root in root }
        self.logger = logger
        self.registry = Mutex(Registry(timeout: answerTimeoutNanoseconds))
    }

    /// The helper to start for a `--ucm-helper` option (nil: not given): the path given, nil for
    /// `none`; else `audioroute-ucm` in `directory` (the program's own, as installed together),
    /// else the name alone, found in PATH.
    public static func executable(option: String?, beside directory: String?) -> String? {
        if let option { return option == "none" ? nil : option }
        if let directory, CurrentProcess.isExecutable(directory + "/audioroute-ucm") { return directory + "/audioroute-ucm" }
        return "audioroute-ucm"
    }

    /// How long the helper has to answer an open or a request before it is killed (its cards
    /// then keep udev's ports): a helper stuck in libasound (a sequence's `exec`, a codec whose
    /// bus hangs) would otherwise hold the cards where it left them, and stop reading. Opening a
    /// card's UCM files takes 20 to 60 ms; a route's sequences a few.
    public static let helloTimeout: Duration = .seconds(5)
    let answerTimeoutNanoseconds: UInt64

    /// Asks the helper about each card of `wanted` not yet asked (starting it if need be),
    /// tells it to forget those no longer wanted, and stops it when no card is left. The
    /// answers reach `deliver` as `UCMAnswer`s (a nil card: no profile, or it failed), from
    /// `loop`, which reads the helper.
    package func reconcile(wanted: [String: UCMCardRequest], loop: any PollLoop, deliver: @escaping @Sendable (UCMAnswer) -> Void) {
        var known: [String] = []
        let (helper, lines, start, stop): (HelperProcess?, [JSON], [String], HelperProcess?) = registry.withLock { registry in
            registry.deliver = deliver
            var lines: [JSON] = []
            for (syspath, entry) in registry.entries where wanted[syspath] != entry.request {
                registry.remove(syspath, closing: true)
                lines.append(.object([JSON.Member("close", .string(entry.request.name))]))
            }
            registry.failed = registry.failed.filter { wanted[$0.key]?.name == $0.value }
            var start = wanted.keys.filter { registry.entries[$0] == nil && registry.failed[$0] == nil }.sorted()
            // A card that says of itself what one without a profile said: its answer is known.
            known = start.filter { wanted[$0]!.identity.map(registry.withoutProfile.contains) == true }
            start.removeAll(where: known.contains)
            for syspath in known { registry.failed[syspath] = wanted[syspath]!.name }
            let now = MonotonicClock.nanoseconds()
            for syspath in start {
                registry.nextGeneration += 1
                registry.entries[syspath] = Entry(request: wanted[syspath]!, generation: registry.nextGeneration)
                registry.owe(syspath, now: now)
                lines.append(.object([JSON.Member("open", .string(wanted[syspath]!.name))]))
            }
            // No card left: the helper goes (its stdin closes; it exits).
            if registry.entries.isEmpty, let helper = registry.helper {
                registry.forgetHelper()
                return (nil, [], [], helper)
            }
            return (registry.helper, lines, start, nil)
        }
        stop?.stop()
        for syspath in known {
            logger.debug("no UCM profile, as for a card that said the same of itself", metadata: ["card": "\(wanted[syspath]!.name)"])
            deliver(UCMAnswer(syspath: syspath, card: nil))
        }
        guard !lines.isEmpty else { return }
        var running = helper
        if running == nil {
            do throws(Errno) {
                let started = try HelperProcess.start(name: "UCM helper", executable: executable, environment: environment, logger: logger)
                registry.withLock { $0.helper = started }
                started.read(on: loop) { [weak self] line in self?.handle(line, from: started, deliver: deliver) }
                running = started
            } catch {
                logger.error(
                    "cannot start the UCM helper: the cards keep udev's ports", metadata: ["helper": "\(executable)", "error": "\(error)"])
                // Every card asked about fails; those asked before it started had no helper either.
                failAll(helper: nil, deliver: deliver)
                return
            }
        }
        guard let running else { return }
        for line in lines { running.send(line) }
        if !start.isEmpty { watch(helper: running) }
    }

    /// A helper stuck in an open or a request (a UCM file that makes libasound hang) is
    /// killed once an answer is `helloTimeout` overdue: its end then gives every card of it
    /// back to udev. One thread, while some answer is owed: it sleeps until the next one is due.
    private func watch(helper: HelperProcess) {
        let start = registry.withLock { registry in
            defer { registry.watching = true }
            return !registry.watching
        }
        guard start else { return }
        let started = startThread { [self] in
            while true {
                let now = MonotonicClock.nanoseconds()
                let (next, stuck, current): (UInt64?, [String], HelperProcess?) = registry.withLock { registry in
                    let due = registry.entries.values.compactMap(\.due)
                    guard let next = due.min(), registry.helper != nil else {
                        registry.watching = false
                        return (nil, [], nil)
                    }
                    guard next <= now else { return (next, [], nil) }
                    registry.watching = false
                    let overdue = registry.entries.values.filter { ($0.due ?? .max) <= now }
                    return (nil, overdue.map(\.request.name).sorted(), registry.helper)
                }
                if let current {
                    logger.error(
                        "UCM helper did not answer: killed", metadata: ["cards": "\(stuck)", "timeout": "\(answerTimeoutNanoseconds / 1_000_000) ms"])
                    current.kill()
                    return
                }
                guard let next else { return }
                MonotonicClock.sleep(nanoseconds: next - now)
            }
        }
        // startThread gives the error number when no thread could start.
        if let failure = started {
            registry.withLock { $0.watching = false }
            logger.warning("no thread for the UCM helper's watchdog", metadata: ["helper": "\(helper.process.pid)", "error": "\(failure)"])
        }
    }

    /// One line from the helper, or its end (nil).
    private func handle(_ line: [UInt8]?, from helper: HelperProcess, deliver: @Sendable (UCMAnswer) -> Void) {
        guard let line else {
            failAll(helper: helper, deliver: deliver)
            return
        }
        // A helper that was stopped still answers what it had read: not for today's cards.
        guard registry.withLock({ $0.helper === helper }) else { return }
        let parsed: UCMHelperLine
        do throws(ScenarioError) {
            parsed = try UCMHelperLine.parse(line)
        } catch {
            // The helper is ours: a line we cannot read means it is not what we think it is.
            logger.error("UCM helper said something unreadable: stopped; its cards keep udev's ports", metadata: ["error": "\(error)"])
            helper.kill()
            return
        }
        switch parsed {
        case .hello(let card):
            let event: UCMAnswer? = registry.withLock { registry in
                guard let syspath = registry.entry(named: card.card, answer: true), let entry = registry.entries[syspath] else { return nil }
                registry.answered(syspath, now: MonotonicClock.nanoseconds())
                let named = card.withPublicUIDs(base: entry.request.base)
                registry.entries[syspath]?.card = named
                return UCMAnswer(syspath: syspath, card: named)
            }
            guard let event else { return }
            logger.info(
                "UCM card", metadata: ["card": "\(card.card)", "verbs": "\(card.verbs.joined(separator: ","))", "devices": "\(card.ports.count)"])
            for note in card.notes { logger.notice("UCM: \(note)", metadata: ["card": "\(card.card)"]) }
            deliver(event)
        case .closed(let name, let message, let noProfile):
            let syspath: String? = registry.withLock { registry in
                // An answer to a close is owed by an entry that is gone: counted off there.
                guard let syspath = registry.entry(named: name, answer: true), let entry = registry.entries[syspath] else { return nil }
                guard message != nil else { return nil }
                // An open that failed gives the card back to udev.
                registry.remove(syspath, closing: false)
                registry.failed[syspath] = name
                // Only "this card has no profile" says the same of every card like it; a card gone
                // half-way through its open, or a configuration that could not be read, does not.
                if noProfile, let identity = entry.request.identity, !registry.withoutProfile.contains(identity) {
                    registry.withoutProfile.append(identity)
                    if registry.withoutProfile.count > Self.rememberedWithoutProfile { registry.withoutProfile.removeFirst() }
                }
                return syspath
            }
            guard let syspath, let message else { return }
            logger.info("no UCM profile: the card keeps udev's ports", metadata: ["card": "\(name)", "reason": "\(message)"])
            deliver(UCMAnswer(syspath: syspath, card: nil))
            stopIfIdle()
        case .jack(let name, let control, let plugged):
            let event: UCMAnswer? = registry.withLock { registry in
                guard let syspath = registry.entry(named: name, answer: false), var card = registry.entries[syspath]?.card,
                    card.jacks[control] != plugged
                else { return nil }
                card.jacks[control] = plugged
                registry.entries[syspath]?.card = card
                return UCMAnswer(syspath: syspath, card: card)
            }
            logger.debug("UCM jack", metadata: ["card": "\(name)", "jack": "\(control)", "plugged": "\(plugged)"])
            if let event { deliver(event) }
        case .reply(let name, let state):
            let event: UCMAnswer? = registry.withLock { registry in
                guard let syspath = registry.entry(named: name, answer: true) else { return nil }
                registry.answered(syspath, now: MonotonicClock.nanoseconds())
                return registry.settled(syspath, state)
            }
            logger.debug("UCM card set", metadata: ["card": "\(name)", "state": "\(state)"])
            if let event { deliver(event) }
        case .failure(let name, let message, let state):
            logger.warning("UCM helper could not set the card", metadata: ["card": "\(name)", "error": "\(message)"])
            let event: UCMAnswer? = registry.withLock { registry in
                guard let syspath = registry.entry(named: name, answer: true) else { return nil }
                registry.answered(syspath, now: MonotonicClock.nanoseconds())
                // Asked again at the next route.
                registry.entries[syspath]?.requested = nil
                return state.flatMap { registry.settled(syspath, $0) }
            }
            if let event { deliver(event) }
        case .error(let message):
            logger.warning("UCM helper refused a line", metadata: ["error": "\(message)"])
        }
    }

    /// The helper ended (or could not start): every card asked of it keeps udev's ports, until
    /// it goes.
    private func failAll(helper: HelperProcess?, deliver: @Sendable (UCMAnswer) -> Void) {
        let failed: [String] = registry.withLock { registry in
            guard registry.helper === helper else { return [] }
            registry.forgetHelper()
            let syspaths = registry.entries.keys.sorted()
            for syspath in syspaths { registry.failed[syspath] = registry.entries[syspath]!.request.name }
            registry.entries = [:]
            return syspaths
        }
        for syspath in failed { deliver(UCMAnswer(syspath: syspath, card: nil)) }
    }

    /// Stops the helper when no card is open or being opened in it.
    private func stopIfIdle() {
        let idle: HelperProcess? = registry.withLock { registry in
            guard registry.entries.isEmpty, let helper = registry.helper else { return nil }
            registry.forgetHelper()
            return helper
        }
        if let idle {
            logger.info("no card has a UCM profile: the UCM helper stops")
            idle.stop()
        }
    }

    /// Tells the helper the state `route` needs on each open card, for the controlling
    /// session's configuration and the route ports' selected data sources (by port uid). A card
    /// already asked for that state is not written to.
    public func apply(route: Route, configuration: SessionConfiguration?, dataSources: [String: String] = [:]) {
        let (helper, lines, moving, deliver): (HelperProcess?, [(syspath: String, generation: UInt64, line: JSON)], [UCMAnswer], (@Sendable (UCMAnswer) -> Void)?) = registry.withLock { registry in
            guard registry.helper != nil else { return (nil, [], [], nil) }
            var lines: [(syspath: String, generation: UInt64, line: JSON)] = []
            var moving: [UCMAnswer] = []
            let now = MonotonicClock.nanoseconds()
            for syspath in registry.entries.keys.sorted() {
                guard let entry = registry.entries[syspath], let card = entry.card else { continue }
                let target = card.target(route: route, configuration: configuration, dataSources: dataSources)
                guard entry.requested != target else { continue }
                registry.entries[syspath]?.requested = target
                // Owed before it is written: its answer can come before this thread goes on.
                registry.owe(syspath, now: now)
                lines.append((syspath, entry.generation, target.request(card: entry.request.name)))
                // Its sequences move its controls until the reply: a mute control is not the user's meanwhile.
                if card.enabled != nil {
                    registry.entries[syspath]?.card?.enabled = nil
                    moving.append(UCMAnswer(syspath: syspath, card: registry.entries[syspath]?.card))
                }
            }
            return (registry.helper, lines, moving, registry.deliver)
        }
        guard let helper else { return }
        if let deliver { for answer in moving { deliver(answer) } }
        for (syspath, generation, line) in lines where !helper.send(line) {
            // Not sent, so no answer is owed: asked again at the next route.
            registry.withLock { registry in
                guard registry.entries[syspath]?.generation == generation else { return }
                registry.answered(syspath, now: MonotonicClock.nanoseconds())
                registry.entries[syspath]?.requested = nil
            }
        }
        if !lines.isEmpty { watch(helper: helper) }
    }

    /// Asks the helper about `wanted` and waits, on a thread of its own, until every card has its
    /// answer (its `.ucm` event: the profile's ports, or nil) or `helloTimeout` has passed (the
    /// helper is then killed: the cards without an answer have none). Then stops the helper. For
    /// a one-time look (`audioroute ports --direct`, `--alsa-info`), not for the daemon.
    public func answers(for wanted: [String: UCMCardRequest]) throws(Errno) -> [UCMAnswer] {
        guard !wanted.isEmpty else { return [] }
        let thread = try PollThread(name: "audioroute-ucm")
        defer {
            // Its reader stops with the thread before it sees the end: the helper is reaped here
            // (it exits once its stdin closes; one stuck was killed by the watchdog).
            let helper = detach()
            thread.stop()
            if let helper {
                helper.stop()
                helper.reap()
            }
        }
        let events = Mutex<[UCMAnswer]>([])
        reconcile(wanted: wanted, loop: thread) { event in events.withLock { $0.append(event) } }
        func answered() -> Bool {
            let syspaths = events.withLock { events in
                Set(events.map(\.syspath))
            }
            return Set(wanted.keys).isSubset(of: syspaths)
        }
        // The helper's own watchdog kills it after helloTimeout; its end answers every card.
        let deadline = MonotonicClock.nanoseconds() + answerTimeoutNanoseconds + 1_000_000_000
        while !answered(), MonotonicClock.nanoseconds() < deadline { MonotonicClock.sleep(nanoseconds: 2_000_000) }
        return events.withLock { $0 }
    }

    /// Stops the helper (its stdin closes: it exits).
    public func stopAll() {
        _ = detach()?.stop()
    }

    /// The helper, no longer the registry's, which forgets every card.
    private func detach() -> HelperProcess? {
        registry.withLock { registry in
            defer {
                registry.forgetHelper()
                registry.entries = [:]
            }
            return registry.helper
        }
    }
}
