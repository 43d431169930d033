// The sound-server watcher: which server (PipeWire, PulseAudio) plays the user's audio, and
// which cards it holds. The sockets in the runtime directory are checked by a connect (a killed
// server leaves its socket file); the session bus says when to look again: the PulseAudio
// protocol's name (owned by PulseAudio and by pipewire-pulse) and the device reservation names
// (org.freedesktop.ReserveDevice1.Audio<N>, owned by the server for each card it holds).
// Read on a PollLoop, as the logind watcher is. No libpulse, no libpipewire: nothing is spoken
// to the servers.
import AudioRouteCore
import AudioRouteDBus
import AudioRouteSystem
import Logging

/// Watches for PipeWire and PulseAudio and reports each `SoundEngine` that differs from the last.
public struct SoundServerWatcher: Sendable {
    /// The user's runtime directory (`XDG_RUNTIME_DIR`): `pipewire-0` and `pulse/native`.
    public let runtimeDirectory: String
    /// The user's session bus address; nil: none (the sockets alone, looked at once).
    public let sessionBus: String?
    public let loop: (any PollLoop)?
    public let logger: Logger

    /// The PulseAudio protocol's bus name.
    public static let pulseName = "org.pulseaudio.Server"
    /// The prefix of the device reservation names.
    public static let reservationNamespace = "org.freedesktop.ReserveDevice1"

    public init(runtimeDirectory: String, sessionBus: String?, loop: (any PollLoop)? = nil, logger: Logger = Logger(label: "audioroute.soundserver")) {
        self.runtimeDirectory = runtimeDirectory
        self.sessionBus = sessionBus
        self.loop = loop
        self.logger = logger
    }

    /// What `SoundServerWatcher.start()` gives: the engines, and a way to look again.
    public struct Watch: Sendable {
        /// The first engine at once, then each change, and the engine after each bus event that
        /// concerns a server, changed or not (the consumer may look again later). Ends when the
        /// bus is lost, or when the consumer stops iterating.
        public let engines: AsyncStream<SoundEngine>
        private let state: SoundServerLoop
        private let reader: any PollLoop

        fileprivate init(engines: AsyncStream<SoundEngine>, state: SoundServerLoop, reader: any PollLoop) {
            self.engines = engines
            self.state = state
            self.reader = reader
        }

        /// Checks the sockets again (a server that stopped without a bus event: PipeWire alone).
        public func lookAgain() {
            let state = self.state
            reader.schedule { state.look() }
        }
    }

    /// Starts watching.
    public func start() throws(Errno) -> Watch {
        let reader: any PollLoop
        let ownThread: PollThread?
        if let loop {
            reader = loop
            ownThread = nil
        } else {
            let thread = try PollThread(name: "audioroute-sound")
            reader = thread
            ownThread = thread
        }
        let (stream, continuation) = AsyncStream.makeStream(of: SoundEngine.self, bufferingPolicy: .bufferingNewest(8))
        let state = SoundServerLoop(
            runtimeDirectory: runtimeDirectory, sessionBus: sessionBus, reader: reader, ownThread: ownThread, continuation: continuation,
            logger: logger)
        continuation.onTermination = { _ in reader.schedule { state.stop() } }
        reader.schedule { state.start() }
        return Watch(engines: stream, state: state, reader: reader)
    }
}

private final class SoundServerConnection: @unchecked Sendable {
    let connection: BusConnection
    init(_ connection: consuming BusConnection) { self.connection = connection }
}

/// The watcher's state, touched only on the reader's thread.
final class SoundServerLoop: @unchecked Sendable {
    private let runtimeDirectory: String
    private let sessionBus: String?
    private let reader: any PollLoop
    private let ownThread: PollThread?
    private let continuation: AsyncStream<SoundEngine>.Continuation
    private let logger: Logger

    private var box: SoundServerConnection?
    private var source: UInt64?
    private var reserved: Set<Int> = []
    private var last: SoundEngine?
    private var stopped = false

    static let messagesPerTurn = 64
    /// Most reservation names kept: a bus full of made-up names must not grow memory.
    static let maxReservations = 64

    init(
        runtimeDirectory: String, sessionBus: String?, reader: any PollLoop, ownThread: PollThread?,
        continuation: AsyncStream<SoundEngine>.Continuation, logger: Logger
    ) {
        self.runtimeDirectory = runtimeDirectory
        self.sessionBus = sessionBus
        self.reader = reader
        self.ownThread = ownThread
        self.continuation = continuation
        self.logger = logger
    }

    func start() {
        guard let sessionBus else {
            logger.notice("sound server: no session bus; the sockets are looked at once, not followed")
            look()
            return
        }
        let box: SoundServerConnection
        do {
            box = SoundServerConnection(try BusConnection(.address(sessionBus)))
            try box.connection.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(SoundServerWatcher.pulseName)'")
            try box.connection.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0namespace='\(SoundServerWatcher.reservationNamespace)'"
            )
            reserved = try listReservations(box.connection)
        } catch {
            logger.notice("sound server: cannot watch the session bus (\(error)); the sockets are looked at once, not followed")
            look(busSeen: false)
            return
        }
        self.box = box
        source = reader.watch(
            fd: box.connection.fd, events: { [weak box] in box.map { PollEvents(truncating: $0.connection.events) } ?? [] },
            { [self] in readTurn() })
        look()
        reader.schedule { [self] in
            if !readTurn() { stop() }
        }
    }

    func stop() {
        guard !stopped else { return }
        stopped = true
        if let source { reader.unwatch(source) }
        source = nil
        box = nil
        continuation.finish()
        ownThread?.stop()
    }

    /// Probes the sockets and reports the engine if it changed, or, with `always`, in any case
    /// (a bus event: a server going may still accept for a moment, so the consumer looks again).
    func look(busSeen: Bool? = nil, always: Bool = false) {
        guard !stopped else { return }
        let observation = SoundServerObservation(
            pipewire: Self.answer(SocketProbe.probe(runtimeDirectory + "/pipewire-0")),
            pulse: Self.answer(SocketProbe.probe(runtimeDirectory + "/pulse/native")), reservedCards: reserved,
            busSeen: busSeen ?? (box != nil))
        let engine = SoundEngine.decide(observation)
        if engine != last {
            last = engine
            logger.notice("sound server: \(engine.summary) (\(engine.signal))")
        } else if !always {
            return
        }
        continuation.yield(engine)
    }

    static func answer(_ result: SocketProbeResult) -> SocketAnswer {
        switch result {
        case .absent: .absent
        case .refused: .refused
        case .live(_, let program): .live(program: program)
        }
    }

    private func listReservations(_ bus: borrowing BusConnection) throws(BusError) -> Set<Int> {
        let call = try bus.newMethodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "ListNames")
        let reply = try bus.call(call, timeoutUsec: 1_000_000)
        // Bounded: a session bus has hundreds of names, not tens of thousands.
        let values = try reply.readAll(limits: DecodeLimits(maxValues: 16384, maxStringBytes: 255, maxBytes: 1 << 20))
        guard case .array(let names)? = values.first else { return [] }
        var cards: Set<Int> = []
        for case .string(let name) in names {
            if let card = SoundEngine.reservedCard(busName: name), cards.count < Self.maxReservations { cards.insert(card) }
        }
        return cards
    }

    private func readTurn() -> Bool {
        guard let box else { return false }
        var changed = false
        defer { if changed { look(always: true) } }
        for _ in 0..<Self.messagesPerTurn {
            var more = false
            do {
                if let message = try box.connection.process(more: &more) {
                    switch handle(message) {
                    case .finished:
                        stop()
                        return false
                    case .changed: changed = true
                    case .nothing: break
                    }
                }
            } catch {
                logger.error("sound server: lost the session bus: \(error)")
                stop()
                return false
            }
            if !more { return true }
        }
        reader.schedule { [self] in
            if self.box != nil, !readTurn() { stop() }
        }
        return true
    }

    private enum Handled { case nothing, changed, finished }

    private func handle(_ message: borrowing BusMessage) -> Handled {
        guard message.kind == .signal, let interface = message.interface, let member = message.member else { return .nothing }
        if interface == "org.freedesktop.DBus.Local" && member == "Disconnected" {
            logger.error("sound server: the session bus connection closed")
            return .finished
        }
        guard interface == "org.freedesktop.DBus", member == "NameOwnerChanged", message.sender == "org.freedesktop.DBus",
            let args = try? message.readAll(limits: DecodeLimits(maxValues: 8, maxStringBytes: 255, maxBytes: 1024)), args.count == 3,
            case .string(let name) = args[0], case .string(let newOwner) = args[2]
        else { return .nothing }
        if let card = SoundEngine.reservedCard(busName: name) {
            if newOwner.isEmpty {
                reserved.remove(card)
            } else if reserved.count < Self.maxReservations {
                reserved.insert(card)
            }
            return .changed
        }
        return name == SoundServerWatcher.pulseName ? .changed : .nothing
    }
}
