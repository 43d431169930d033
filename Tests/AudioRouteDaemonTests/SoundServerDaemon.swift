// The set-up the sound-server daemon tests share (PipeWireStreamSessionsTests,
// PulseStreamSessionsTests, PulseDefaultsTests): a real server on the sound-server bench with
// ALSA-shaped devices, umockdev with the laptop's card, and the real audiorouted on the bench's
// bus and runtime directory; and what they read: `status`, a sink's level at its monitor.
import AudioRouteCore
import AudioRouteTestKit
import Foundation

/// A bench's server, the laptop under umockdev and audiorouted beside them. `close()` stops all
/// three (call it in a defer: it runs on failure too).
final class SoundServerDaemon {
    let bench: SoundServerBench
    let testbed: UmockdevTestbed
    let daemon: UmockdevTestbed.Running

    /// `kind`'s server with the devices shaped as ALSA's (`speaker` is the laptop's route).
    init(_ kind: SoundServerKind) throws {
        bench = kind == .pulseaudio
            ? try SoundServerBench(.pulseaudio, pulseScript: SoundServerBench.alsaShapedPulseScript)
            : try SoundServerBench(.pipewire, pipewireObjects: SoundServerBench.alsaShapedObjects)
        do {
            testbed = try UmockdevTestbed()
        } catch {
            bench.stop()
            throw error
        }
        do {
            try testbed.loadLaptop()
            let state = testbed.root + "/scratch/daemon"
            var environment = bench.environment
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = testbed.systemBus
            daemon = try testbed.start(
                ["--state-dir", state + "/state", "--runtime-dir", state + "/run", "--log-level", "info"] + UmockdevTestbed.noUCMHelper,
                binary: PipeWireDefaultsTests.daemonBinary, environment: environment)
        } catch {
            testbed.close()
            bench.stop()
            throw error
        }
    }

    /// Stops the daemon, umockdev and the server (again: harmless).
    func close() {
        _ = try? daemon.stop(SIGTERM)
        testbed.close()
        bench.stop()
    }

    /// `audioroute status`, or "" when it fails.
    func status() -> String { (try? testbed.run(["status", "--bus-address", bench.bus.address]).stdout) ?? "" }

    /// Stops the daemon (status 0 expected) and waits until nothing but the servers runs with the
    /// bench's runtime directory: "clean", or what is left.
    func stopDaemonAndCheckClean() throws -> (status: Int32, left: String) {
        let status = try daemon.stop(SIGTERM)
        let left = Self.wait({ self.bench.processesLeft().count == self.bench.serverPIDs.count ? "clean" : "\(self.bench.processesLeft())" }) { $0 == "clean" }
        return (status, left)
    }

    /// Waits up to `seconds` for `accept` to take what `read` gives; the last reading.
    static func wait<T>(seconds: Double = 10, _ read: () -> T, until accept: (T) -> Bool) -> T {
        let deadline = Date().addingTimeInterval(seconds)
        var last = read()
        while !accept(last) && Date() < deadline {
            usleep(100_000)
            last = read()
        }
        return last
    }

    /// The peak of what `sink` plays now, as a fraction of full scale: its monitor recorded for
    /// 1 s, the last 0.4 s of it (a new monitor stream may start late); nil when nothing came.
    static func level(_ bench: SoundServerBench, sink: String = "speaker") -> Double? {
        let raw = bench.directory + "/level.raw"
        try? FileManager.default.removeItem(atPath: raw)
        guard let recorder = try? bench.start(
            "parec", ["-d", sink + ".monitor", "--raw", "--latency-msec=20", "--format=s16le", "--rate=48000", "--channels=2", raw])
        else { return nil }
        usleep(1_000_000)
        recorder.signal(SIGINT)
        _ = recorder.waitForExit()
        guard let data = FileManager.default.contents(atPath: raw), data.count >= 4 else { return nil }
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }.suffix(Int(0.4 * 96_000))
        return Double(samples.map { abs(Int($0)) }.max() ?? 0) / 32768
    }
}
