// scripts/build-daemon, the build the README and scripts/install-daemon ship
// (docs/daemon.md, "Memory"): it builds from this checkout with the toolchain and
// packages scripts/bootstrap installs, and what it makes is the daemon.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import AudioRouteTestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct ShippedBuildTests {
    /// Runs scripts/build-daemon. The README's test command runs it before the suite,
    /// so here it is an up-to-date check of seconds; without that, a full release
    /// build inside the suite (at the lowest priority, but on 2 cores it still slows
    /// the in-process tests that wait on clocks).
    @Test func theShippedBuildLinksAsDocumentedAndRuns() async throws {
        let root = fixturesDirectory + "/../.."
        try await withTemporaryDirectory { dir in
            let log = dir + "/build.log"
            let build = try ChildProcess(
                "/bin/sh", ["-c", "exec timeout 1500 nice -n 19 \"$0\"/scripts/build-daemon > \"$1\" 2>&1", root, log])
            guard let status = build.wait(seconds: 1600) else { throw TestFailure("scripts/build-daemon did not finish") }
            let output = (try? readText(log)) ?? ""
            #expect(status == 0, "\(output.suffix(3000))")
            guard status == 0, let binary = output.split(separator: "\n").last.map(String.init) else { return }
            #expect(binary.hasSuffix("/release/audiorouted"), "\(binary)")

            // What the memory figures depend on (docs/daemon.md): libstdc++ linked in,
            // no libasound (the player's ALSA code is AudioRouteALSA, which the daemon
            // does not link), RELR relocations, still a PIE, nothing exported.
            let dynamic = try Self.readelf(["-d", binary], in: dir)
            #expect(!dynamic.contains("libstdc++"), "\(dynamic)")
            #expect(!dynamic.contains("libasound"), "\(dynamic)")
            #expect(dynamic.contains("(RELR)"), "\(dynamic)")
            #expect(dynamic.contains("PIE"), "\(dynamic)")
            #expect(dynamic.contains("libsystemd.so.0") && dynamic.contains("libudev.so.1"))
            let symbols = try Self.readelf(["--dyn-syms", "-W", binary], in: dir)
            #expect(!symbols.contains("AudioRouteDaemon"), "the executable exports its own symbols")

            // Its UCM helper beside it (the daemon starts it from there), linked the same way,
            // with the libasound the daemon does not have; scripts/install-daemon puts both in /usr/bin.
            let helper = String(binary.dropLast("audiorouted".count)) + "audioroute-ucm"
            let helperDynamic = try Self.readelf(["-d", helper], in: dir)
            #expect(helperDynamic.contains("libasound.so.2"), "\(helperDynamic)")
            #expect(!helperDynamic.contains("libstdc++") && !helperDynamic.contains("libswiftCore"), "\(helperDynamic)")
            // The PipeWire helper beside it too: libpipewire is the helper's, never the daemon's.
            #expect(!dynamic.contains("libpipewire"), "\(dynamic)")
            let pipewireHelper = String(binary.dropLast("audiorouted".count)) + "audioroute-pipewire"
            let pipewireDynamic = try Self.readelf(["-d", pipewireHelper], in: dir)
            #expect(pipewireDynamic.contains("libpipewire-0.3.so.0"), "\(pipewireDynamic)")
            #expect(!pipewireDynamic.contains("libstdc++") && !pipewireDynamic.contains("libswiftCore"), "\(pipewireDynamic)")
            // And the PulseAudio helper: libpulse is the helper's, never the daemon's.
            #expect(!dynamic.contains("libpulse"), "\(dynamic)")
            let pulseHelper = String(binary.dropLast("audiorouted".count)) + "audioroute-pulse"
            let pulseDynamic = try Self.readelf(["-d", pulseHelper], in: dir)
            #expect(pulseDynamic.contains("libpulse.so.0"), "\(pulseDynamic)")
            #expect(!pulseDynamic.contains("libstdc++") && !pulseDynamic.contains("libswiftCore"), "\(pulseDynamic)")
            let install = try ChildProcess(
                "/bin/sh", ["-c", "exec \"$0\"/scripts/install-daemon --destdir \"$1\" --binary \"$2\" > /dev/null", root, dir + "/stage", binary])
            #expect(install.wait(seconds: 60) == 0, "\(install.availableStderr())")
            #expect(access(dir + "/stage/usr/bin/audiorouted", X_OK) == 0 && access(dir + "/stage/usr/bin/audioroute-ucm", X_OK) == 0)
            #expect(access(dir + "/stage/usr/bin/audioroute-pipewire", X_OK) == 0)
            #expect(access(dir + "/stage/usr/bin/audioroute-pulse", X_OK) == 0)

            // And it is the daemon: READY=1 on a private bus, status 0 on SIGTERM.
            let (socket, bus, daemon) = try AudioroutedEndToEndTests.startOnPrivateBus(in: dir, binary: binary)
            defer { bus.close() }
            #expect(socket.receive(seconds: 20) == "READY=1", "stderr: \(daemon.availableStderr())")
            #expect(try readText(dir + "/run/audioroute/asound.conf") == AlsaRouteConfig(route: .empty, ports: []).text)
            daemon.signal(SIGTERM)
            #expect(daemon.wait(seconds: 20) == 0, "stderr: \(daemon.availableStderr())")
        }
    }

    /// `readelf ARGUMENTS`' standard output.
    static func readelf(_ arguments: [String], in dir: String) throws -> String {
        let out = dir + "/readelf.out"
        let child = try ChildProcess("/bin/sh", ["-c", "exec readelf \"$@\" > \"$0\"", out] + arguments)
        guard child.wait(seconds: 60) == 0 else { throw TestFailure("readelf \(arguments) failed: \(child.availableStderr())") }
        return try readText(out)
    }
}
