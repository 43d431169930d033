// The player's policy (pure) and the player through the real libasound, with
// `file` PCMs standing for devices (test-bench.md).
import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import AudioRouteMix
import AudioSession
import Glibc
import Testing

private func port(_ uid: String, _ type: PortType) -> PortDescription {
    PortDescription(uid: uid, portType: type, portName: uid, direction: .output, device: uid, priority: 0, sequence: 0)
}

private let speakerRoute = RouteDescription(outputs: [port("speaker", .builtInSpeaker)])
private let headsetRoute = RouteDescription(outputs: [port("headset", .headphones)])

private func change(_ reason: RouteChangeReason, from: RouteDescription, to: RouteDescription) -> AudioSessionNotification {
    .routeChange(RouteChangeInfo(reason: reason, previousRoute: from, currentRoute: to))
}
private let began = AudioSessionNotification.interruption(InterruptionInfo(type: .began, reason: .default, options: []))
private let endedResume = AudioSessionNotification.interruption(InterruptionInfo(type: .ended, reason: nil, options: .shouldResume))
private let endedNoResume = AudioSessionNotification.interruption(InterruptionInfo(type: .ended, reason: nil, options: []))

@Suite struct PlaybackPolicyTests {
    @Test func unplugPausesAndReroutesAndPlugReroutesWithoutPausing() {
        var policy = PlaybackPolicy()
        #expect(policy.play() == [.resume])
        #expect(policy.handle(change(.newDeviceAvailable, from: speakerRoute, to: headsetRoute)) == [.reroute])
        #expect(policy.isPlaying)
        #expect(policy.handle(change(.oldDeviceUnavailable, from: headsetRoute, to: speakerRoute)) == [.pause, .reroute])
        #expect(!policy.isPlaying)
        // Same outputs (an input came): nothing to do.
        #expect(policy.handle(change(.newDeviceAvailable, from: speakerRoute, to: speakerRoute)) == [])
    }

    @Test func routeDisconnectedInterruptionPauses() {
        var policy = PlaybackPolicy()
        _ = policy.play()
        let disconnected = AudioSessionNotification.interruption(InterruptionInfo(type: .began, reason: .routeDisconnected, options: []))
        #expect(policy.handle(disconnected) == [.pause])
        #expect(!policy.isPlaying)
        // No `ended` follows a routeDisconnected: a call that comes and ends with
        // shouldResume while the music is paused must not start it (seed 003).
        #expect(policy.handle(began) == [])
        #expect(policy.handle(endedResume) == [])
        #expect(!policy.isPlaying)
        // Played again, then a call: it resumes after the call.
        #expect(policy.play() == [.resume])
        #expect(policy.handle(began) == [.pause])
        #expect(policy.handle(endedResume) == [.resume])
    }

    @Test func resumesAfterAnInterruptionOnlyIfItWasPlaying() {
        var playing = PlaybackPolicy()
        _ = playing.play()
        #expect(playing.handle(began) == [.pause])
        #expect(playing.handle(endedResume) == [.resume])
        #expect(playing.isPlaying)

        // Paused when the call came: the call's end must not start the music.
        var paused = PlaybackPolicy()
        _ = paused.play()
        _ = paused.pause()
        #expect(paused.handle(began) == [])
        #expect(paused.handle(endedResume) == [])
        #expect(!paused.isPlaying)

        // Ended without shouldResume (a timer's "stop playing"): stay paused.
        var noResume = PlaybackPolicy()
        _ = noResume.play()
        _ = noResume.handle(began)
        #expect(noResume.handle(endedNoResume) == [])
        #expect(!noResume.isPlaying)

        // The user paused during the interruption: do not resume after it.
        var userPaused = PlaybackPolicy()
        _ = userPaused.play()
        _ = userPaused.handle(began)
        _ = userPaused.pause()
        #expect(userPaused.handle(endedResume) == [])
    }

    @Test func ignoredNotificationsAreNamedAsSuch() {
        // What `reacts(to:)` says is ignored must change nothing in `handle`.
        let ignored: [AudioSessionNotification] = [
            .silentModeChanged(true), .silenceSecondaryAudioHint(.begin), .mediaServicesWereLost,
            .portsChanged(.added, port("headset", .headphones)),
        ]
        for notification in ignored {
            #expect(!PlaybackPolicy.reacts(to: notification))
            var policy = PlaybackPolicy()
            _ = policy.play()
            let before = policy
            #expect(policy.handle(notification) == [])
            #expect(policy == before)
        }
        for notification in [
            began, endedResume, .ducked, .unducked, .silenced, .unsilenced, .mediaServicesWereReset,
            change(.newDeviceAvailable, from: speakerRoute, to: headsetRoute),
        ] {
            #expect(PlaybackPolicy.reacts(to: notification))
        }
    }

    @Test func duckGainOnAndOff() {
        var policy = PlaybackPolicy()
        #expect(policy.gain == 1)
        #expect(policy.handle(.ducked) == [.setGain(0.3)])
        #expect(policy.gain == 0.3)
        #expect(policy.handle(.ducked) == [])
        #expect(policy.handle(.unducked) == [.setGain(1)])
        #expect(policy.gain == 1)
        // The shared mix code's duck gain, read as the decimal it is written as.
        #expect(duckGain == 0.3 && Float(duckGain) == ar_mix_gain(1, 0))
    }

    @Test func silencedPlaysZerosAndDuckingWaitsUnderIt() {
        var policy = PlaybackPolicy()
        _ = policy.play()
        #expect(policy.handle(.silenced) == [.setGain(0)])
        #expect(policy.isSilenced && policy.isPlaying && policy.gain == 0)
        #expect(policy.handle(.silenced) == [])
        // Ducked while silenced: still 0; unsilenced: the duck gain.
        #expect(policy.handle(.ducked) == [])
        #expect(policy.handle(.unsilenced) == [.setGain(0.3)])
        #expect(policy.handle(.unducked) == [.setGain(1)])
        #expect(policy.isPlaying)
    }

    @Test func anInactiveSessionForgetsDuckingAndSilencing() {
        // The daemon does not tell an inactive session that they ended; it tells it afresh once active.
        var policy = PlaybackPolicy()
        _ = policy.handle(.ducked)
        _ = policy.handle(.silenced)
        #expect(policy.sessionInactive() == [.setGain(1)])
        #expect(!policy.isDucked && !policy.isSilenced)
        #expect(policy.sessionInactive() == [])
    }
}

/// Two file PCMs, and `audioroute` on one of them, as the daemon's route file would define it.
/// The two devices (file PCMs) and the route file naming `route`; DecodingTests uses them too.
func writeDevices(_ dir: String, route: String = "dev_speaker") throws {
    let text = """
        pcm.!dev_speaker { type file slave.pcm "null" file "\(dir)/speaker.raw" format "raw" }
        pcm.!dev_headset { type file slave.pcm "null" file "\(dir)/headset.raw" format "raw" }

        """
    try AtomicFile.write(Array(text.utf8), to: dir + "/devices.conf")
    try AtomicFile.write(Array("pcm.!audioroute_route { type plug slave.pcm \"\(route)\" }\n".utf8), to: dir + "/route.conf")
}

private func contents(_ path: String) -> [UInt8] { (try? AtomicFile.read(path)) ?? [] }

private func writeSource(_ path: String, frames: Int) throws -> WAVFile {
    let format = WAVFormat(encoding: .signed16, channels: 2, sampleRate: 48000)
    let samples = (0..<(frames * 2)).map { Double(($0 * 7919) % 20000 - 10000) / 32768 }
    try AtomicFile.write(WAVFile.encode(samples, format: format), to: path)
    return try WAVFile(contentsOf: path)
}

/// The player's events up to and including `finished`.
func waitForEnd(_ player: AudioPlayer) async -> [AudioPlayerEvent] {
    var seen: [AudioPlayerEvent] = []
    for await event in player.events {
        seen.append(event)
        if case .finished = event { break }
    }
    return seen
}

@Suite(.serialized) struct AudioPlayerTests {
    @Test func playsTheWholeFileByteExactWithTheDuckGainApplied() async throws {
        try await withTemporaryDirectory { dir in
            try writeDevices(dir, route: "dev_speaker")
            let file = try writeSource(dir + "/a.wav", frames: 5000)
            let player = try AudioPlayer(
                contentsOf: dir + "/a.wav", routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"],
                periodFrames: 500, latencyMicroseconds: 5000)
            #expect(player.duration == 5000.0 / 48000)
            player.handle(.ducked)
            try player.play()
            let events = await waitForEnd(player)
            #expect(events.last == .finished(successfully: true))
            var expected: [UInt8] = []
            // The float the shared mix code applies (0.3f), as the renderer would apply it.
            file.render(frames: 0..<5000, as: .signed16, gains: OutputGains(gain: Double(ar_mix_gain(1, 0))), into: &expected)
            #expect(contents(dir + "/speaker.raw") == expected)
            #expect(!player.isPlaying && player.currentTime == 0)
            // Played to the end once: the file's length, though the position is back at 0.
            #expect(player.framesPlayed == 5000)
        }
    }

    @Test func silencedPlaysTheWholeFileAsZeros() async throws {
        try await withTemporaryDirectory { dir in
            try writeDevices(dir, route: "dev_speaker")
            _ = try writeSource(dir + "/a.wav", frames: 5000)
            let player = try AudioPlayer(
                contentsOf: dir + "/a.wav", routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"],
                periodFrames: 500, latencyMicroseconds: 5000)
            player.handle(.silenced)
            #expect(player.isSilenced && player.sessionGain == 0)
            try player.play()
            let events = await waitForEnd(player)
            #expect(events.last == .finished(successfully: true))
            // The stream ran its whole length, every sample zero.
            #expect(contents(dir + "/speaker.raw") == [UInt8](repeating: 0, count: 5000 * 4))
            #expect(player.framesPlayed == 5000)
        }
    }

    @Test func followsARouteChangeWithNoFrameLostOrRepeated() async throws {
        try await withTemporaryDirectory { dir in
            try writeDevices(dir, route: "dev_speaker")
            let file = try writeSource(dir + "/a.wav", frames: 480_000)
            let player = try AudioPlayer(
                contentsOf: dir + "/a.wav", routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"],
                periodFrames: 256, latencyMicroseconds: 5000)
            try player.prepareToPlay()
            // The daemon rewrites the route file, then announces the change (the PCM
            // is already open on the speaker). Written before play: the write fsyncs,
            // and null does not pace, so the file could end meanwhile.
            try writeDevices(dir, route: "dev_headset")
            try player.play()
            // Mid-file: once the speaker has been written to (the whole file takes ~250 ms here).
            untilStarted(player)
            player.handle(change(.newDeviceAvailable, from: speakerRoute, to: headsetRoute))
            let events = await waitForEnd(player)
            #expect(events.last == .finished(successfully: true))
            let both = contents(dir + "/speaker.raw") + contents(dir + "/headset.raw")
            #expect(both == Array(file.nativeBytes(frames: 0..<480_000)))
            #expect(player.framesPlayed == both.count / 4)
            // The reroute landed mid-file unless the whole file was written first (null does not pace).
            #expect(events.contains(where: { if case .rerouted = $0 { true } else { false } }))
            #expect(!contents(dir + "/headset.raw").isEmpty && !contents(dir + "/speaker.raw").isEmpty)
        }
    }

    @Test func unplugPausesAndPlayResumesOnTheNewRouteFromTheSameFrame() async throws {
        try await withTemporaryDirectory { dir in
            try writeDevices(dir, route: "dev_headset")
            let frames = 480_000
            let file = try writeSource(dir + "/a.wav", frames: frames)
            let player = try AudioPlayer(
                contentsOf: dir + "/a.wav", routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"],
                periodFrames: 256, latencyMicroseconds: 5000)
            try player.prepareToPlay()
            try writeDevices(dir, route: "dev_speaker")
            try player.play()
            untilStarted(player)
            player.handle(change(.oldDeviceUnavailable, from: headsetRoute, to: speakerRoute))
            #expect(!player.isPlaying)
            // Paused at exactly the first frame the headset did not get.
            let stoppedAt = Int((player.currentTime * 48000).rounded())
            #expect(stoppedAt > 0 && stoppedAt < frames)
            #expect(contents(dir + "/headset.raw") == Array(file.nativeBytes(frames: 0..<stoppedAt)))
            #expect(contents(dir + "/speaker.raw").isEmpty)
            try player.play()
            let events = await waitForEnd(player)
            #expect(events.last == .finished(successfully: true))
            #expect(contents(dir + "/headset.raw") + contents(dir + "/speaker.raw") == Array(file.nativeBytes(frames: 0..<frames)))
        }
    }

    @Test func badFilesAreTypedErrors() async throws {
        try await withTemporaryDirectory { dir in
            #expect(throws: AudioPlayerError.file(.missing(path: dir + "/none.wav"))) {
                try AudioPlayer(contentsOf: dir + "/none.wav")
            }
            try AtomicFile.write(Array("hello, not a wav".utf8), to: dir + "/text.wav")
            do {
                _ = try AudioPlayer(contentsOf: dir + "/text.wav")
                Issue.record("a text file loaded")
            } catch let error as AudioPlayerError {
                // Text is no container libsndfile knows: the format is "unknown", the reason libsndfile's.
                guard case .file(.undecodable(dir + "/text.wav", "unknown", let reason)) = error, !reason.isEmpty else {
                    Issue.record("\(error)"); return
                }
            }
        }
    }
}
