// The files that install the daemon (systemd/, dbus/), checked by the programs
// that read them: systemd-analyze parses the units, and a private dbus-daemon
// loads the system-bus policy and enforces it on real clients.
import Testing

#if canImport(Glibc)
import Glibc
#endif

private let packageRoot: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)  // Tests/AudioRouteDaemonTests/DeploymentFilesTests.swift
    return parts.joined(separator: "/")
}()

/// Everything a finished child wrote, its exit status, within `seconds`.
private func finish(_ child: ChildProcess, seconds: Double = 30) throws -> (status: Int32, stdout: String, stderr: String) {
    guard let status = child.wait(seconds: seconds) else { throw TestFailure("pid \(child.pid) did not finish in \(seconds) s") }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(child.stdout, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        bytes += chunk[0..<count]
    }
    return (status, String(decoding: bytes, as: UTF8.self), child.availableStderr())
}

/// The next line a running child prints within `seconds`, or nil.
private func line(from child: ChildProcess, seconds: Double) -> String? {
    var bytes: [UInt8] = []
    var byte: UInt8 = 0
    var poller = pollfd(fd: child.stdout, events: Int16(POLLIN), revents: 0)
    while poll(&poller, 1, Int32(seconds * 1000)) == 1, read(child.stdout, &byte, 1) == 1 {
        if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
        bytes.append(byte)
    }
    return nil
}

@Suite struct SystemdUnitTests {
    /// `systemd-analyze verify` checks that ExecStart= exists, so the unit is
    /// verified with ExecStart= pointing at the built binary; every other line is
    /// the shipped file's. verify exits 0 even for unknown keys, but says so on
    /// stderr: silence is the pass.
    @Test(arguments: [("audiorouted.service", true), ("audiorouted-system.service", false)])
    func systemdAnalyzeVerifyAcceptsTheUnit(_ unit: String, _ user: Bool) async throws {
        try await withTemporaryDirectory { dir in
            let shipped = try readText(packageRoot + "/systemd/" + unit)
            #expect(shipped.contains("\nType=notify\n"))
            #expect(shipped.contains("\nBusName=org.audioroute.AudioRoute1\n"))
            let execStart = "\nExecStart=/usr/bin/audiorouted"
            #expect(shipped.contains(execStart))
            try writeText(dir + "/" + unit, shipped.replacing(execStart, with: "\nExecStart=" + productsDirectory + "/audiorouted"))
            #expect(mkdir(dir + "/run", 0o700) == 0)
            let child = try ChildProcess(
                "/usr/bin/systemd-analyze", (user ? ["--user"] : []) + ["verify", dir + "/" + unit],
                environment: ["XDG_RUNTIME_DIR": dir + "/run"])
            let result = try finish(child)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout + result.stderr == "", "systemd-analyze verify complained")
        }
    }
}

/// A private system-like bus: Debian's default system-bus policy (deny owning
/// any name and calling any method) plus the shipped policy file, included as
/// /usr/share/dbus-1/system.d would include it.
@Suite struct DBusPolicyTests {
    static let name = "org.audioroute.AudioRoute1"

    static let client = """
        import sys, dbus
        from gi.repository import GLib
        from dbus.mainloop.glib import DBusGMainLoop
        address, verb, name = sys.argv[1:4]
        DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(address)
        try:
            if verb == "own":
                bus.request_name(name, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
                print("OWNED", flush=True)
                # Serve (libdbus answers org.freedesktop.DBus.Peer.Ping) until killed.
                GLib.MainLoop().run()
            elif verb == "ping":
                bus.call_blocking(name, "/org/audioroute/AudioRoute1", "org.freedesktop.DBus.Peer", "Ping", "", ())
                print("PONG", flush=True)
        except dbus.exceptions.DBusException as error:
            print(error.get_dbus_name(), flush=True)
        """

    /// Debian 12's /usr/share/dbus-1/system.conf default policy, then the shipped file.
    static func configuration(socket: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>unix:path=\(socket)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <deny own="*"/>
            <deny send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_requested_reply="true" send_type="method_return"/>
            <allow send_requested_reply="true" send_type="error"/>
            <allow receive_type="method_call"/>
            <allow receive_type="method_return"/>
            <allow receive_type="error"/>
            <allow receive_type="signal"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
          </policy>
          <include>\(packageRoot)/dbus/org.audioroute.AudioRoute1.conf</include>
        </busconfig>

        """
    }

    /// Runs the client as root, or as `nobody` through setpriv.
    static func client(_ dir: String, _ verb: String, _ name: String, asNobody: Bool) throws -> ChildProcess {
        let python = ["/usr/bin/python3", dir + "/client.py", "unix:path=" + dir + "/bus", verb, name]
        if asNobody {
            return try ChildProcess("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups"] + python)
        }
        return try ChildProcess(python[0], Array(python.dropFirst()))
    }

    @Test func onlyTheDaemonsUserOrRootOwnsTheNameAndEveryoneMayCallIt() async throws {
        try await withTemporaryDirectory { dir in
            // nobody must reach the socket and the script.
            #expect(chmod(dir, 0o755) == 0)
            try writeText(dir + "/bus.conf", Self.configuration(socket: dir + "/bus"))
            try writeText(dir + "/client.py", Self.client)
            #expect(chmod(dir + "/client.py", 0o644) == 0)
            let bus = try ChildProcess("/usr/bin/dbus-daemon", ["--config-file=" + dir + "/bus.conf", "--nofork", "--print-address=1"])
            // SIGKILL: the test runner's threads may block SIGTERM, which a spawned child inherits.
            defer { bus.signal(SIGKILL); _ = bus.wait(seconds: 5) }
            let address = line(from: bus, seconds: 20)
            #expect(address?.hasPrefix("unix:path=" + dir + "/bus") == true, "dbus-daemon refused the configuration: \(bus.availableStderr())")
            guard address != nil else { return }

            // Root may own the name (the policy's root rule); a user may not.
            let nobodyOwns = try finish(try Self.client(dir, "own", Self.name, asNobody: true))
            #expect(nobodyOwns.stdout == "org.freedesktop.DBus.Error.AccessDenied\n", "\(nobodyOwns.stderr)")
            // The grant is for this one name only: the default policy still denies the rest.
            let rootOwnsOther = try finish(try Self.client(dir, "own", "org.audioroute.Other", asNobody: false))
            #expect(rootOwnsOther.stdout == "org.freedesktop.DBus.Error.AccessDenied\n", "\(rootOwnsOther.stderr)")

            let owner = try Self.client(dir, "own", Self.name, asNobody: false)
            let owned = line(from: owner, seconds: 20)
            #expect(owned == "OWNED", "\(owner.availableStderr())")
            guard owned == "OWNED" else { return }

            // Anyone may call it (the daemon checks credentials itself before a change).
            let nobodyPings = try finish(try Self.client(dir, "ping", Self.name, asNobody: true))
            #expect(nobodyPings.stdout == "PONG\n", "\(nobodyPings.stderr)")
            owner.signal(SIGKILL)
        }
    }
}

/// Session-bus activation with the shipped `dbus/org.audioroute.AudioRoute1.service`:
/// the first call to the name starts audiorouted. Without a systemd user manager
/// dbus-daemon runs Exec= itself; here Exec= points at the built binary, kept off the
/// machine's hardware (an empty umockdev testbed, no system bus), every other line is
/// the shipped file's.
@Suite struct DBusActivationTests {
    @Test func theFirstCallStartsTheDaemon() async throws {
        try await withTemporaryDirectory { dir in
            let shipped = try readText(packageRoot + "/dbus/org.audioroute.AudioRoute1.service")
            let exec = "\nExec=/usr/bin/audiorouted\n"
            #expect(shipped.contains(exec) && shipped.contains("\nName=org.audioroute.AudioRoute1\n"))
            #expect(mkdir(dir + "/services", 0o755) == 0 && mkdir(dir + "/testbed", 0o700) == 0)
            let command = [
                "/usr/bin/env", "DBUS_SYSTEM_BUS_ADDRESS=unix:path=\(dir)/no-system-bus", "UMOCKDEV_DIR=\(dir)/testbed",
                "/usr/bin/umockdev-wrapper", productsDirectory + "/audiorouted",
                "--state-dir", dir + "/state", "--runtime-dir", dir + "/run",
            ] + UmockdevTestbed.noUCMHelper
            try writeText(dir + "/services/org.audioroute.AudioRoute1.service", shipped.replacing(exec, with: "\nExec=" + command.joined(separator: " ") + "\n"))
            try writeText(dir + "/bus.conf", """
                <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
                 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                <busconfig>
                  <type>session</type>
                  <listen>unix:path=\(dir)/bus</listen>
                  <servicedir>\(dir)/services</servicedir>
                  <policy context="default">
                    <allow send_destination="*" eavesdrop="true"/>
                    <allow eavesdrop="true"/>
                    <allow own="*"/>
                  </policy>
                </busconfig>
                """)
            let bus = try ChildProcess("/usr/bin/dbus-daemon", ["--config-file=" + dir + "/bus.conf", "--nofork", "--print-address=1"])
            defer { bus.signal(SIGKILL); _ = bus.wait(seconds: 5) }
            guard let address = line(from: bus, seconds: 20) else {
                Issue.record("dbus-daemon did not start: \(bus.availableStderr())")
                return
            }
            #expect(access(dir + "/run/audioroute/asound.conf", F_OK) != 0, "nothing runs before the first call")

            let status = try finish(try ChildProcess(productsDirectory + "/audioroute", ["status"], environment: ["DBUS_SESSION_BUS_ADDRESS": address]))
            // The activated daemon is dbus-daemon's child: stopped here, before the bus goes.
            let owner = try finish(try ChildProcess(
                "/usr/bin/dbus-send",
                ["--print-reply", "--bus=" + address, "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                 "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.audioroute.AudioRoute1"]))
            let pid = owner.stdout.split(separator: " ").last.flatMap { Int32(String($0.filter(\.isNumber))) }
            defer {
                if let pid {
                    kill(pid, SIGTERM)
                    for _ in 0..<1000 where kill(pid, 0) == 0 { usleep(10_000) }
                }
            }
            #expect(status.status == 0, "status: \(status.stderr); bus: \(bus.availableStderr())")
            #expect(status.stdout.contains("audiorouted on the session bus"), "\(status.stdout)")
            #expect(pid != nil, "\(owner.stdout) \(owner.stderr)")
            // It is the daemon of the Exec= line: its route file is in the test's runtime directory.
            #expect(access(dir + "/run/audioroute/asound.conf", F_OK) == 0)
        }
    }
}
