// The real LogindWatcher (sd-bus) against python-dbusmock's logind template on a private
// bus. Each test starts and stops its own bus and mock.
import AudioRouteDBus
import AudioRouteSystem
import AudioRouteTestKit
import AudioRouteWatchers
import Glibc
import Logging
import Synchronization
import Testing

/// Collects the watcher's events in the background.
private final class Collected: Sendable {
    private let state = Mutex<(events: [SystemEvent], ended: Bool)>(([], false))

    init(_ stream: AsyncStream<SystemEvent>) {
        Task { [self] in
            for await event in stream { state.withLock { $0.events.append(event) } }
            state.withLock { $0.ended = true }
        }
    }

    var events: [SystemEvent] { state.withLock { $0.events } }
    var ended: Bool { state.withLock { $0.ended } }

    /// Waits (10 s at most) until `condition` holds of the events.
    func until(_ what: String, _ condition: ([SystemEvent]) -> Bool) async throws {
        for _ in 0..<1000 {
            if condition(events) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("timed out waiting for \(what); events: \(events)")
    }
}

private func watching(
    _ bench: LogindMock, session: LogindSessionChoice, logs: LogStore, _ body: (Collected) async throws -> Void
) async throws {
    let logger = Logger(label: "test.logind") { _ in CapturingLogHandler(store: logs) }
    let watcher = LogindWatcher(bus: .address(bench.address), session: session, logger: logger)
    let stream = try watcher.events()
    let collected = Collected(stream)
    try await body(collected)
}

@Suite("logind watcher against dbusmock", .serialized)
struct LogindWatcherTests {
    static let session = "c1"

    @Test("a logind that appears later is followed: sleep, wake, lock and unlock, and its departure unlocks")
    func lateLogindSleepWakeAndLock() async throws {
        let bench = try await LogindMock()
        defer { bench.close() }
        let logs = LogStore()
        try await watching(bench, session: .user(id: Self.session, pid: 1, uid: 1000), logs: logs) { collected in
            try await waitFor("the watcher saying logind is absent") { logs.count(containing: "is not on the bus") == 1 }
            try await bench.startLogind()
            try await bench.addSession(Self.session)
            // Real logind announces a new session; the watcher looks for its session again.
            try await bench.emit(Logind.managerInterface, "SessionNew", "so", [.string(Self.session), .objectPath(Logind.sessionPathPrefix + "/c1")])
            try await waitFor("the session followed") { logs.count(containing: "following session \(Logind.sessionPathPrefix)/c1") >= 1 }

            try await bench.setLockedHint(Self.session, true)
            try await collected.until("the lock") { $0 == [.screenLocked(true)] }
            try await bench.emit(Logind.managerInterface, "PrepareForSleep", "b", [.bool(true)])
            try await bench.emit(Logind.managerInterface, "PrepareForSleep", "b", [.bool(false)])
            try await bench.setLockedHint(Self.session, false)
            try await collected.until("sleep, wake and unlock") { $0 == [.screenLocked(true), .sleeping, .woke, .screenLocked(false)] }

            // Locked when logind goes: nobody vouches for the lock any more, so it is lifted.
            try await bench.setLockedHint(Self.session, true)
            try await collected.until("the second lock") { $0.last == .screenLocked(true) }
            bench.stopLogind()
            try await collected.until("the unlock on logind's departure") { $0.count == 6 && $0.last == .screenLocked(false) }
            #expect(!collected.ended)
            #expect(logs.count(containing: "owner changed") == 2)
            // Said once, not once per look.
            #expect(logs.count(containing: "is not on the bus") == 1)
        }
    }

    @Test("a lost bus lifts the lock and ends the events")
    func lostBusUnlocks() async throws {
        let bench = try await LogindMock()
        defer { bench.close() }
        try await bench.startLogind()
        try await bench.addSession(Self.session)
        try await bench.setLockedHint(Self.session, true)
        let logs = LogStore()
        try await watching(bench, session: .user(id: Self.session, pid: 1, uid: 1000), logs: logs) { collected in
            try await collected.until("the lock") { $0 == [.screenLocked(true)] }
            bench.closeBus()
            try await collected.until("the unlock") { $0 == [.screenLocked(true), .screenLocked(false)] }
            for _ in 0..<500 where !collected.ended { try await Task.sleep(for: .milliseconds(10)) }
            #expect(collected.ended)
        }
    }

    @Test("a lock held at start is reported at once")
    func lockedAtStart() async throws {
        let bench = try await LogindMock()
        defer { bench.close() }
        try await bench.startLogind()
        try await bench.addSession(Self.session)
        try await bench.setLockedHint(Self.session, true)
        let logs = LogStore()
        try await watching(bench, session: .user(id: Self.session, pid: 1, uid: 1000), logs: logs) { collected in
            try await collected.until("the lock read at start") { $0 == [.screenLocked(true)] }
        }
    }

    @Test("the system instance follows no session: sleep and wake only")
    func systemInstanceSleepOnly() async throws {
        let bench = try await LogindMock()
        defer { bench.close() }
        try await bench.startLogind()
        try await bench.addSession(Self.session)
        let logs = LogStore()
        try await watching(bench, session: .noSession, logs: logs) { collected in
            try await waitFor("the watch") { logs.count(containing: "logind: watching") == 1 }
            try await bench.setLockedHint(Self.session, true)
            try await bench.emit(Logind.managerInterface, "PrepareForSleep", "b", [.bool(false)])
            try await collected.until("the wake") { $0 == [.woke] }
            #expect(collected.events == [.woke])
        }
    }

    @Test("a user daemon outside any session follows its user's display session")
    func displaySessionOfTheUser() async throws {
        let bench = try await LogindMock()
        defer { bench.close() }
        try await bench.startLogind()
        try await bench.addSession(Self.session)
        // The template's GetSessionByPID is missing (as for a process in no session): the user's
        // Display is the way. Set as logind sets it when a graphical session starts. (The
        // template's own GetUser fails on its uint32 argument: replaced.)
        _ = try await bench.client.call(
            destination: Logind.service, path: Logind.managerPath, interface: "org.freedesktop.DBus.Mock", member: "AddMethod",
            signature: "sssss",
            arguments: [.string(Logind.managerInterface), .string("GetUser"), .string("u"), .string("o"), .string("ret = '/org/freedesktop/login1/user/%d' % args[0]")])
        _ = try await bench.client.call(
            destination: Logind.service, path: "/org/freedesktop/login1/user/1000", interface: "org.freedesktop.DBus.Properties",
            member: "Set", signature: "ssv",
            arguments: [.string(Logind.userInterface), .string("Display"), .variant(.structure([.string(Self.session), .objectPath(Logind.sessionPathPrefix + "/c1")]))])
        try await bench.setLockedHint(Self.session, true)
        let logs = LogStore()
        try await watching(bench, session: .user(id: nil, pid: 1, uid: 1000), logs: logs) { collected in
            do {
                try await collected.until("the display session's lock") { $0 == [.screenLocked(true)] }
            } catch {
                Issue.record("\(logs.all)")
                throw error
            }
            // Said in one line, without the mock's traceback.
            #expect(logs.count(containing: "following session \(Logind.sessionPathPrefix)/c1 (GetSessionByPID: call GetSessionByPID: org.freedesktop.DBus.Error.UnknownMethod") == 1)
            #expect(logs.count(containing: "KeyError") == 0)
        }
    }

    @Test("bad data from logind is a named fault, logged once; the watch goes on")
    func badDataIsAFault() async throws {
        let bench = try await LogindMock()
        defer { bench.close() }
        try await bench.startLogind()
        try await bench.addSession(Self.session)
        let logs = LogStore()
        try await watching(bench, session: .user(id: Self.session, pid: 1, uid: 1000), logs: logs) { collected in
            try await waitFor("the session followed") { logs.count(containing: "following session") == 1 }
            try await bench.emit(Logind.managerInterface, "PrepareForSleep", "s", [.string("yes")])
            try await bench.emit(Logind.managerInterface, "PrepareForSleep", "s", [.string("yes")])
            try await bench.emit(
                path: Logind.sessionPathPrefix + "/c1", "org.freedesktop.DBus.Properties", "PropertiesChanged", "sa{sv}as",
                [.string(Logind.sessionInterface), .dictionary([.init(key: .string("LockedHint"), value: .variant(.uint32(1)))]), .array([])])
            try await bench.emit(Logind.managerInterface, "PrepareForSleep", "b", [.bool(false)])
            try await collected.until("the good signal after the bad") { $0 == [.woke] }
            #expect(logs.count(containing: "ignored wrongType: PrepareForSleep is not (b): (s)") == 1)
            #expect(logs.count(containing: "ignored wrongType: LockedHint is u, not b") == 1)
        }
    }
}

/// Waits (10 s at most) until `condition` holds.
private func waitFor(_ what: String, _ condition: () -> Bool) async throws {
    for _ in 0..<1000 {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    throw TestFailure("timed out waiting for \(what)")
}
