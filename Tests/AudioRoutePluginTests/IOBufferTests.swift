// The session's preferred I/O buffer reaches the plugin's streams: AUDIOROUTE_IO_BUFFER_DURATION
// (set in process by AudioSession.setPreferredIOBufferDuration) sets the pieces a stream forwards
// and the queue ahead of the device (ar_io_sizes), 10 ms and ten of them without it.
import AudioRoutePlugin
import AudioRouteSystem
import Testing

/// `ar_io_sizes` as Swift values: (piece, ahead) or the error text.
private func sizes(rate: UInt32 = 48_000, buffer: UInt = 48_000, _ value: String?) -> (piece: UInt, ahead: UInt, error: String?) {
    var piece: UInt = 0
    var ahead: UInt = 0
    var error = [CChar](repeating: 0, count: 160)
    let status = ar_io_sizes(rate, buffer, value, &piece, &ahead, &error, error.count)
    let text = error.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    return (piece, ahead, status == 0 ? nil : text)
}

@Suite struct IOBufferSizeTests {
    @Test func withoutAPreferenceThePiecesAre10msAndTenAhead() {
        for value in [nil, ""] {
            let result = sizes(value)
            #expect(result.piece == 480)
            #expect(result.ahead == 4_800)
            #expect(result.error == nil)
        }
        #expect(sizes(rate: 44_100, nil).piece == 441)
    }

    @Test func aPreferenceSetsThePieceAndTheQueue() {
        let five = sizes("5000")
        #expect(five.piece == 240)
        #expect(five.ahead == 2_400)
        #expect(five.error == nil)
        #expect(sizes("1000").piece == 48)
        #expect(sizes("100000").piece == 4_800)
    }

    @Test func theQueueIsNoLargerThanTheAppsBufferNorThePieceThanTheQueue() {
        let small = sizes(buffer: 1_000, "20000")
        #expect(small.ahead == 1_000)
        #expect(small.piece == 960)
        let tiny = sizes(buffer: 500, "20000")
        #expect(tiny.ahead == 500)
        #expect(tiny.piece == 500)
    }

    @Test(arguments: ["abc", "0", "999", "100001", "-5000", "5000ms", "99999999999999999999999"])
    func aBadValueIsNamedAndTheDefaultsAreUsed(_ value: String) throws {
        let result = sizes(value)
        #expect(result.piece == 480)
        #expect(result.ahead == 4_800)
        let error = try #require(result.error)
        #expect(error.contains("AUDIOROUTE_IO_BUFFER_DURATION \"\(value.prefix(40))\""))
        #expect(error.contains("1000 to 100000 microseconds"))
    }
}

@Suite struct IOBufferAplayTests {
    /// aplay through the plugin with the stream's trace: the sizes it forwards in are the preference's.
    @Test func aplaysStreamForwardsInThePreferredPieces() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try Bench(dir)
            try bench.route(to: "plugtest_a")
            try AtomicFile.write(pattern(4000 * 2, seed: 3), to: dir + "/in.raw")
            func trace(_ value: String?) throws -> (status: Int32, stderr: String) {
                var environment = bench.environment
                environment["AUDIOROUTE_DEBUG"] = "1"
                environment["AUDIOROUTE_IO_BUFFER_DURATION"] = value
                return try run("/usr/bin/aplay", aplay("audioroute", dir + "/in.raw"), environment: environment)
            }
            // aplay's buffer is 4000 frames: ten 10 ms pieces (4800) do not fit, so the queue is the buffer.
            let plain = try trace(nil)
            #expect(plain.status == 0, "\(plain.stderr)")
            #expect(plain.stderr.contains("pieces of 480 frames, 4000 ahead"), "\(plain.stderr)")
            let five = try trace("5000")
            #expect(five.status == 0, "\(five.stderr)")
            #expect(five.stderr.contains("pieces of 240 frames, 2400 ahead"), "\(five.stderr)")
            let bad = try trace("fast")
            #expect(bad.status == 0, "\(bad.stderr)")
            #expect(bad.stderr.contains("AUDIOROUTE_IO_BUFFER_DURATION \"fast\" is not a duration"), "\(bad.stderr)")
            #expect(bad.stderr.contains("pieces of 480 frames, 4000 ahead"), "\(bad.stderr)")
        }
    }
}
