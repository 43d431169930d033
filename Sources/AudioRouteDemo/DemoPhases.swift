import AudioRouteALSA
import AudioRouteCore
import AudioRouteIPC
import AudioRouteSystem
import AudioSession

/// The story's phases. The music app is the product's `AudioPlayer` following its
/// session (`follow`): it reroutes, pauses, resumes and ducks by itself; the story only
/// drives the hardware and the other apps, and watches what reaches the devices.
struct Story {
    let timeline: DemoTimeline
    let bus: AudioSession.Bus
    let music: AudioSession
    let devices: DemoDevices
    let bluez: DemoChild
    let emitter: DemoChild
    let routeFile: String
    let asoundrc: String
    /// Where the music's WAV file is written.
    let musicFile: String
    /// A plain aplay through the ALSA plugin beside the music; nil when aplay or the plugin is missing.
    var aplay: AplaySetup? = nil

    static let speaker = "platform-sound/speaker"
    static let headphones = "platform-sound/headphones"
    static var a2dp: String { "bt:\(DemoStory.btAddress):a2dp" }
    static var hfp: String { "bt:\(DemoStory.btAddress):hfp" }
    /// The Bluetooth headset's object in the BlueZ mock.
    static var btPath: String { "/org/bluez/hci0/dev_" + DemoStory.btAddress.replacingColons() }
    /// The music's level (0...1 of full scale) at unity gain.
    static let musicLevel = 0.5
    /// The player's buffer. What the player has written reaches a device's file up to
    /// `inFlightFrames` later: the file PCM holds a buffer's worth, then the pipe to the sink (a page once the sink shrank it, 64 KiB if it
    /// could not) and the sink's read.
    static let latencyMicroseconds = 20_000
    static let inFlightFrames = 48_000 * latencyMicroseconds / 1_000_000 + 65_536 / 4 + 1024
    /// How long a paused phase is watched for audio that should not be there.
    static let silenceMilliseconds = 200

    /// One checked phase: the device that must have received audio in it (or none), how
    /// much (at least, or exactly for the call's fixed-length audio), and what it got.
    struct Phase {
        var name: String
        var output: String
        var expected: [String: Int]
        var exact: Bool
        var got: [String: Int]
        var ok: Bool {
            guard Set(got.keys) == Set(expected.keys) else { return false }
            return expected.allSatisfy { exact ? got[$0.key] == $0.value : (got[$0.key] ?? 0) >= $0.value }
        }
    }

    static func tone(frames: Int, frequency: Double, level: Double = 0.5) -> WAVFile {
        // The encoder's own output always decodes.
        try! WAVFile(bytes: toneBytes(frames: frames, frequency: frequency, level: level))
    }

    static func toneBytes(frames: Int, frequency: Double, level: Double = 0.5) -> [UInt8] {
        var samples: [Double] = []
        samples.reserveCapacity(frames * 2)
        for frame in 0..<frames {
            let value = level * sine(2 * Double.pi * frequency * Double(frame) / 48_000)
            samples.append(value)
            samples.append(value)
        }
        return WAVFile.encode(samples, format: WAVFormat(encoding: .signed16, channels: 2, sampleRate: 48_000))
    }

    /// The music app's player: a 1 s 440 Hz tone written to `file` and played in a loop (it
    /// runs freely for as long as it is wanted), following `routeFile` over `configurationFiles`.
    static func musicPlayer(file: String, routeFile: String, configurationFiles: [String]) throws -> AudioPlayer {
        try AtomicFile.write(toneBytes(frames: 48_000, frequency: 440, level: musicLevel), to: file)
        let player = try AudioPlayer(
            contentsOf: file, device: AlsaRouteConfig.outputPCM, routeFile: routeFile, configurationFiles: configurationFiles,
            periodFrames: 480, latencyMicroseconds: latencyMicroseconds)
        player.numberOfLoops = -1
        return player
    }

    func config() -> PCMConfigurationSource { .systemPlus(files: [asoundrc, routeFile]) }

    /// The story: the music app starts, then each phase in turn, then the checks.
    func play() async throws {
        let inbox = await DemoInbox(music)
        try await music.setCategory(.playback)
        try await music.setActive(true)
        try await waitForRoute(Self.speaker, "demo_builtin")
        let player = try Self.musicPlayer(file: musicFile, routeFile: routeFile, configurationFiles: [asoundrc])
        let following = await player.follow(music)
        defer { following.cancel() }
        let log = DemoPlayerLog(player, timeline: timeline)
        defer { log.stop() }
        let run = StoryRun(story: self, player: player, log: log, inbox: inbox)
        try await run.musicOnTheSpeaker()
        let aplay = try await run.aplayStartsBesideTheMusic()
        try await run.wiredHeadsetPlugged()
        run.aplay = try await run.aplayFollowedTheHeadset(aplay)
        try await run.bluetoothHeadsetConnects()
        try await run.promptDucksTheMusic()
        try await run.callInterruptsTheMusic()
        try await run.bluetoothHeadsetSwitchesOff()
        try await run.callWhileTheMusicIsPaused()
        try await run.playPressedOnTheWiredHeadset()
        try await run.wiredHeadsetUnplugged()
        following.cancel()
        inbox.stop()
        await music.close()
        log.flush()
        try run.verify()
    }

    /// Frames by device, as a JSON object in name order.
    static func framesJSON(_ frames: [String: Int]) -> JSON {
        .object(frames.sorted { $0.key < $1.key }.map { .init($0.key, .integer(Int64($0.value))) })
    }

    static func describe(_ frames: [String: Int]) -> String {
        frames.isEmpty ? "none" : frames.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    /// Waits until the daemon's route file points `audioroute` at `pcm` (and says so).
    func waitForRoute(_ port: String, _ pcm: String) async throws {
        for _ in 0..<1500 {
            if routedPCM() == pcm { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw DemoError("the route file never named \(pcm) for \(port)")
    }

    /// The PCM `audioroute` plays to in the daemon's route file as libasound reads it, or nil.
    func routedPCM() -> String? {
        guard var configuration = try? ALSAConfiguration(), (try? configuration.load(file: routeFile)) != nil else { return nil }
        return configuration.string(at: "pcm.\(AlsaRouteConfig.outputPCM).slave.pcm")
    }
}

/// The music player's events (reroutes, pauses), printed on the timeline as the story
/// goes (`flush`, from the story's own flow: the timeline is not shared across tasks).
final class DemoPlayerLog {
    private let items: Collected<AudioPlayerEvent>
    private let timeline: DemoTimeline

    init(_ player: AudioPlayer, timeline: DemoTimeline) {
        self.timeline = timeline
        items = Collected(player.events)
    }

    func flush() {
        for event in items.takeAll() {
            switch event {
            case .rerouted(let report):
                timeline.event(
                    "music follows", ["resumeFrame": .integer(Int64(report.resumeFrame)), "replayed": .integer(Int64(report.replayedFrames))],
                    "the player moved from \(report.from) to \(report.to), continuing at frame \(report.resumeFrame) of its loop")
            case .playingChanged(let playing):
                timeline.event("player", ["playing": .bool(playing)], playing ? "the player plays" : "the player paused")
            case .decodeError(let error):
                timeline.event("player", ["error": .string(error.description)], "the player failed: \(error)")
            case .finished(let successfully):
                timeline.event("player", ["finished": .bool(successfully)], "the player finished")
            case .interruptionBegan, .interruptionEnded:
                // The session's own interruption events are on the timeline already.
                break
            }
        }
    }

    func stop() { items.stop() }
}

extension String {
    func replacingColons() -> String { String(map { $0 == ":" ? "_" : $0 }) }
}

/// sin(x) without libm: x reduced to [-pi, pi], then its Taylor series to well below a
/// 16-bit sample's step.
func sine(_ x: Double) -> Double {
    var reduced = x.truncatingRemainder(dividingBy: 2 * Double.pi)
    if reduced > Double.pi { reduced -= 2 * Double.pi } else if reduced < -Double.pi { reduced += 2 * Double.pi }
    var term = reduced
    var sum = reduced
    let square = reduced * reduced
    for n in stride(from: 2, through: 40, by: 2) {
        term *= -square / Double(n * (n + 1))
        sum += term
    }
    return sum
}
