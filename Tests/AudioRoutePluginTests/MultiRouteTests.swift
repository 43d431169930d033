// A multiRoute route through the plugin as it ships: aplay into two file PCMs that the route
// file names as the route's outputs (docs/alsa.md, "multiRoute"); and the drift correction's
// pure step (ar_drift_step), without a device.
import AudioRouteCore
import AudioRouteIPC
import AudioRoutePlugin
import AudioRouteSystem
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `written` is exactly `frames`, then only silence (aplay pads its last period with zeros).
private func expectExactly(_ written: [UInt8], _ frames: [UInt8], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let same = written.count >= frames.count && Array(written.prefix(frames.count)) == frames  // not in #expect: it would print both
    #expect(same, "\(what): \(written.count) bytes written for \(frames.count): not the frames", sourceLocation: sourceLocation)
    let silence = written.dropFirst(frames.count).allSatisfy { $0 == 0 }
    #expect(silence, "\(what): not silence after the frames", sourceLocation: sourceLocation)
}

@Suite struct PluginMultiRouteTests {
    /// Every output gets every frame, sample-exact, for a read/write app and an mmap one.
    @Test func everyOutputOfTheRouteGetsTheSameFrames() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try Bench(dir)
            try bench.writer.write(AlsaRouteConfig(outputs: [port("plugtest_a"), port("plugtest_b")], input: nil))
            let frames = pattern(4000 * 5 + 400, seed: 41)
            try AtomicFile.write(frames, to: dir + "/in.raw")
            for access in [[], ["-M"]] {
                let result = try run("/usr/bin/aplay", access + aplay("audioroute", dir + "/in.raw"), environment: bench.environment)
                #expect(result.status == 0, "\(access) stderr: \(result.stderr)")
                expectExactly(bench.bytes("a.raw"), frames, "the first output \(access)")
                expectExactly(bench.bytes("b.raw"), frames, "the second output \(access)")
            }
        }
    }

    /// A further output that cannot be opened (its PCM is not defined: an unplugged card's) is
    /// left out; the first output and the other further one play everything.
    @Test func anOutputThatCannotOpenLeavesTheOthersPlaying() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try Bench(dir)
            try bench.writer.write(AlsaRouteConfig(outputs: [port("plugtest_a"), port("plugtest_missing"), port("plugtest_b")], input: nil))
            let frames = pattern(4000 * 3 + 100, seed: 42)
            try AtomicFile.write(frames, to: dir + "/in.raw")
            let result = try run("/usr/bin/aplay", aplay("audioroute", dir + "/in.raw"), environment: bench.environment)
            #expect(result.status == 0, "stderr: \(result.stderr)")
            expectExactly(bench.bytes("a.raw"), frames, "the first output")
            expectExactly(bench.bytes("b.raw"), frames, "the output after the missing one")
        }
    }

    /// An output that joins the route while a stream plays (the route file rewritten, its first
    /// output the same) gets the frames from then on; the first output does not move.
    @Test func anOutputThatJoinsMidStreamPlaysFromThen() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try Bench(dir)
            try bench.route(to: "plugtest_a")
            let first = pattern(4000 * 2, seed: 43)
            let second = pattern(4000 * 2, seed: 44)
            let player = try ChildProcess("/usr/bin/aplay", aplay("audioroute", "-"), environment: bench.environment, input: .pipe)
            player.send(first)
            try #require(waitUntilReadingInput(player), "stderr: \(player.availableStderr())")
            try bench.writer.write(AlsaRouteConfig(outputs: [port("plugtest_a"), port("plugtest_b")], input: nil))
            // Without a daemon the plugin reads the file when inotify says it changed, at its next
            // transfer: a period of silence gives it one (the file PCM makes its file at its setup).
            let silent = [UInt8](repeating: 0, count: 4000)
            player.send(silent)
            try #require(waitUntilReadingInput(player), "stderr: \(player.availableStderr())")
            // The file PCM makes its file at its setup, which a loaded machine may finish a moment
            // after aplay is back reading its input: 5 s at most.
            let deadline = MonotonicClock.milliseconds() + 5000
            while access(dir + "/b.raw", F_OK) != 0 && MonotonicClock.milliseconds() < deadline { MonotonicClock.sleep(nanoseconds: 10_000_000) }
            #expect(access(dir + "/b.raw", F_OK) == 0, "the joining output was not opened; stderr: \(player.availableStderr())")
            player.send(second)
            player.closeInput()
            #expect(player.wait(seconds: 10) == 0, "stderr: \(player.availableStderr())")
            let stream = first + silent + second
            expectExactly(bench.bytes("a.raw"), stream, "the first output")
            // It got a tail of the stream, from the piece after the rewrite: at least `second`, exactly.
            let b = bench.bytes("b.raw")
            let tail = stride(from: stream.count, through: second.count, by: -4).first { n in
                b.count >= n && b.prefix(n).elementsEqual(stream.suffix(n)) && b.dropFirst(n).allSatisfy { $0 == 0 }
            }
            #expect(tail != nil, "the joining output's \(b.count) bytes are not a tail of the stream")
        }
    }
}

@Suite struct PluginDriftTests {
    /// Differences within the threshold, jittering (a card's delay moves by its period), are left alone.
    @Test func jitterWithinTheThresholdIsNotCorrected() {
        var drift = ar_drift()
        for index in 0..<200 {
            #expect(ar_drift_step(&drift, index % 2 == 0 ? 90 : -90, 96, 60) == 0)
        }
    }

    /// A further output that holds 480 frames (10 ms) more than the first loses frames, at most a
    /// step at a time, until it is within a quarter of the threshold; then nothing more.
    @Test func anOutputBehindLosesFramesUntilInStep() {
        var drift = ar_drift()
        var difference = 480
        var dropped = 0
        for _ in 0..<100 {
            let correction = ar_drift_step(&drift, difference, 96, 60)
            #expect(correction >= 0 && correction <= 60)
            difference -= correction
            dropped += correction
        }
        #expect(dropped > 480 - 96 && dropped <= 480)
        #expect(abs(difference) <= 24)
        #expect(ar_drift_step(&drift, difference, 96, 60) == 0)
    }

    /// A further output that has not started (opened late, or run dry) while the first runs holding
    /// 4800 frames gets that much silence ahead of its frames, so that it plays each frame when the
    /// first does; none once it runs, nor when the first does not (a stream's start: both begin together).
    @Test func anOutputThatStartsLateStartsAsFarBehindAsTheFirst() {
        #expect(ar_output_lead(1, 4800, 0) == 4800)
        #expect(ar_output_lead(1, 4800, 1) == 0)
        #expect(ar_output_lead(0, 4800, 0) == 0)
        #expect(ar_output_lead(1, 0, 0) == 0)
    }

    /// One that runs ahead (holds less: its clock is faster) gets frames repeated; a slow drift of
    /// 1 frame a piece (far above a crystal's) is kept within the threshold for good.
    @Test func anOutputAheadGetsFramesRepeatedAndADriftIsHeld() {
        var drift = ar_drift()
        var difference = 0
        var repeated = 0
        for _ in 0..<5000 {
            difference -= 1  // it plays one frame more than the first per piece
            let correction = ar_drift_step(&drift, difference, 96, 60)
            #expect(correction <= 0)
            difference -= correction
            repeated -= correction
            #expect(abs(difference) <= 96 + 60)
        }
        #expect(repeated > 5000 - 200)
    }
}
