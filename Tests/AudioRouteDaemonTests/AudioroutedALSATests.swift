// Real ALSA rerouting end to end: the built `audiorouted` follows udev (under
// umockdev) and rewrites its asound.conf; frames written to `audioroute_route`
// through libasound land in the file PCM of whichever device is the route.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import AudioRouteALSA
import Foundation
import Testing

@Suite struct AudioroutedALSATests {
    /// The PCM that `pcm.audioroute_route` plays to in the daemon's file, read by libasound, or nil.
    private static func routedPCM(_ path: String) -> String? {
        guard var configuration = try? ALSAConfiguration(), (try? configuration.load(file: path)) != nil else { return nil }
        return configuration.string(at: "pcm.\(AlsaRouteConfig.outputPCM).slave.pcm")
    }

    /// Waits until the daemon's file routes `audioroute_route` to `pcm`.
    private static func waitForRoute(
        to pcm: String, in path: String, daemon: UmockdevTestbed.Running, timeout: TimeInterval = 15
    ) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while routedPCM(path) != pcm {
            guard Date() < deadline, daemon.process.isRunning else {
                let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "(no file)"
                throw TestFailure("asound.conf never routed audioroute to \(pcm):\n\(text)\ndaemon stderr:\n\(daemon.stderr)")
            }
            usleep(5_000)
        }
    }

    /// Opens `audioroute_route` as the daemon defined it (the system configuration, the
    /// bench's file PCMs, the generated file: what the ~/.asoundrc hook loads)
    /// through libasound and writes `frames` (S16_LE stereo 48 kHz).
    private static func play(_ frames: [UInt8], bench: String, routeFile: String) throws {
        var configuration = try ALSAConfiguration.system()
        try configuration.load(file: bench)
        try configuration.load(file: routeFile)
        var pcm = try PCM(name: AlsaRouteConfig.outputPCM, configuration: configuration)
        try pcm.configure(format: .s16LE, channels: 2, rate: 48000)
        #expect(try pcm.write(frames) == frames.count / 4)
        try pcm.drain()
    }

    private static func contents(_ path: String) -> [UInt8]? { FileManager.default.contents(atPath: path).map { Array($0) } }

    @Test func audiorouteFollowsAPluggedHeadsetAndReturnsToTheSpeaker() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        let dir = bench.scratchDirectory
        let speakerFile = dir + "/speaker.raw"
        let headsetFile = dir + "/headset.raw"
        // Each card's ports play through a file PCM instead of dmix:CARD=...
        // (AUDIOROUTE_ALSA_PCM, docs/alsa.md), so no hardware is needed.
        let benchConf = dir + "/bench.conf"
        try writeFile(benchConf, """
            pcm.!routetest_speaker { type file slave.pcm "null" file "\(speakerFile)" format "raw" }
            pcm.!routetest_headset { type file slave.pcm "null" file "\(headsetFile)" format "raw" }

            """)
        try bench.loadLaptop(cardProperties: [AudioRouteProperty.alsaPCM: "routetest_speaker"])

        let notify = try NotifySocket(path: dir + "/notify")
        // The daemon serves its D-Bus API on the session bus: a private one.
        let bus = try PrivateBus()
        defer { bus.close() }
        let daemon = try bench.start(
            executable: "audiorouted", ["--state-dir", dir + "/state", "--runtime-dir", dir + "/run", "--log-level", "debug"] + UmockdevTestbed.noUCMHelper,
            environment: ["NOTIFY_SOCKET": notify.name, "DBUS_SESSION_BUS_ADDRESS": bus.address])
        let ready = notify.receive(seconds: 20)
        #expect(ready == "READY=1", "stderr: \(daemon.stderr)")
        guard ready == "READY=1" else { return }
        let routeFile = dir + "/run/audioroute/asound.conf"

        // READY=1 comes once udev's enumeration is in the route (the BlueZ watcher, with no
        // system bus, has nothing to enumerate): the file already routes to the speaker.
        let atReady = (try? String(contentsOfFile: routeFile, encoding: .utf8)) ?? ""
        try #require(atReady.contains("routetest_speaker"), "asound.conf at READY=1: \(atReady)\nstderr: \(daemon.stderr)")
        let first = pattern(4800 * 4, seed: 11)
        try Self.play(first, bench: benchConf, routeFile: routeFile)
        #expect(Self.contents(speakerFile) == first)
        #expect(Self.contents(headsetFile) == nil)

        // The USB headset arrives: last in wins, the file moves to it.
        try bench.load(
            "usb-headset-razer-blackshark-v3-pro", properties: [AudioRouteProperty.alsaPCM: "routetest_headset"], on: IDs.headsetCard)
        try Self.waitForRoute(to: "routetest_headset", in: routeFile, daemon: daemon)
        let second = pattern(960 * 4, seed: 12)
        try Self.play(second, bench: benchConf, routeFile: routeFile)
        #expect(Self.contents(headsetFile) == second)
        #expect(Self.contents(speakerFile) == first, "the speaker's file is untouched while the headset is the route")

        // Unplugged: back to the speaker (the file PCM truncates its file on open).
        try bench.send("unplug \(IDs.headsetUSB)")
        try Self.waitForRoute(to: "routetest_speaker", in: routeFile, daemon: daemon)
        let third = pattern(1920 * 4, seed: 13)
        try Self.play(third, bench: benchConf, routeFile: routeFile)
        #expect(Self.contents(speakerFile) == third)
        #expect(Self.contents(headsetFile) == second, "the headset's file is untouched once it is gone")

        #expect(try daemon.stop(SIGTERM) == 0, "stderr: \(daemon.stderr)")
        #expect(notify.receive(seconds: 5) == "STOPPING=1")
        #expect(daemon.stderr.contains("watcher unavailable") && daemon.stderr.contains("watcher=bluez"), "the BlueZ watcher saw no system bus")
    }
}
