// Access on the system bus (docs/security.md): reads and a session's own calls
// for everyone; routing-wide changes for root and group audio only, decided by
// the caller's credentials as the bus reports them.
import AudioRouteIPC
import AudioRouteDaemon
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct AccessPolicyTests {
    static let audio: UInt32 = 29
    let policy = AccessPolicy(enforced: true, audioGroup: audio)

    func allows(_ member: String, uid: UInt32?, gids: [UInt32] = [], interface: String = DBusAPI.managerInterface) -> Bool {
        policy.allows(interface: interface, member: member, credentials: .success(BusCredentials(uid: uid, gids: gids)))
    }

    @Test func routingWideChangesNeedRootOrGroupAudio() {
        for (interface, member) in [
            (DBusAPI.managerInterface, "SetPortPriority"), (DBusAPI.managerInterface, "SetSilentMode"),
            (DBusAPI.sessionInterface, "OverrideOutput"), (DBusAPI.sessionInterface, "SetPreferredInput"),
        ] {
            #expect(allows(member, uid: 0, interface: interface))
            #expect(allows(member, uid: 1000, gids: [100, Self.audio], interface: interface))
            #expect(!allows(member, uid: 1000, gids: [100, 1000], interface: interface))
            // No uid from the bus, or no credentials at all: refused (fail closed).
            #expect(!allows(member, uid: nil, interface: interface))
            #expect(!policy.allows(interface: interface, member: member, credentials: nil))
            #expect(!policy.allows(interface: interface, member: member, credentials: .failure(BusError(operation: "query", errno: EIO))))
        }
    }

    @Test func everyoneMayReadAndRunTheirOwnSessions() {
        for (interface, member) in [
            (DBusAPI.managerInterface, "OpenSession"), (DBusAPI.managerInterface, "Explain"), (DBusAPI.propertiesInterface, "Get"),
            (DBusAPI.propertiesInterface, "GetAll"), (DBusAPI.sessionInterface, "SetCategory"), (DBusAPI.sessionInterface, "SetActive"),
            (DBusAPI.sessionInterface, "Close"), (DBusAPI.introspectableInterface, "Introspect"),
        ] {
            #expect(policy.allows(interface: interface, member: member, credentials: nil))
        }
    }

    @Test func theSessionBusIsNotPoliced() {
        let open = AccessPolicy(enforced: false, audioGroup: Self.audio)
        #expect(open.allows(interface: DBusAPI.managerInterface, member: "SetSilentMode", credentials: nil))
    }

    @Test func withoutAnAudioGroupOnlyRootMayChange() {
        let rootOnly = AccessPolicy(enforced: true, audioGroup: nil)
        #expect(rootOnly.allows(interface: DBusAPI.managerInterface, member: "SetSilentMode", credentials: .success(BusCredentials(uid: 0, gids: []))))
        #expect(!rootOnly.allows(interface: DBusAPI.managerInterface, member: "SetSilentMode", credentials: .success(BusCredentials(uid: 5, gids: [29]))))
    }
}

/// The session pool's rules (SessionPool), as users meet them: each user fills 16
/// connections of 16 sessions, one at a time, as the flood of the issue did.
@Suite struct SessionPoolTests {
    var holders: [SessionPool.Holder] = []
    let pool = SessionPool(enforced: true)

    /// Opens sessions for `uid` on up to 16 connections, 16 tries each; how many it got.
    mutating func fill(uid: UInt32, privileged: Bool = false, pool: SessionPool? = nil) -> Int {
        let pool = pool ?? self.pool
        var got = 0
        for connection in 0..<16 {
            for _ in 0..<16 {
                let owner = ":\(uid).\(connection)"
                guard case .success(let place) = pool.admit(owner: owner, uid: uid, privileged: privileged, holders: holders) else { continue }
                holders.append(SessionPool.Holder(owner: owner, uid: uid, reserved: place == .reserve))
                got += 1
            }
        }
        return got
    }

    @Test mutating func noUserLocksAnotherOutAndRootKeepsItsReserve() {
        // Alone, a user gets half the open part (448 / 2), not the pool.
        #expect(fill(uid: 1000) == 224)
        #expect(fill(uid: 1001) == 448 / 3)
        // Later users get their guaranteed 16 while the open part has room: the first two left 75.
        #expect(fill(uid: 1002) == 16)
        #expect(fill(uid: 1003) == 16)
        #expect(fill(uid: 1004) == 16)
        #expect(fill(uid: 1005) == 16)
        #expect(fill(uid: 1006) == 11)
        #expect(holders.count == 448)
        // The open part is full: a newcomer is refused, naming why; root and group audio take the reserve.
        let refused = pool.admit(owner: ":9.0", uid: 1007, privileged: false, holders: holders)
        #expect(refused == .failure(SessionPool.Refusal("the 448 sessions open to every user are taken; close one first")))
        #expect(fill(uid: 0, privileged: true) == 64)
        #expect(holders.count == 512)
    }

    @Test mutating func aUserBeyondItsGuaranteedPlacesLeavesRoomForNewcomers() {
        #expect(fill(uid: 1000) == 224)
        #expect(fill(uid: 1001) == 448 / 3)
        let third = fill(uid: 1002)
        // 75 were free: 16 guaranteed, and no more, as 64 must stay for users still to come.
        #expect(third == 16)
        let more = pool.admit(owner: ":1002.15", uid: 1002, privileged: false, holders: holders)
        #expect(more == .failure(SessionPool.Refusal("user 1002 holds 16 sessions; the last 64 are kept for users who hold fewer than 16")))
        // Group audio, refused by the open part, takes the reserve instead.
        #expect(pool.admit(owner: ":1002.15", uid: 1002, privileged: true, holders: holders) == .success(.reserve))
        #expect(pool.admit(owner: ":1000.15", uid: 1000, privileged: false, holders: holders)
            == .failure(SessionPool.Refusal("user 1000 holds 224 sessions, its share while 3 users hold sessions")))
    }

    @Test mutating func theReserveIsOnlyForRootAndGroupAudio() {
        for uid in UInt32(1000)..<1040 { _ = fill(uid: uid) }
        #expect(holders.count == 448)
        #expect(holders.allSatisfy { !$0.reserved })
        #expect(fill(uid: 2000) == 0)
        #expect(fill(uid: 2001, privileged: true) == 64)
        #expect(fill(uid: 0, privileged: true) == 0)
    }

    @Test mutating func onTheSessionBusTheOneUserHasThePool() {
        let open = SessionPool(enforced: false)
        // Its limits per connection and connections per user still hold.
        #expect(fill(uid: 1000, pool: open) == 256)
        #expect(fill(uid: 1000, privileged: false, pool: open) == 0)
        // Another uid (the bus would not admit one) is alone capped by the pool.
        #expect(fill(uid: 1001, pool: open) == 256)
        #expect(fill(uid: 1002, pool: open) == 0)
    }

    @Test func aConnectionAndAUserKeepTheirLimits() {
        var holders = (0..<16).map { _ in SessionPool.Holder(owner: ":1.1", uid: 5, reserved: false) }
        #expect(pool.admit(owner: ":1.1", uid: 5, privileged: true, holders: holders)
            == .failure(SessionPool.Refusal(":1.1 already holds 16 sessions; at most 16")))
        holders = (0..<16).map { SessionPool.Holder(owner: ":1.\($0)", uid: 5, reserved: false) }
        #expect(pool.admit(owner: ":1.99", uid: 5, privileged: true, holders: holders)
            == .failure(SessionPool.Refusal("user 5 already holds sessions on 16 connections; at most 16")))
        #expect(pool.admit(owner: ":1.3", uid: 5, privileged: false, holders: holders) == .success(.open))
    }
}

/// The real thing: audiorouted --system on a private system bus, clients run as
/// root, as nobody, and as nobody in group audio (setpriv; the tests run as root).
@Suite(.serialized) struct SystemBusAccessTests {
    static let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

    // Without root no other uid can be taken (the policy itself is tested above): then this is skipped, visibly.
    @Test(.enabled(if: getuid() == 0 && getgrnam("audio") != nil, "needs root and a group audio"))
    func onlyRootAndGroupAudioMayChangeRouting() throws {
        let audio = getgrnam("audio")!.pointee.gr_gid
        let directory = try makeTemporaryDirectory()
        defer { removeTree(directory) }
        chmod(directory, 0o755)
        let bus = try makeSystemBus(in: directory)
        let daemon = try RunningDaemon(arguments: ["--system"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address], bus: bus)

        let stranger = try APIClient(address: bus.address, runAs: Self.nobody)
        let member = try APIClient(address: bus.address, runAs: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--groups=\(audio)"])
        let root = try APIClient(address: bus.address)

        // Reads and an app's own session: allowed.
        #expect(stranger.property(DBusAPI.managerPath, DBusAPI.managerInterface, "Version") == "{\"reply\": \(DBusAPI.version)}")
        let song = try stranger.openSession("music", category: "playAndRecord")
        #expect(stranger.session(song, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
        // Routing for everyone: refused, whatever the message says.
        for reply in [
            stranger.manager("SetSilentMode", "b", "[true]"), stranger.manager("SetPortPriority", "si", "[\"spk\", 10]"),
            stranger.session(song, "OverrideOutput", "s", "[\"speaker\"]"), stranger.session(song, "SetPreferredInput", "s", "[\"\"]"),
        ] {
            #expect(reply.hasPrefix("{\"error\": \"org.freedesktop.DBus.Error.AccessDenied\""), "\(reply)")
        }
        #expect(root.property(DBusAPI.managerPath, DBusAPI.managerInterface, "SilentMode") == "{\"reply\": false}")
        #expect(root.property(song, DBusAPI.sessionInterface, "Active") == "{\"reply\": true}")

        // Group audio and root may.
        #expect(member.manager("SetSilentMode", "b", "[true]") == "{\"reply\": null}")
        #expect(root.property(DBusAPI.managerPath, DBusAPI.managerInterface, "SilentMode") == "{\"reply\": true}")
        #expect(root.manager("SetSilentMode", "b", "[false]") == "{\"reply\": null}")
        #expect(root.property(DBusAPI.managerPath, DBusAPI.managerInterface, "SilentMode") == "{\"reply\": false}")
        _ = daemon
    }
}

/// The policy against eight caller identities, three of them users this test creates and
/// removes: as the bus reports them (the groups the caller had when it connected), never as
/// the message claims; calls that name no interface (D-Bus allows it) are judged like the
/// others; and the session pool's shares hold across users.
@Suite(.serialized) struct SystemBusIdentityTests {
    static let member = "audioroute-test-member"
    static let stranger = "audioroute-test-stranger"
    static let primary = "audioroute-test-primary"

    /// A system user made for the test (removed first if a killed run left it).
    struct TestUser: ~Copyable {
        let name: String
        /// - Parameters:
        ///   - groups: supplementary groups.
        ///   - primary: the primary group instead of one of the user's own name.
        init(_ name: String, groups: [String], primary: String? = nil) throws {
            _ = Self.run(["/usr/sbin/userdel", name])
            let extra = (groups.isEmpty ? [] : ["-G", groups.joined(separator: ",")]) + (primary.map { ["-N", "-g", $0] } ?? [])
            guard Self.run(["/usr/sbin/useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin"] + extra + [name]) == 0 else {
                throw TestFailure("useradd \(name) failed")
            }
            self.name = name
        }
        deinit { _ = Self.run(["/usr/sbin/userdel", name]) }

        static func run(_ command: [String]) -> Int32? {
            guard let child = try? ChildProcess(command[0], Array(command.dropFirst())) else { return nil }
            return child.wait(seconds: 30)
        }
    }

    @Test(.enabled(if: getuid() == 0 && getgrnam("audio") != nil && access("/usr/sbin/useradd", X_OK) == 0, "needs root, group audio and useradd"))
    func eightIdentitiesOnlyRootAndGroupAudioChangeRouting() throws {
        let audio = getgrnam("audio")!.pointee.gr_gid
        let memberUser = try TestUser(Self.member, groups: ["audio"])
        let strangerUser = try TestUser(Self.stranger, groups: [])
        let primaryUser = try TestUser(Self.primary, groups: [], primary: "audio")
        let directory = try makeTemporaryDirectory()
        defer { removeTree(directory) }
        chmod(directory, 0o755)
        let bus = try makeSystemBus(in: directory)
        // At its default log level: a debug line per session would fill the stderr pipe nobody reads.
        let daemon = try RunningDaemon(arguments: ["--system"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address], bus: bus, logLevel: nil)

        let setpriv = "/usr/bin/setpriv"
        let identities: [(String, [String], Bool)] = [
            ("root", [], true),
            ("nobody", [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"], false),
            ("nobody in audio", [setpriv, "--reuid=65534", "--regid=65534", "--groups=\(audio)"], true),
            ("a user in audio", [setpriv, "--reuid=\(memberUser.name)", "--regid=\(memberUser.name)", "--init-groups"], true),
            ("a user outside audio", [setpriv, "--reuid=\(strangerUser.name)", "--regid=\(strangerUser.name)", "--init-groups"], false),
            ("that user given audio", [setpriv, "--reuid=\(strangerUser.name)", "--regid=\(strangerUser.name)", "--groups=\(audio)"], true),
            // Groups as the caller had them when it connected, not as the account lists them.
            ("a user in audio who dropped it", [setpriv, "--reuid=\(memberUser.name)", "--regid=\(memberUser.name)", "--clear-groups"], false),
            ("a user whose primary group is audio", [setpriv, "--reuid=\(primaryUser.name)", "--regid=audio", "--init-groups"], true),
        ]
        let reader = try APIClient(address: bus.address)
        for (who, runAs, allowed) in identities {
            let client = try APIClient(address: bus.address, runAs: runAs)
            #expect(client.property(DBusAPI.managerPath, DBusAPI.managerInterface, "Version") == "{\"reply\": \(DBusAPI.version)}", "\(who)")
            let session = try client.openSession("app", category: "playAndRecord")
            for interface in [DBusAPI.managerInterface, ""] {
                let silent = client.call(DBusAPI.managerPath, interface, "SetSilentMode", "b", "[true]")
                let priority = client.call(DBusAPI.managerPath, interface, "SetPortPriority", "si", "[\"spk\", 10]")
                let override = client.call(session, interface == "" ? "" : DBusAPI.sessionInterface, "OverrideOutput", "s", "[\"speaker\"]")
                let what = "\(who), interface \"\(interface)\""
                if allowed {
                    #expect(silent == "{\"reply\": null}", "\(what): \(silent)")
                    #expect(priority.hasPrefix("{\"error\": \"org.audioroute.Error.UnknownPort\""), "\(what): \(priority)")
                    #expect(override == "{\"reply\": null}", "\(what): \(override)")
                    #expect(reader.property(DBusAPI.managerPath, DBusAPI.managerInterface, "SilentMode") == "{\"reply\": true}", "\(what)")
                    #expect(client.manager("SetSilentMode", "b", "[false]") == "{\"reply\": null}", "\(what)")
                } else {
                    for reply in [silent, priority, override] {
                        #expect(reply.hasPrefix("{\"error\": \"org.freedesktop.DBus.Error.AccessDenied\""), "\(what): \(reply)")
                    }
                    #expect(reader.property(DBusAPI.managerPath, DBusAPI.managerInterface, "SilentMode") == "{\"reply\": false}", "\(what)")
                }
            }
            #expect(client.session(session, "Close") == "{\"reply\": null}", "\(who)")
        }

        // The pool (SessionPool): two users outside audio flood it, 20 connections of 20 tries
        // each (the two users took 256 each, and locked everyone else out). The first
        // gets half the open part, the second a third of it; a third user and root still get theirs.
        var holders: [ScriptedProcess] = []
        for (runAs, expected) in [(identities[1].1, 224), (identities[4].1, 448 / 3)] {
            let flood = try ScriptedProcess(
                (runAs + ["/usr/bin/python3"])[0], Array((runAs + ["/usr/bin/python3", APIClient.script, bus.address, "sessions", "20", "20"]).dropFirst()))
            let line = flood.take(seconds: 120) { $0.hasPrefix("{\"opened\"") }
            #expect(line == "{\"opened\": \(expected), \"errors\": {\"org.freedesktop.DBus.Error.LimitsExceeded\": \(400 - expected)}}")
            holders.append(flood)
        }
        let late = try APIClient(address: bus.address, runAs: identities[6].1)
        for _ in 0..<16 {
            let opened = late.manager("OpenSession", "s", "[\"late\"]")
            #expect(opened.hasPrefix("{\"reply\": \"/org/audioroute/AudioRoute1/session/"), "\(opened)")
        }
        // Past its guaranteed 16 the third user is refused (on another connection: 16 is also a
        // connection's limit), naming the room kept for newcomers.
        let later = try APIClient(address: bus.address, runAs: identities[6].1)
        let refused = later.manager("OpenSession", "s", "[\"late\"]")
        #expect(refused.hasPrefix("{\"error\": \"org.freedesktop.DBus.Error.LimitsExceeded\""), "\(refused)")
        #expect(refused.contains("kept for users who hold fewer than 16"), "\(refused)")
        let root = try APIClient(address: bus.address)
        #expect(root.manager("OpenSession", "s", "[\"root\"]").hasPrefix("{\"reply\": \"/org/audioroute/AudioRoute1/session/"))
        holders.forEach { $0.kill() }
        // Their sessions go with them: the third user may take more.
        var opened = ""
        for _ in 0..<20 {
            opened = later.manager("OpenSession", "s", "[\"late\"]")
            if opened.hasPrefix("{\"reply\"") { break }
            usleep(100_000)
        }
        #expect(opened.hasPrefix("{\"reply\": \"/org/audioroute/AudioRoute1/session/"), "\(opened)")
        _ = daemon
    }
}
