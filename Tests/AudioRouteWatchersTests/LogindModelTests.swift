import AudioRouteDBus
import AudioRouteWatchers
import Testing

@Suite struct LogindModelTests {
    @Test func prepareForSleepTrueIsSleepingAndFalseIsWoke() {
        #expect(Logind.prepareForSleep([.bool(true)]) == .success(.sleeping))
        #expect(Logind.prepareForSleep([.bool(false)]) == .success(.woke))
    }

    @Test(arguments: [[DBusValue](), [.string("true")], [.uint32(1)], [.bool(true), .bool(false)], [.variant(.bool(true))]])
    func prepareForSleepOfAnotherShapeIsAWrongTypeFault(args: [DBusValue]) throws {
        guard case .failure(let fault) = Logind.prepareForSleep(args) else {
            Issue.record("accepted \(args)")
            return
        }
        #expect(fault.kind == .wrongType)
        #expect(fault.description.contains("PrepareForSleep is not (b)"))
    }

    static func changed(_ interface: String, _ properties: [(String, DBusValue)], invalidated: [String] = []) -> [DBusValue] {
        [
            .string(interface),
            .dictionary(properties.map { DBusValue.Entry(key: .string($0.0), value: .variant($0.1)) }),
            .array(invalidated.map { .string($0) }),
        ]
    }

    @Test func lockedHintFromPropertiesChanged() {
        let session = Logind.sessionInterface
        #expect(Logind.lockedHint(propertiesChanged: Self.changed(session, [("LockedHint", .bool(true))])) == .success(.value(true)))
        #expect(
            Logind.lockedHint(propertiesChanged: Self.changed(session, [("IdleHint", .bool(true)), ("LockedHint", .bool(false))]))
                == .success(.value(false)))
        #expect(Logind.lockedHint(propertiesChanged: Self.changed(session, [("IdleHint", .bool(true))])) == .success(.untouched))
        #expect(Logind.lockedHint(propertiesChanged: Self.changed(session, [], invalidated: ["LockedHint"])) == .success(.invalidated))
        // Another interface's LockedHint is not the session's.
        #expect(Logind.lockedHint(propertiesChanged: Self.changed(Logind.userInterface, [("LockedHint", .bool(true))])) == .success(.untouched))
    }

    @Test func lockedHintOfAnotherTypeOrABadSignalIsAFault() {
        let session = Logind.sessionInterface
        guard case .failure(let fault) = Logind.lockedHint(propertiesChanged: Self.changed(session, [("LockedHint", .string("yes"))])) else {
            Issue.record("a string LockedHint was taken")
            return
        }
        #expect(fault.kind == .wrongType && fault.description.contains("LockedHint is s, not b"))
        guard case .failure(let bad) = Logind.lockedHint(propertiesChanged: [.string(session), .bool(true)]) else {
            Issue.record("a (sb) PropertiesChanged was taken")
            return
        }
        #expect(bad.kind == .wrongType && bad.description.contains("PropertiesChanged is not (sa{sv}as)"))
    }

    @Test func repliesThatFindTheSession() {
        #expect(Logind.objectPath(reply: [.objectPath("/org/freedesktop/login1/session/_32")], of: "GetSession") == .success("/org/freedesktop/login1/session/_32"))
        guard case .failure(let fault) = Logind.objectPath(reply: [.string("/x")], of: "GetSessionByPID") else {
            Issue.record("a string for an object path was taken")
            return
        }
        #expect(fault.description.contains("GetSessionByPID reply is not (o)"))
        let display = DBusValue.variant(.structure([.string("2"), .objectPath("/org/freedesktop/login1/session/_32")]))
        #expect(Logind.displaySession(getReply: [display]) == .success("/org/freedesktop/login1/session/_32"))
        // "/" is logind's "no display session".
        #expect(Logind.displaySession(getReply: [.variant(.structure([.string(""), .objectPath("/")]))]) == .success(nil))
        if case .success = Logind.displaySession(getReply: [.variant(.objectPath("/s"))]) { Issue.record("a bare path was taken for (so)") }
        #expect(Logind.lockedHint(getReply: [.variant(.bool(true))]) == .success(true))
        if case .success = Logind.lockedHint(getReply: [.variant(.uint32(1))]) { Issue.record("a uint32 was taken for LockedHint") }
    }

    @Test func theSystemInstanceFollowsNoSessionAUserDaemonItsOwn() {
        #expect(LogindSessionChoice.forDaemon(system: true, environment: ["XDG_SESSION_ID": "3"], pid: 10, uid: 1000) == .noSession)
        #expect(LogindSessionChoice.forDaemon(system: false, environment: ["XDG_SESSION_ID": "3"], pid: 10, uid: 1000) == .user(id: "3", pid: 10, uid: 1000))
        #expect(LogindSessionChoice.forDaemon(system: false, environment: ["XDG_SESSION_ID": ""], pid: 10, uid: 1000) == .user(id: nil, pid: 10, uid: 1000))
    }
}
