// The player as a citizen of the tower (issue 17), against the real audiorouted on a private bus:
// play() activates its session (as AVAudioPlayer's play activates the shared session), so does a
// resume after an interruption, so that the next non-mixable app interrupts it again and a
// duckOthers prompt ducks it; silent mode silences an ambient or soloAmbient player with zero
// samples while the stream runs on. The device is a `file` PCM whose file is a pipe to
// `audioroute demo-sink` (docs/demo.md), so that playback runs at the real rate.
import AudioRouteCore
import AudioRouteSystem
import AudioSession
import Glibc
import Testing

private func contents(_ path: String) -> [UInt8] { (try? AtomicFile.read(path)) ?? [] }

/// Bytes the device got over all its opens: `demo-sink` writes DIR/out.raw, then out.raw.0001... (a
/// pause closes the PCM, the resume opens it again).
private func written(_ dir: String) -> Int {
    var total = 0
    for index in 0..<10_000 {
        let suffix = String(index)
        let path = dir + "/out.raw" + (index == 0 ? "" : "." + String(repeating: "0", count: max(0, 4 - suffix.count)) + suffix)
        guard access(path, F_OK) == 0 else { break }
        total += contents(path).count
    }
    return total
}

/// Polls `condition` every 2 ms for up to `seconds`.
private func eventually(seconds: Double = 15, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
    while try await !condition() {
        if ContinuousClock.now >= deadline { return false }
        try await Task.sleep(for: .milliseconds(2))
    }
    return true
}

/// A paced device `dev` (DIR/out.raw) and `audioroute_route` on it, and DIR/music.wav: `frames` frames
/// of 48 kHz stereo 16-bit that differ from frame to frame, none zero.
private func writeBench(_ dir: String, frames: Int) throws -> WAVFile {
    let sink = productsDirectory + "/audioroute"
    let text = """
        pcm.!dev { type file slave.pcm "null" file "|exec '\(sink)' demo-sink '\(dir)/out.raw'" format "raw" }
        pcm.!audioroute_route { type plug slave.pcm "dev" }

        """
    try AtomicFile.write(Array(text.utf8), to: dir + "/devices.conf")
    let format = WAVFormat(encoding: .signed16, channels: 2, sampleRate: 48_000)
    let samples = (0..<(frames * 2)).map { Double(($0 * 7919) % 20000 + 100) / 32768 }
    try AtomicFile.write(WAVFile.encode(samples, format: format), to: dir + "/music.wav")
    return try WAVFile(contentsOf: dir + "/music.wav")
}

/// Another app's session on `bus`, with its category, activated.
private func activeSession(_ bus: PrivateBus, _ app: String, _ category: AudioRouteCore.Category, mode: Mode = .default, options: CategoryOptions = [])
    async throws -> AudioSession
{
    let session = AudioSession(bus: .address(bus.address), appName: app)
    try await session.setCategory(category, mode: mode, options: options)
    try await session.setActive(true)
    return session
}

@Suite(.serialized) struct PlayerActivationTests {
    @Test func playActivatesTheSessionAndAResumeAfterAnInterruptionActivatesItAgain() async throws {
        try await withTemporaryDirectory { dir in
            let bus = try PrivateBus()
            defer { bus.close() }
            let daemon = try RealDaemon(address: bus.address, directory: dir)
            defer { daemon.kill() }
            _ = try writeBench(dir, frames: 480_000)

            let music = AudioSession(bus: .address(bus.address), appName: "music")
            try await music.setCategory(.playback)
            #expect(try await !music.isActive)
            let player = try AudioPlayer(
                contentsOf: dir + "/music.wav", routeFile: nil, configurationFiles: [dir + "/devices.conf"], periodFrames: 480, latencyMicroseconds: 20_000)
            let delegate = RecordingDelegate()
            player.delegate = delegate
            let following = await player.follow(music)
            defer { following.cancel() }
            try player.play()
            defer { player.stop() }
            // The first period waits for the activation: when audio flows, the session is active.
            try #require(try await eventually { !contents(dir + "/out.raw").isEmpty }, "nothing was played")
            try #require(try await music.isActive, "play() did not activate the session")

            // A prompt ducks it, and the call that comes interrupts it (the prompt mixes and stays).
            let prompt = try await activeSession(bus, "navigation", .playback, mode: .voicePrompt, options: .duckOthers)
            #expect(try await eventually { player.sessionGain == duckGain }, "the prompt did not duck the player")
            let call = try await activeSession(bus, "call", .playAndRecord, mode: .voiceChat)
            #expect(try await eventually { !player.isPlaying && player.isInterrupted }, "the call did not interrupt the player")
            #expect(try await !music.isActive)
            // The prompt ends during the call: the daemon does not tell the inactive music session.
            try await prompt.setActive(false)

            // The call ends with notifyOthers: the player resumes and activates its session again,
            // at full gain (the duck it heard before the call is stale).
            try await call.setActive(false, options: .notifyOthersOnDeactivation)
            #expect(try await eventually { player.isPlaying }, "the player did not resume")
            #expect(try await eventually { try await music.isActive }, "the resumed player's session stayed inactive")
            #expect(player.sessionGain == 1)
            let flowing = written(dir)
            #expect(try await eventually { written(dir) > flowing + 4800 * 4 }, "the resumed player wrote nothing")

            // So a prompt ducks it again, and another playback app interrupts it again: not two apps at once.
            try await prompt.setActive(true)
            #expect(try await eventually { player.sessionGain == duckGain }, "a prompt no longer ducks the resumed player")
            try await prompt.setActive(false, options: .notifyOthersOnDeactivation)
            #expect(try await eventually { player.sessionGain == 1 })
            let other = try await activeSession(bus, "other-player", .playback)
            #expect(try await eventually { !player.isPlaying && player.isInterrupted }, "another playback app did not interrupt the resumed player")
            #expect(try await !music.isActive)
            // The daemon's interruptions reached the delegate: the call's, its end, the other app's.
            #expect(await delegate.wait(for: 3) == [.began, .ended(.shouldResume), .began])
            for session in [other, call, prompt, music] { await session.close() }
        }
    }

    @Test(arguments: [AudioRouteCore.Category.soloAmbient, .ambient])
    func silentModeSilencesThePlayerWithZerosWhileTheStreamRuns(_ category: AudioRouteCore.Category) async throws {
        try await withTemporaryDirectory { dir in
            let bus = try PrivateBus()
            defer { bus.close() }
            let daemon = try RealDaemon(address: bus.address, directory: dir)
            defer { daemon.kill() }
            let source = try writeBench(dir, frames: 480_000)

            let game = AudioSession(bus: .address(bus.address), appName: "game")
            try await game.setCategory(category)
            let player = try AudioPlayer(
                contentsOf: dir + "/music.wav", routeFile: nil, configurationFiles: [dir + "/devices.conf"], periodFrames: 480, latencyMicroseconds: 20_000)
            let following = await player.follow(game)
            defer { following.cancel() }
            try player.play()
            defer { player.stop() }
            try #require(try await eventually { contents(dir + "/out.raw").count >= 4800 * 4 }, "nothing was played")

            // Every frame before `loud` was rendered at full gain, every one from `quiet` on
            // (until `quietEnd`) as zeros; from `again` on at full gain again.
            let loud = player.framesPlayed
            try await game.setSilentMode(true)
            try #require(try await eventually { player.isSilenced }, "silent mode did not silence the \(category) player")
            let quiet = player.framesPlayed
            #expect(try await eventually { player.framesPlayed >= quiet + 9600 }, "the stream stopped while silenced")
            #expect(player.isPlaying)
            let quietEnd = player.framesPlayed
            try await game.setSilentMode(false)
            #expect(try await eventually { !player.isSilenced })
            let again = player.framesPlayed
            try #require(try await eventually { contents(dir + "/out.raw").count >= (again + 4800) * 4 }, "the device stopped taking frames")

            let out = contents(dir + "/out.raw")
            try #require(out.count >= (again + 4800) * 4)
            #expect(Array(out[0..<(loud * 4)]) == Array(source.nativeBytes(frames: 0..<loud)))
            #expect(out[(quiet * 4)..<(quietEnd * 4)].allSatisfy { $0 == 0 }, "a silenced frame was not zero")
            #expect(Array(out[(again * 4)..<((again + 4800) * 4)]) == Array(source.nativeBytes(frames: again..<(again + 4800))))
            await game.close()
        }
    }

    /// `audioroute play`: interrupted by a call, resumed when it ends with notifyOthers, its
    /// session is active again (so the next playback app interrupts it, as `status` would show).
    @Test func theCLIPlayerReactivatesItsSessionWhenItResumes() async throws {
        try await withTemporaryDirectory { dir in
            let bus = try PrivateBus()
            defer { bus.close() }
            let daemon = try RealDaemon(address: bus.address, directory: dir)
            defer { daemon.kill() }
            _ = try writeBench(dir, frames: 480_000)
            try AtomicFile.write(try AtomicFile.read(dir + "/devices.conf"), to: dir + "/.asoundrc")
            let child = try ChildProcess(
                productsDirectory + "/audioroute", ["play", dir + "/music.wav", "--device", "dev"],
                environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address, "HOME": dir, "XDG_RUNTIME_DIR": dir + "/run"],
                errorsToPipe: false)
            defer {
                child.signal(SIGINT)
                if child.wait(seconds: 10) == nil { child.kill() }
            }
            let observer = AudioSession(bus: .address(bus.address), appName: "observer")
            func cliActive() async throws -> Bool? {
                try await observer.sessions.first { $0.app == "audioroute-play" }?.isActive
            }
            try #require(
                try await eventually { try await cliActive() == true && !contents(dir + "/out.raw").isEmpty }, "audioroute play did not start")

            let call = try await activeSession(bus, "call", .playAndRecord, mode: .voiceChat)
            #expect(try await eventually { try await cliActive() == false }, "the call did not interrupt audioroute play")
            let before = written(dir)
            try await call.setActive(false, options: .notifyOthersOnDeactivation)
            #expect(try await eventually { try await cliActive() == true }, "audioroute play resumed with its session inactive")
            #expect(try await eventually { written(dir) > before + 4800 * 4 }, "audioroute play did not resume")

            let other = try await activeSession(bus, "other-player", .playback)
            #expect(try await eventually { try await cliActive() == false }, "another playback app did not interrupt audioroute play")
            for session in [other, call, observer] { await session.close() }
        }
    }
}
