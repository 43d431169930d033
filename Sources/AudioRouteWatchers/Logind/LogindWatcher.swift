// The logind watcher: follows org.freedesktop.login1 on the system bus for sleep and wake
// (Manager.PrepareForSleep) and one session's screen lock (Session.LockedHint). Its connection
// is read as one source of a PollLoop: the daemon's executor (no thread of its own), or a
// thread of its own for a process without one (tests).
import AudioRouteSystem
import AudioRouteDBus
import Logging
import Synchronization

/// Why the logind watcher could not start.
public enum LogindWatcherError: Error, Sendable, CustomStringConvertible {
    /// The thread of its own (without a loop given) could not be made.
    case threadFailed(Errno)

    public var description: String {
        switch self {
        case .threadFailed(let error): return "cannot start the logind thread: \(error)"
        }
    }
}

/// Watches logind and reports `SystemEvent`s. No logind (no system bus, the name not owned) is a
/// normal state, logged once; a logind that appears later is picked up.
public struct LogindWatcher: Sendable {
    public let bus: BusChoice
    public let session: LogindSessionChoice
    public let loop: (any PollLoop)?
    public let logger: Logger
    /// How long a call to logind may block the loop (finding the session, reading its lock).
    public static let callTimeoutMicroseconds: UInt64 = 1_000_000

    /// - Parameters:
    ///   - bus: `.system` (honours DBUS_SYSTEM_BUS_ADDRESS) or an explicit address.
    ///   - session: whose lock state to follow.
    ///   - loop: the loop that reads the connection; nil: a thread of the watcher's own.
    public init(
        bus: BusChoice = .system, session: LogindSessionChoice, loop: (any PollLoop)? = nil,
        logger: Logger = Logger(label: "audioroute.logind")
    ) {
        self.bus = bus
        self.session = session
        self.loop = loop
        self.logger = logger
    }

    /// Starts watching. The sequence ends when the bus cannot be reached or is lost, or when
    /// the consumer stops iterating (which closes the connection).
    public func events() throws(LogindWatcherError) -> AsyncStream<SystemEvent> {
        let reader: any PollLoop
        let ownThread: PollThread?
        if let loop {
            reader = loop
            ownThread = nil
        } else {
            do {
                let thread = try PollThread(name: "audioroute-login")
                reader = thread
                ownThread = thread
            } catch {
                throw .threadFailed(error)
            }
        }
        let (stream, continuation) = AsyncStream.makeStream(of: SystemEvent.self, bufferingPolicy: .bufferingNewest(64))
        let state = LogindLoop(
            busChoice: bus, session: session, reader: reader, ownThread: ownThread, continuation: continuation, logger: logger)
        continuation.onTermination = { _ in reader.schedule { state.stop() } }
        reader.schedule { state.start() }
        return stream
    }
}

/// The connection, owned by the loop's thread.
private final class LogindConnection: @unchecked Sendable {
    let connection: BusConnection
    init(_ connection: consuming BusConnection) { self.connection = connection }
}

/// The watcher's state. Touched only on the reader's thread (its calls and its source's handler).
final class LogindLoop: @unchecked Sendable {
    private let busChoice: BusChoice
    private let session: LogindSessionChoice
    private let reader: any PollLoop
    private let ownThread: PollThread?
    private let continuation: AsyncStream<SystemEvent>.Continuation
    private let logger: Logger

    private var box: LogindConnection?
    private var source: UInt64?
    private var owner: String?
    /// The session object whose LockedHint is followed.
    private var sessionPath: String?
    /// The lock state last reported (unlocked until logind says otherwise).
    private var reportedLocked = false
    private var loggedFaults: Set<LogindFault> = []

    /// At most this many messages per turn, so the loop's other sources are not held up.
    static let messagesPerTurn = 64

    init(
        busChoice: BusChoice, session: LogindSessionChoice, reader: any PollLoop, ownThread: PollThread?,
        continuation: AsyncStream<SystemEvent>.Continuation, logger: Logger
    ) {
        self.busChoice = busChoice
        self.session = session
        self.reader = reader
        self.ownThread = ownThread
        self.continuation = continuation
        self.logger = logger
    }

    func start() {
        let connection: BusConnection
        do {
            connection = try BusConnection(busChoice)
        } catch {
            logger.notice("logind: no D-Bus system bus (\(error)); sleep, wake and the screen lock are not followed")
            finish()
            return
        }
        let box = LogindConnection(connection)
        do {
            try box.connection.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(Logind.service)'")
            // PrepareForSleep, SessionNew and SessionRemoved.
            try box.connection.addMatch("type='signal',sender='\(Logind.service)',path='\(Logind.managerPath)',interface='\(Logind.managerInterface)'")
            if case .user = session {
                try box.connection.addMatch(
                    "type='signal',sender='\(Logind.service)',path_namespace='\(Logind.sessionPathPrefix)',"
                        + "interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',arg0='\(Logind.sessionInterface)'")
            }
            owner = try box.connection.nameOwner(Logind.service)
        } catch {
            logger.notice("logind: cannot watch the system bus (\(error)); sleep, wake and the screen lock are not followed")
            finish()
            return
        }
        self.box = box
        source = reader.watch(
            fd: box.connection.fd, events: { [weak box] in box.map { PollEvents(truncating: $0.connection.events) } ?? [] },
            { [self] in readTurn() })
        logger.debug("logind: watching", metadata: ["session": "\(session)"])
        if owner == nil {
            logger.notice("logind: \(Logind.service) is not on the bus; sleep, wake and the screen lock are not followed until it is")
        } else {
            followSession()
        }
        // Messages sd-bus read during the set-up calls are not shown by the socket.
        reader.schedule { [self] in
            if !readTurn() { stop() }
        }
    }

    /// Ends the watch: the consumer stopped, or the bus is gone. Closes the connection.
    func stop() {
        if let source { reader.unwatch(source) }
        source = nil
        box = nil
        // Nobody will say when the lock ends: it is lifted now (unheard if the consumer is gone).
        reportLocked(false)
        finish()
    }

    private func finish() {
        continuation.finish()
        ownThread?.stop()
    }

    /// The source's handler: the messages sd-bus has. False once the connection is gone.
    private func readTurn() -> Bool {
        guard let box else { return false }
        for _ in 0..<Self.messagesPerTurn {
            var more = false
            do {
                if let message = try box.connection.process(more: &more) {
                    if !handle(message) {
                        stop()
                        return false
                    }
                }
            } catch {
                logger.error("logind: lost the bus: \(error)")
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

    /// One incoming message; false when the connection is finished.
    private func handle(_ message: borrowing BusMessage) -> Bool {
        guard message.kind == .signal, let interface = message.interface, let member = message.member else { return true }
        let args: [DBusValue]
        do {
            // Bounded: logind's signals are small; a larger one is not logind's.
            args = try message.readAll(limits: DecodeLimits(maxValues: 256, maxStringBytes: 4096, maxBytes: 64 * 1024))
        } catch {
            report(LogindFault(.malformedMessage, "\(interface).\(member): \(error)"))
            return true
        }
        let sender = message.sender
        let path = message.path ?? ""
        switch (interface, member) {
        case ("org.freedesktop.DBus.Local", "Disconnected"):
            logger.error("logind: the bus connection closed")
            return false
        case ("org.freedesktop.DBus", "NameOwnerChanged"):
            guard sender == "org.freedesktop.DBus", args.count == 3, case .string(let name) = args[0], name == Logind.service,
                case .string(let newOwner) = args[2]
            else { return true }
            ownerChanged(to: newOwner.isEmpty ? nil : newOwner)
            return true
        case (Logind.managerInterface, _), ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            break
        default:
            // NameAcquired and the like: not logind's.
            return true
        }
        guard let sender, sender == owner else {
            report(LogindFault(.foreignSender, "\(interface).\(member) on \(path) from \(sender ?? "(no sender)")"))
            return true
        }
        switch (interface, member) {
        case (Logind.managerInterface, "PrepareForSleep"):
            switch Logind.prepareForSleep(args) {
            case .success(let event):
                logger.info("logind: \(event == .sleeping ? "going to sleep" : "woke from sleep")")
                continuation.yield(event)
            case .failure(let fault): report(fault)
            }
        case (Logind.managerInterface, "SessionNew"), (Logind.managerInterface, "SessionRemoved"):
            // The user's display session may be the new one, or the one that ended: looked for
            // again (a few calls, at each login or logout).
            followSession()
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard path == sessionPath else { return true }
            switch Logind.lockedHint(propertiesChanged: args) {
            case .success(.value(let locked)): reportLocked(locked)
            case .success(.invalidated): readLockedHint()
            case .success(.untouched): break
            case .failure(let fault): report(fault)
            }
        default:
            break
        }
        return true
    }

    /// logind came, went or was replaced: the session is looked for again on the new one.
    private func ownerChanged(to newOwner: String?) {
        logger.notice("logind: \(Logind.service) owner changed from \(owner ?? "(none)") to \(newOwner ?? "(none)")")
        owner = newOwner
        loggedFaults.removeAll()
        if newOwner == nil {
            sessionPath = nil
            // Nobody vouches for a lock any more: audio is not kept silenced on a stale state.
            reportLocked(false)
        } else {
            followSession()
        }
    }

    /// Finds the session to follow (the choice's order) and reads its lock state.
    private func followSession() {
        guard case .user(let id, let pid, let uid) = session, let box, let owner else { return }
        var found: String?
        var tried: [String] = []
        if let id {
            found = sessionCall(box.connection, owner, "GetSession", tried: &tried) { message throws(BusError) in try message.append("s", id) }
        } else {
            found = sessionCall(box.connection, owner, "GetSessionByPID", tried: &tried) { message throws(BusError) in try message.append(uint32: pid) }
            if found == nil, let user = sessionCall(box.connection, owner, "GetUser", tried: &tried, { message throws(BusError) in try message.append(uint32: uid) }) {
                found = displaySession(box.connection, owner, user: user, tried: &tried)
            }
        }
        if found == nil {
            logger.info("logind: no session to follow (\(tried.joined(separator: "; "))); the screen lock is not followed")
        } else if found != sessionPath {
            logger.info("logind: following session \(found ?? "")\(tried.isEmpty ? "" : " (\(tried.joined(separator: "; ")))")")
        }
        sessionPath = found
        if found == nil {
            reportLocked(false)
        } else {
            readLockedHint()
        }
    }

    /// A Manager call replying one object path; nil (and why, in `tried`) when it fails.
    private func sessionCall(
        _ bus: borrowing BusConnection, _ owner: String, _ member: String, tried: inout [String],
        _ arguments: (borrowing BusMessage) throws(BusError) -> Void
    ) -> String? {
        do {
            let call = try bus.newMethodCall(destination: owner, path: Logind.managerPath, interface: Logind.managerInterface, member: member)
            try arguments(call)
            let reply = try bus.call(call, timeoutUsec: LogindWatcher.callTimeoutMicroseconds)
            switch Logind.objectPath(reply: try reply.readAll(), of: member) {
            case .success(let path): return path
            case .failure(let fault):
                report(fault)
                tried.append("\(member): \(fault)")
            }
        } catch {
            tried.append("\(member): \(Self.brief(error))")
        }
        return nil
    }

    /// An error's first line, 160 characters at most: a remote error's message can be a whole
    /// traceback, not for the journal.
    static func brief(_ error: BusError) -> String {
        let line = "\(error)".split(separator: "\n", maxSplits: 1).first.map(String.init) ?? ""
        return line.count > 160 ? String(line.prefix(160)) + "…" : line
    }

    private func displaySession(_ bus: borrowing BusConnection, _ owner: String, user: String, tried: inout [String]) -> String? {
        do {
            let reply = try getProperty(bus, owner, path: user, interface: Logind.userInterface, name: "Display")
            switch Logind.displaySession(getReply: reply) {
            case .success(let path?): return path
            case .success(nil): tried.append("User.Display: none")
            case .failure(let fault):
                report(fault)
                tried.append("User.Display: \(fault)")
            }
        } catch {
            tried.append("User.Display: \(Self.brief(error))")
        }
        return nil
    }

    private func readLockedHint() {
        guard let box, let owner, let sessionPath else { return }
        do {
            let reply = try getProperty(box.connection, owner, path: sessionPath, interface: Logind.sessionInterface, name: "LockedHint")
            switch Logind.lockedHint(getReply: reply) {
            case .success(let locked): reportLocked(locked)
            case .failure(let fault): report(fault)
            }
        } catch {
            logger.warning("logind: cannot read LockedHint of \(sessionPath): \(Self.brief(error))")
        }
    }

    private func getProperty(
        _ bus: borrowing BusConnection, _ owner: String, path: String, interface: String, name: String
    ) throws(BusError) -> [DBusValue] {
        let call = try bus.newMethodCall(destination: owner, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get")
        try call.append("s", interface)
        try call.append("s", name)
        let reply = try bus.call(call, timeoutUsec: LogindWatcher.callTimeoutMicroseconds)
        return try reply.readAll(limits: DecodeLimits(maxValues: 16, maxStringBytes: 4096, maxBytes: 8192))
    }

    private func reportLocked(_ locked: Bool) {
        guard locked != reportedLocked else { return }
        reportedLocked = locked
        logger.info("logind: screen \(locked ? "locked" : "unlocked")")
        continuation.yield(.screenLocked(locked))
    }

    /// Logs each distinct fault once.
    private func report(_ fault: LogindFault) {
        guard !loggedFaults.contains(fault) else { return }
        // Bounded: a flood of distinct garbage must not grow memory without limit.
        if loggedFaults.count >= 256 { loggedFaults.removeAll() }
        loggedFaults.insert(fault)
        logger.warning("logind: ignored \(fault)")
    }
}
