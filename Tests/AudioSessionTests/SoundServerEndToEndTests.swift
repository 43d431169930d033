// The real audiorouted finds the user's sound server on the layer-2 bench (a real PipeWire with
// WirePlumber and pipewire-pulse, or a real PulseAudio, on the bench's runtime directory and
// bus), says so in `audioroute status` and follows it when it stops, crashes or starts later.
// Reservations are a stand-in's (the bench's servers have no card to reserve).
import AudioRouteCore
import AudioRouteSystem
import AudioRouteTestKit
import AudioSession
import Glibc
import Testing

@Suite(.serialized, .timeLimit(.minutes(1))) struct SoundServerEndToEndTests {
    static let serversMissing = SoundServerKind.pipewire.missing ?? SoundServerKind.pulseaudio.missing

    /// `status --json`'s soundServer once `accept` takes it, within `seconds`; the last one seen otherwise.
    func soundServer(_ daemon: RunningDaemon, seconds: Double = 8, until accept: (JSON) -> Bool) throws -> JSON {
        let deadline = MonotonicClock.milliseconds() + Int64(seconds * 1000)
        var last = JSON.null
        while true {
            let status = try CLI.run(["status", "--json", "--bus-address", daemon.bus.address])
            last = try JSON.parse(status.out)["soundServer"] ?? .null
            if accept(last) || MonotonicClock.milliseconds() > deadline { return last }
            usleep(50_000)
        }
    }

    func statusText(_ daemon: RunningDaemon) throws -> String { try CLI.run(["status", "--bus-address", daemon.bus.address]).out }

    @Test(.enabled(if: serversMissing == nil, "PipeWire or PulseAudio not installed"), arguments: SoundServerKind.allCases)
    func theServerIsFoundAndItsStopFollowed(_ kind: SoundServerKind) throws {
        let bench = try SoundServerBench(kind)
        defer { bench.stop() }
        let daemon = try RunningDaemon(environment: ["XDG_RUNTIME_DIR": bench.runtimeDirectory], bus: bench.bus)
        let found = try soundServer(daemon) { $0["server"] == .string(kind.rawValue) }
        #expect(found["server"] == .string(kind.rawValue), "\(found)")
        #expect(found["pulseProtocol"] == .bool(true))
        let summary = kind == .pipewire ? "PipeWire with its PulseAudio server, holding no card" : "PulseAudio, holding no card"
        #expect(found["summary"] == .string(summary))
        #expect(try statusText(daemon).contains("Sound server: \(summary)"))
        let program = kind == .pipewire ? "pipewire-pulse" : "pulseaudio"
        #expect(found["signal"].map { "\($0)" }?.contains("pulse/native answered (\(program))") == true, "\(found)")

        bench.stopServers()
        // PipeWire's own socket goes without a bus event: the daemon looks again 2 s after a change.
        let gone = try soundServer(daemon) { $0["server"] == .null }
        #expect(gone["server"] == .null, "\(gone)")
        #expect(try statusText(daemon).contains("Sound server: no sound server: AudioRoute drives ALSA directly"))
    }

    @Test(.enabled(if: SoundServerKind.pulseaudio.missing == nil, "PulseAudio not installed"))
    func aCrashedServersSocketIsNotAServer() throws {
        let bench = try SoundServerBench(.pulseaudio)
        defer { bench.stop() }
        let daemon = try RunningDaemon(environment: ["XDG_RUNTIME_DIR": bench.runtimeDirectory], bus: bench.bus)
        #expect(try soundServer(daemon) { $0["server"] == .string("pulseaudio") }["server"] == .string("pulseaudio"))
        bench.killServers()
        #expect(access(bench.runtimeDirectory + "/pulse/native", F_OK) == 0, "SIGKILL leaves the socket file")
        let gone = try soundServer(daemon) { $0["server"] == .null }
        #expect(gone["server"] == .null, "\(gone)")
        #expect(gone["signal"].map { "\($0)" }?.contains("pulse/native refused the connection") == true, "\(gone)")
    }

    @Test(.enabled(if: serversMissing == nil, "PipeWire or PulseAudio not installed"), arguments: SoundServerKind.allCases)
    func aServerStartedLaterIsFound(_ kind: SoundServerKind) throws {
        let bench = try SoundServerBench(kind, startingServers: false)
        defer { bench.stop() }
        let daemon = try RunningDaemon(environment: ["XDG_RUNTIME_DIR": bench.runtimeDirectory], bus: bench.bus)
        let before = try soundServer(daemon, seconds: 0) { _ in true }
        #expect(before["server"] == .null && before["summary"] == .string("no sound server: AudioRoute drives ALSA directly"), "\(before)")
        try bench.startServers()
        let found = try soundServer(daemon) { $0["server"] == .string(kind.rawValue) }
        #expect(found["server"] == .string(kind.rawValue), "\(found)")
    }

    @Test func noServerIsSaidPlainly() throws {
        let runtime = try makeTemporaryDirectory()
        defer { removeTree(runtime) }
        let daemon = try RunningDaemon(environment: ["XDG_RUNTIME_DIR": runtime])
        let engine = try soundServer(daemon, seconds: 0) { _ in true }
        #expect(engine["server"] == .null && engine["rule"] == .string("noServer"), "\(engine)")
        #expect(try statusText(daemon).contains("Sound server: no sound server: AudioRoute drives ALSA directly"))
    }

    /// The cards a server holds are the reservation names it owns: a stand-in takes
    /// org.freedesktop.ReserveDevice1.Audio3 (python3-gi) beside a real PulseAudio, then lets it go.
    @Test(.enabled(if: SoundServerKind.pulseaudio.missing == nil, "PulseAudio not installed"))
    func theReservedCardsAreTheHeldOnes() throws {
        let bench = try SoundServerBench(.pulseaudio)
        defer { bench.stop() }
        let daemon = try RunningDaemon(environment: ["XDG_RUNTIME_DIR": bench.runtimeDirectory], bus: bench.bus)
        #expect(try soundServer(daemon) { $0["server"] == .string("pulseaudio") }["heldCards"] == .array([]))
        let owner = try ChildProcess(
            "/usr/bin/python3",
            [
                "-c",
                """
                import sys
                from gi.repository import Gio, GLib
                bus = Gio.DBusConnection.new_for_address_sync(sys.argv[1], Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
                reply = bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName", GLib.Variant("(su)", ("org.freedesktop.ReserveDevice1.Audio3", 4)), None, 0, -1, None)
                print("owned", reply.unpack()[0], flush=True)
                sys.stdin.read()
                """,
                bench.bus.address,
            ], input: .pipe)
        defer { owner.kill() }
        var lines = LineReader(fd: owner.stdout)
        #expect(lines.next(seconds: 10) == "owned 1")
        let held = try soundServer(daemon) { $0["heldCards"] == .array([.integer(3)]) }
        #expect(held["heldCards"] == .array([.integer(3)]), "\(held)")
        #expect(held["summary"] == .string("PulseAudio, holding card 3"))
        owner.closeInput()
        _ = owner.wait(seconds: 5)
        let released = try soundServer(daemon) { $0["heldCards"] == .array([]) }
        #expect(released["heldCards"] == .array([]), "\(released)")
    }
}
