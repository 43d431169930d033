// Access on the system bus (docs/security.md): reads and a session's own calls
// for everyone; routing-wide changes for root and group audio only, decided by
// the caller's credentials as the bus reports them.
import AudioRouteDaemon
import AudioRouteLinux
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
        #expect(stranger.property(DBusAPI.managerPath, DBusAPI.managerInterface, "Version") == "{\"reply\": 1}")
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
