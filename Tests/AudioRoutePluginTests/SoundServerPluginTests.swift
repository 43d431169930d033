// Layer 2: `aplay -D audioroute` on a desktop where PipeWire owns the cards. The real audiorouted
// under umockdev (the laptop's card 0, then a USB headset's card 2) beside a real PipeWire,
// WirePlumber and pipewire-pulse on the sound-server bench, whose null sinks carry real ALSA
// nodes' properties (`speaker` is card 0's PCM 0, `headphones` card 2's). The route file names
// the server's `pulse` PCM, so aplay through the plugin plays into the server: its stream is read
// back from the server on the route's sink, follows the route when the headset comes, and the
// tower's hold (another app's non-mixable session) still silences it, read from the sink's
// monitor. Skipped where PipeWire is not installed.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteSystem
import AudioRouteTestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite(.serialized, .timeLimit(.minutes(2))) struct SoundServerPluginTests {
    static let pipewireMissing = SoundServerKind.pipewire.missing

    /// The daemon built beside the tests' own executables.
    static var daemonBinary: String {
        let binary = UmockdevTestbed.binary
        return String(binary[..<(binary.lastIndex(of: "/") ?? binary.endIndex)]) + "/audiorouted"
    }

    /// Waits up to `seconds` for `accept` to take what `read` gives; the last reading.
    func wait(seconds: Int64 = 10, _ read: () -> String, until accept: (String) -> Bool) -> String {
        let deadline = MonotonicClock.milliseconds() + seconds * 1000
        var last = read()
        while !accept(last) && MonotonicClock.milliseconds() < deadline {
            MonotonicClock.sleep(nanoseconds: 50_000_000)
            last = read()
        }
        return last
    }

    /// "application.name on sink" for each stream the server plays (`pactl list sink-inputs`).
    func streams(_ bench: SoundServerBench) -> [String] {
        var sinks: [String: String] = [:]
        for line in bench.run("pactl", ["list", "short", "sinks"]).stdout.split(separator: "\n") {
            let fields = line.split(separator: "\t")
            if fields.count > 1 { sinks[String(fields[0])] = String(fields[1]) }
        }
        var result: [String] = []
        var sink = "?"
        for line in bench.run("pactl", ["list", "sink-inputs"]).stdout.split(separator: "\n") {
            let text = line.trimmingPrefix(while: { $0 == " " || $0 == "\t" })
            if text.hasPrefix("Sink: ") { sink = sinks[String(text.dropFirst(6))] ?? "sink \(text.dropFirst(6))" }
            if text.hasPrefix("application.name = ") { result.append("\(text.dropFirst(19).filter { $0 != "\"" }) on \(sink)") }
        }
        return result
    }

    /// The peak of what `sink` plays over 0.4 s (its monitor recorded once data flows), as a
    /// fraction of full scale; nil if nothing came.
    func level(_ bench: SoundServerBench, _ sink: String) throws -> Double? {
        let file = bench.directory + "/monitor-\(sink).raw"
        unlink(file)
        let recorder = try bench.start(
            "parec", ["-d", sink + ".monitor", "--raw", "--latency-msec=20", "--format=s16le", "--rate=48000", "--channels=2", file])
        defer { recorder.kill() }
        _ = wait(seconds: 5, { "\((try? AtomicFile.read(file))?.count ?? 0)" }) { $0 != "0" }
        MonotonicClock.sleep(nanoseconds: 500_000_000)
        recorder.kill()
        let bytes = (try? AtomicFile.read(file)) ?? []
        let last = bytes.suffix(Int(0.4 * 48_000) * 4)
        guard last.count >= 4 else { return nil }
        var peak = 0
        var index = last.startIndex
        while index + 1 < last.endIndex {
            peak = max(peak, abs(Int(Int16(bitPattern: UInt16(last[index]) | UInt16(last[index + 1]) << 8))))
            index += 2
        }
        return Double(peak) / 32768
    }

    /// `seconds` of a 440 Hz tone at a quarter of full scale, S16_LE stereo 48 kHz, raw.
    static func tone(seconds: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(seconds * 48_000 * 4)
        for frame in 0..<(seconds * 48_000) {
            let sample = Int16(8192 * _sin(Double(frame) * 2 * Double.pi * 440 / 48_000))
            let pair = [UInt8(truncatingIfNeeded: sample), UInt8(truncatingIfNeeded: sample >> 8)]
            bytes += pair + pair
        }
        return bytes
    }

    @Test(.enabled(if: pipewireMissing == nil, "pipewire, wireplumber, pipewire-pulse or pulseaudio-utils not installed"))
    func aplayThroughThePluginPlaysIntoTheServerAndFollowsTheRoute() throws {
        let bench = try SoundServerBench(.pipewire, pipewireObjects: SoundServerBench.alsaShapedObjects)
        defer { bench.stop() }
        let testbed = try UmockdevTestbed()
        defer { testbed.close() }
        try testbed.loadLaptop()
        let state = testbed.root + "/scratch/daemon"
        var environment = bench.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = testbed.systemBus
        let daemon = try testbed.start(
            ["--state-dir", state + "/state", "--runtime-dir", state + "/run", "--log-level", "info"] + UmockdevTestbed.noUCMHelper,
            binary: Self.daemonBinary, environment: environment)
        defer { _ = try? daemon.stop(SIGTERM) }

        // The route file names the server's PCM for the card's port, not the card.
        let routeFile = state + "/run/audioroute/asound.conf"
        let written = wait({ (try? readText(routeFile)) ?? "" }) { $0.contains("slave.pcm \"pulse\"") }
        #expect(written.contains("slave.pcm \"pulse\""), "\(written)\ndaemon: \(daemon.stderr)")
        #expect(written.contains("through PipeWire: pulse, the server's default sink"), "\(written)")
        #expect(!written.contains("dmix:"), "\(written)")

        // aplay through the plugin as it ships, the route file from the daemon's runtime directory,
        // the server from the bench's, the daemon on the bench's session bus.
        let home = bench.directory + "/aplay-home"
        mkdir(home, 0o700)
        let plugin = try Bench(home)
        var player = plugin.environment
        player["XDG_RUNTIME_DIR"] = state + "/run"
        player["PULSE_SERVER"] = "unix:" + bench.runtimeDirectory + "/pulse/native"
        player["DBUS_SESSION_BUS_ADDRESS"] = bench.bus.address
        player["DBUS_SYSTEM_BUS_ADDRESS"] = testbed.systemBus
        let tone = bench.directory + "/tone.raw"
        try AtomicFile.write(Self.tone(seconds: 30), to: tone)
        let aplay = try ChildProcess(
            "/usr/bin/aplay", ["-q", "-D", "audioroute", "-t", "raw", "-f", "S16_LE", "-c", "2", "-r", "48000", tone],
            environment: player, removing: SoundServerBench.removedVariables, input: .pipe)
        defer { aplay.kill() }

        let onSpeaker = wait({ streams(bench).joined(separator: ", ") }) { $0.hasSuffix("on speaker") }
        #expect(onSpeaker.hasSuffix("on speaker"), "aplay's stream: \(onSpeaker)\naplay: \(aplay.availableStderr())\ndaemon: \(daemon.stderr)")
        let heard = try level(bench, "speaker") ?? 0
        #expect(heard > 0.2 && heard < 0.3, "the speaker's level with aplay's tone (0.25): \(heard)")

        // The headset's card comes: the route, the server's default and aplay's stream go to it.
        try testbed.load("usb-headset-razer-blackshark-v3-pro")
        let moved = wait({ streams(bench).joined(separator: ", ") }) { $0.hasSuffix("on headphones") }
        #expect(moved.hasSuffix("on headphones"), "aplay's stream did not follow the route: \(moved)\ndaemon: \(daemon.stderr)")
        let onHeadphones = try level(bench, "headphones") ?? 0
        #expect(onHeadphones > 0.2, "the headphones' level with aplay's tone: \(onHeadphones)")

        // Another app's non-mixable playback session interrupts aplay's: the plugin holds, and the
        // server's sink hears silence; the app gone, aplay's session resumes and the tone is back.
        let client = try APIClient(address: bench.bus.address)
        let call = try client.openSession("call", category: "playback")
        #expect(client.session(call, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
        let held = try level(bench, "headphones") ?? 1
        #expect(held < 0.01, "the headphones' level while aplay's session is interrupted: \(held)")
        #expect(client.session(call, "SetActive", "bb", "[false, true]") == "{\"reply\": null}")
        let back = wait(seconds: 5, { "\(((try? level(bench, "headphones")) ?? nil) ?? 0)" }) { (Double($0) ?? 0) > 0.2 }
        #expect((Double(back) ?? 0) > 0.2, "the headphones' level after the interruption: \(back)")

        aplay.kill()
        #expect(try daemon.stop(SIGTERM) == 0)
    }
}
