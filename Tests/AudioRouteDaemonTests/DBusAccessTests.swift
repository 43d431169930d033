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
        #expect(stranger.property(DBusAPI.managerPath, DBusAPI.managerInterface, "Version") == "{\"reply\": 2}")
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
/// others; and the session limits per user and in all hold across users.
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
            #expect(client.property(DBusAPI.managerPath, DBusAPI.managerInterface, "Version") == "{\"reply\": 2}", "\(who)")
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

        // The limits: 16 connections of 16 sessions per user, 512 in all, whoever asks.
        let perUser = DBusAPI.maxConnectionsPerUser * DBusAPI.maxSessionsPerName
        var holders: [ScriptedProcess] = []
        for runAs in [identities[0].1, identities[3].1] {
            let flood = try ScriptedProcess(
                (runAs + ["/usr/bin/python3"])[0], Array((runAs + ["/usr/bin/python3", APIClient.script, bus.address, "sessions", "20", "20"]).dropFirst()))
            let line = flood.take(seconds: 120) { $0.hasPrefix("{\"opened\"") }
            #expect(line == "{\"opened\": \(perUser), \"errors\": {\"org.freedesktop.DBus.Error.LimitsExceeded\": \(400 - perUser)}}")
            holders.append(flood)
        }
        #expect(2 * perUser == DBusAPI.maxSessions)
        let late = try APIClient(address: bus.address, runAs: identities[4].1)
        let refused = late.manager("OpenSession", "s", "[\"late\"]")
        #expect(refused.hasPrefix("{\"error\": \"org.freedesktop.DBus.Error.LimitsExceeded\""), "\(refused)")
        #expect(refused.contains("512 sessions"), "\(refused)")
        holders.forEach { $0.kill() }
        // Their sessions go with them: the late one gets its session.
        var opened = ""
        for _ in 0..<20 {
            opened = late.manager("OpenSession", "s", "[\"late\"]")
            if opened.hasPrefix("{\"reply\"") { break }
            usleep(100_000)
        }
        #expect(opened.hasPrefix("{\"reply\": \"/org/audioroute/AudioRoute1/session/"), "\(opened)")
        _ = daemon
    }
}
