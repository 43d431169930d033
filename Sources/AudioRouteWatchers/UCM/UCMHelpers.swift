// The daemon's side of the UCM helpers (docs/ucm.md): one `audioroute-ucm` process per
// UCM card. libasound's UCM costs about 1.6 MiB of RSS, which the daemon's budget has not
// got, so the daemon never links it: it starts the helper, reads the card's ports from its
// hello line, and writes it the verb and devices each route needs.
import AudioRouteCore
import AudioRouteSystem
import Logging
import Synchronization

/// The running UCM helpers, by card syspath. Started and stopped by the udev watcher as
/// UCM cards come and go; told every route by the route service (`apply`).
public final class UCMHelpers: Sendable {
    /// The helper's path (`audioroute-ucm`).
    public let executable: String
    /// Set in the helper's environment: ALSA_CONFIG_UCM2 when the daemon was given a UCM root.
    let environment: [String: String]
    let logger: Logger
    private let registry = Mutex(Registry())

    private struct Registry {
        var helpers: [String: UCMHelper] = [:]
        /// Cards whose helper failed or ended on its own, with the name it opened: not started
        /// again until the card goes (a helper that cannot open the card would fail every time).
        var failed: [String: String] = [:]
    }

    public init(executable: String, ucmRoot: String? = nil, logger: Logger = Logger(label: "audioroute.ucm")) {
        self.executable = executable
        self.environment = ucmRoot.map { ["ALSA_CONFIG_UCM2": $0] } ?? [:]
        self.logger = logger
    }

    /// How long a helper has to say hello before it is killed (the card then keeps udev's
    /// ports). Opening a phone's UCM files takes about 50 ms.
    public static let helloTimeout: Duration = .seconds(5)

    /// The cards with a running helper, by syspath, with the name each opened.
    public var running: [String: String] { registry.withLock { $0.helpers.mapValues(\.cardName) } }

    /// Starts a helper for each card of `wanted` (syspath: `hw:<id>`) that has none, and
    /// stops those of cards no longer wanted. The hello line (or the helper's failure)
    /// reaches `deliver` as `.ucm(syspath:card:)`, from `loop`, which reads the helpers.
    func reconcile(wanted: [String: String], loop: any PollLoop, deliver: @escaping @Sendable (HardwareEvent) -> Void) {
        let (stop, start) = registry.withLock { registry in
            let stop = registry.helpers.filter { wanted[$0.key] != $0.value.cardName }
            for syspath in stop.keys { registry.helpers[syspath] = nil }
            registry.failed = registry.failed.filter { wanted[$0.key] == $0.value }
            return (Array(stop.values), wanted.filter { registry.helpers[$0.key] == nil && registry.failed[$0.key] == nil })
        }
        for helper in stop { helper.stop() }
        for (syspath, name) in start.sorted(by: { $0.key < $1.key }) {
            do throws(Errno) {
                let helper = try UCMHelper.start(
                    executable: executable, card: name, syspath: syspath, environment: environment, logger: logger)
                registry.withLock { $0.helpers[syspath] = helper }
                helper.read(on: loop) { [weak self] card in
                    // A helper that failed or ended gives the card back to udev's classification.
                    if card == nil {
                        self?.registry.withLock { registry in
                            guard registry.helpers[syspath] === helper else { return }
                            registry.helpers[syspath] = nil
                            registry.failed[syspath] = name
                        }
                    }
                    deliver(.ucm(syspath: syspath, card: card))
                }
            } catch {
                registry.withLock { $0.failed[syspath] = name }
                deliver(.ucm(syspath: syspath, card: nil))
                logger.error(
                    "cannot start the UCM helper: the card keeps udev's ports",
                    metadata: ["card": "\(name)", "helper": "\(executable)", "error": "\(error)"])
            }
        }
    }

    /// Tells every helper whose card has announced its ports the state `route` needs,
    /// for the controlling session's configuration. A helper already in that state is
    /// not written to.
    public func apply(route: Route, configuration: SessionConfiguration?) {
        for helper in registry.withLock({ Array($0.helpers.values) }) { helper.apply(route: route, configuration: configuration) }
    }

    /// Stops every helper (its stdin closes: it exits).
    public func stopAll() {
        let all = registry.withLock { registry in
            defer { registry.helpers = [:] }
            return Array(registry.helpers.values)
        }
        for helper in all { helper.stop() }
    }
}

/// One helper process: its stdin (requests), its stdout (hello, replies), what it said.
final class UCMHelper: Sendable {
    let cardName: String
    let syspath: String
    let process: SpawnedProcess
    let logger: Logger
    private let input: Mutex<FileDescriptor?>
    private let output: FileDescriptor
    private let state = Mutex(State())

    private struct State {
        var card: UCMCard?
        /// The last state asked for (nil: none yet, or a request that could not be written).
        var requested: UCMState?
        var lines = UCMLineSplitter()
        var ended = false
    }

    private init(cardName: String, syspath: String, process: SpawnedProcess, input: consuming FileDescriptor, output: consuming FileDescriptor, logger: Logger) {
        self.cardName = cardName
        self.syspath = syspath
        self.process = process
        self.input = Mutex(Optional(input))
        self.output = output
        self.logger = logger
    }

    static func start(executable: String, card: String, syspath: String, environment: [String: String], logger: Logger) throws(Errno) -> UCMHelper {
        let toHelper = try PipeEnds()
        let fromHelper = try PipeEnds()
        var options = SpawnOptions()
        options.standardInput = .duplicate(toHelper.readEnd.rawValue)
        options.standardOutput = .duplicate(fromHelper.writeEnd.rawValue)
        options.environment = environment
        options.defaultSignals = [.pipe, .terminate, .interrupt, .hangup]
        let process = try SpawnedProcess.spawn([executable, "--card", card], options)
        let input = toHelper.keepingWriteEnd()
        let output = fromHelper.keepingReadEnd()
        // A helper that stops reading must not block the daemon: a request that does not fit is retried later.
        try input.setNonBlocking()
        try output.setNonBlocking()
        logger.info("UCM helper started", metadata: ["card": "\(card)", "pid": "\(process.pid)"])
        let helper = UCMHelper(cardName: card, syspath: syspath, process: process, input: input, output: output, logger: logger)
        helper.killUnlessHello(after: UCMHelpers.helloTimeout)
        return helper
    }

    /// A helper stuck before its hello (a UCM file that makes libasound hang) is killed: its
    /// end then gives the card back to udev. A thread that sleeps, once per helper start.
    private func killUnlessHello(after timeout: Duration) {
        let nanoseconds = UInt64(timeout.components.seconds) * 1_000_000_000
        _ = startThread { [self] in
            MonotonicClock.sleep(nanoseconds: nanoseconds)
            let waiting = state.withLock { $0.card == nil && !$0.ended }
            if waiting {
                logger.error("UCM helper said nothing: killed", metadata: ["card": "\(cardName)", "timeout": "\(timeout)"])
                _ = process.send(.kill)
            }
        }
    }

    /// Reads the helper's lines on `loop`: the hello goes to `announce` (nil if it is an
    /// error), replies are logged; at its end (`announce(nil)` if it had announced) it is reaped.
    func read(on loop: any PollLoop, announce: @escaping @Sendable (UCMCard?) -> Void) {
        loop.watch(fd: output.rawValue) { [self] in
            let chunk: [UInt8]
            do throws(Errno) {
                chunk = try output.read(upTo: 4096)
            } catch {
                if error.code == .wouldBlock { return true }
                chunk = []
            }
            if chunk.isEmpty {
                ended(announce: announce)
                return false
            }
            for line in lines(chunk) { handle(line, announce: announce) }
            return true
        }
    }

    /// The complete lines in what was read so far; a line over the limit is dropped.
    private func lines(_ chunk: [UInt8]) -> [[UInt8]] {
        state.withLock { $0.lines.feed(chunk) }.compactMap { line in
            guard case .line(let bytes) = line else {
                logger.warning("UCM helper line over \(UCMLineSplitter.maximumLineLength) bytes: dropped", metadata: ["card": "\(cardName)"])
                return nil
            }
            return bytes
        }
    }

    private func handle(_ line: [UInt8], announce: @Sendable (UCMCard?) -> Void) {
        let announced = state.withLock { $0.card != nil }
        guard announced else {
            do throws(ScenarioError) {
                let card = try UCMCard.parseHello(line)
                state.withLock { $0.card = card }
                logger.info(
                    "UCM card",
                    metadata: ["card": "\(cardName)", "verbs": "\(card.verbs.joined(separator: ","))", "ports": "\(card.ports.map(\.port.uid).joined(separator: ","))"])
                announce(card)
            } catch {
                logger.error("UCM helper: no ports from it; the card keeps udev's", metadata: ["card": "\(cardName)", "error": "\(error)"])
                stop()
            }
            return
        }
        // A jack the helper saw change: the card again, with the jack's new value.
        if let (control, plugged) = UCMCard.parseJackEvent(line) {
            let card: UCMCard? = state.withLock { state in
                guard state.card?.jacks[control] != plugged else { return nil }
                state.card?.jacks[control] = plugged
                return state.card
            }
            logger.debug("UCM jack", metadata: ["card": "\(cardName)", "jack": "\(control)", "plugged": "\(plugged)"])
            if let card { announce(card) }
            return
        }
        // Replies: logged.
        let text = String(decoding: line, as: UTF8.self)
        if text.hasPrefix("{\"error\"") {
            logger.warning("UCM helper refused a request", metadata: ["card": "\(cardName)", "reply": "\(text)"])
            state.withLock { $0.requested = nil }
        } else {
            logger.debug("UCM helper", metadata: ["card": "\(cardName)", "line": "\(text)"])
        }
    }

    private func ended(announce: @Sendable (UCMCard?) -> Void) {
        state.withLock { state in
            state.card = nil
            state.ended = true
        }
        let process = self.process
        let logger = self.logger
        let card = cardName
        _ = startThread {
            let termination = try? process.wait()
            logger.notice("UCM helper ended", metadata: ["card": "\(card)", "termination": "\(termination.map { "\($0)" } ?? "unknown")"])
        }
        announce(nil)
    }

    func apply(route: Route, configuration: SessionConfiguration?) {
        let request: [UInt8]? = state.withLock { state in
            guard let card = state.card else { return nil }
            let target = card.target(route: route, configuration: configuration)
            guard state.requested != target else { return nil }
            state.requested = target
            return target.request.bytes + [UInt8(ascii: "\n")]
        }
        guard let request else { return }
        input.withLock { input in
            do throws(Errno) {
                // Borrowed: nil once stopped.
                guard try input?.writeAll(request) != nil else { return }
                logger.debug("UCM request", metadata: ["card": "\(cardName)", "request": "\(String(decoding: request.dropLast(), as: UTF8.self))"])
            } catch {
                logger.warning("UCM helper not reading: request not sent", metadata: ["card": "\(cardName)", "error": "\(error)"])
                state.withLock { $0.requested = nil }
            }
        }
    }

    /// Closes its stdin: it finishes its line and exits; the reader reaps it.
    func stop() {
        input.withLock { $0 = nil }
    }
}
