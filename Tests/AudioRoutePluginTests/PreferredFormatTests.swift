// The session's preferred rate and channels run the route's device: AUDIOROUTE_PREFERRED_SAMPLE_RATE
// and AUDIOROUTE_PREFERRED_OUTPUT_CHANNELS / _INPUT_CHANNELS (set in process by AudioSession's
// setters) give the route's plug its slave rate and channels (ar_prefer), the app's stream
// converted to them. The devices are `file` PCMs in WAV format, whose header is what the device
// was opened with; the refusing device is libasound2-plugins' a52 encoder, which runs at the one
// rate its definition names, as dmix does.
import AudioRouteCore
import AudioRouteIPC
import AudioRoutePlugin
import AudioRouteSystem
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `ar_preference` as Swift values: the number, or the error text.
private func preference(_ value: String?, name: String = "AUDIOROUTE_PREFERRED_SAMPLE_RATE", minimum: UInt = 8_000, maximum: UInt = 768_000)
    -> (value: UInt32, error: String?)
{
    var out: UInt32 = 99
    var error = [CChar](repeating: 0, count: 160)
    let status = ar_preference(name, value, minimum, maximum, &out, &error, error.count)
    let text = error.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    return (out, status == 0 ? nil : text)
}

/// A WAV file's format (its `fmt ` chunk, at the canonical offsets the file PCM writes) and its
/// data's 16-bit samples.
private struct WAV {
    let channels: Int
    let rate: Int
    let samples: [Int16]

    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 44, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[36..<40].elementsEqual("data".utf8) else { return nil }
        func word(_ at: Int, _ size: Int) -> Int { (0..<size).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        channels = word(22, 2)
        rate = word(24, 4)
        samples = stride(from: 44, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
    }

    var frames: Int { samples.count / max(channels, 1) }

    /// The first channel's tone, in Hz: its rising zero crossings over the second half second
    /// (past the converter's start), counted against the file's own rate.
    var tone: Double {
        let first = stride(from: 0, to: samples.count, by: channels).map { samples[$0] }
        let window = first.dropFirst(rate / 4).prefix(rate / 2)
        var crossings: [Int] = []
        var previous = window.first ?? 0
        for (offset, sample) in window.enumerated() {
            if previous < 0 && sample >= 0 { crossings.append(offset) }
            previous = sample
        }
        guard let start = crossings.first, let end = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) * Double(rate) / Double(end - start)
    }
}

/// `seconds` of a 1 kHz sine (at half scale), S16_LE stereo at 48 kHz, as raw bytes.
private func sine(seconds: Double) -> [UInt8] {
    let frames = Int(48_000 * seconds)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(frames * 4)
    for frame in 0..<frames {
        let phase = Double(frame % 48) / 48  // 1000 Hz at 48 kHz: 48 frames a period
        let value = UInt16(bitPattern: Int16(16_384 * sin(2 * Double.pi * phase)))
        for _ in 0..<2 { bytes += [UInt8(value & 0xff), UInt8(value >> 8)] }
    }
    return bytes
}

/// A bench whose route plays into WAV file PCMs: `plugtest_wav` (any rate), `plugtest_wav2` (a
/// further output), `plugtest_48k` (an a52 encoder at 48 kHz over `plugtest_wav`: only 48 kHz).
private func wavBench(_ dir: String) throws -> Bench {
    let bench = try Bench(dir)
    var asoundrc = try readText(dir + "/.asoundrc")
    asoundrc += """
        pcm.!plugtest_wav { type file slave.pcm "null" file "\(dir)/out.wav" format "wav" }
        pcm.!plugtest_wav2 { type file slave.pcm "null" file "\(dir)/out2.wav" format "wav" }
        pcm.!plugtest_48k { type a52 slavepcm "plugtest_wav" rate 48000 channels 2 }

        """
    try writeFile(dir + "/.asoundrc", asoundrc)
    try AtomicFile.write(sine(seconds: 1), to: dir + "/in.raw")
    return bench
}

/// aplay plays in.raw (1 s of 1 kHz, 48 kHz stereo) through the plugin with `environment` added.
private func play(_ bench: Bench, _ variables: [String: String], device: String = "audioroute") throws -> (status: Int32, stderr: String) {
    try run("/usr/bin/aplay", aplay(device, bench.dir + "/in.raw"), environment: bench.environment.merging(variables) { $1 })
}

@Suite struct PreferenceValueTests {
    @Test func unsetEmptyAndZeroAreNoPreference() {
        for value in [nil, "", "0"] {
            let result = preference(value)
            #expect(result.value == 0)
            #expect(result.error == nil)
        }
    }

    @Test func aValueInRangeIsTaken() {
        #expect(preference("44100").value == 44_100)
        #expect(preference("8000").value == 8_000)
        #expect(preference("768000").value == 768_000)
        #expect(preference("6", name: "AUDIOROUTE_PREFERRED_OUTPUT_CHANNELS", minimum: 1, maximum: 64).value == 6)
    }

    @Test(arguments: ["abc", "7999", "768001", "-44100", "44100Hz", "44100.0", "99999999999999999999999"])
    func aBadValueIsNamedAndNoneIsUsed(_ value: String) throws {
        let result = preference(value)
        #expect(result.value == 0)
        let error = try #require(result.error)
        #expect(error.contains("AUDIOROUTE_PREFERRED_SAMPLE_RATE \"\(value.prefix(40))\""), "\(error)")
        #expect(error.contains("8000 to 768000"), "\(error)")
    }
}

@Suite struct PreferredFormatAplayTests {
    /// Without a preference the device runs at the app's rate; with one, at the preferred rate,
    /// the app's 48 kHz converted: the same second of the same tone.
    @Test func theDeviceRunsAtThePreferredRateAndTheStreamIsConverted() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try wavBench(dir)
            try bench.route(to: "plugtest_wav")
            for (variables, rate) in [([:], 48_000), (["AUDIOROUTE_PREFERRED_SAMPLE_RATE": "44100"], 44_100),
                                      (["AUDIOROUTE_PREFERRED_SAMPLE_RATE": "96000"], 96_000)] {
                let result = try play(bench, variables)
                #expect(result.status == 0, "\(variables): \(result.stderr)")
                let wav = try #require(WAV(bench.bytes("out.wav")), "\(variables): no WAV written")
                #expect(wav.rate == rate, "\(variables)")
                #expect(wav.channels == 2, "\(variables)")
                // 1 s of frames (aplay pads its last period: up to 1000 frames more, converted).
                #expect(wav.frames >= rate - rate / 100 && wav.frames <= rate + rate / 40, "\(variables): \(wav.frames) frames")
                #expect(abs(wav.tone - 1000) < 5, "\(variables): the tone is \(wav.tone) Hz")
            }
        }
    }

    /// aplay's own periods (125 ms, longer than the 100 ms the plugin keeps queued) through the
    /// rate converter: the converter holds up to a period in its delay, and the writer waited
    /// for ever for it to fall below the queue before the device's period was capped.
    @Test func anAppsLongPeriodsThroughTheConverterPlay() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try wavBench(dir)
            try bench.route(to: "plugtest_wav")
            let arguments = ["10", "/usr/bin/aplay", "-q", "-D", "audioroute", "-t", "raw", "-f", "S16_LE", "-c", "2", "-r", "48000", dir + "/in.raw"]
            let environment = bench.environment.merging(["AUDIOROUTE_PREFERRED_SAMPLE_RATE": "44100"]) { $1 }
            let result = try run("/usr/bin/timeout", arguments, environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            let wav = try #require(WAV(bench.bytes("out.wav")))
            #expect(wav.rate == 44_100)
            #expect(wav.frames >= 44_100 - 441, "\(wav.frames) frames")
        }
    }

    /// The output channels run the device with that count; the input channels are not the output's.
    @Test func theOutputChannelsRunTheDevice() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try wavBench(dir)
            try bench.route(to: "plugtest_wav")
            let mono = try play(bench, ["AUDIOROUTE_PREFERRED_OUTPUT_CHANNELS": "1"])
            #expect(mono.status == 0, "\(mono.stderr)")
            #expect(WAV(bench.bytes("out.wav"))?.channels == 1)
            let input = try play(bench, ["AUDIOROUTE_PREFERRED_INPUT_CHANNELS": "1"])
            #expect(input.status == 0, "\(input.stderr)")
            #expect(WAV(bench.bytes("out.wav"))?.channels == 2)
        }
    }

    /// A bad value is named on standard error and the route's own format used: the stream plays.
    @Test func aBadValueIsNamedAndTheStreamPlaysAtItsOwnRate() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try wavBench(dir)
            try bench.route(to: "plugtest_wav")
            let result = try play(bench, ["AUDIOROUTE_PREFERRED_SAMPLE_RATE": "fast", "AUDIOROUTE_PREFERRED_OUTPUT_CHANNELS": "65"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("AUDIOROUTE_PREFERRED_SAMPLE_RATE \"fast\" is not a number of 8000 to 768000"), "\(result.stderr)")
            #expect(result.stderr.contains("AUDIOROUTE_PREFERRED_OUTPUT_CHANNELS \"65\" is not a number of 1 to 64"), "\(result.stderr)")
            let wav = try #require(WAV(bench.bytes("out.wav")))
            #expect(wav.rate == 48_000)
            #expect(wav.channels == 2)
        }
    }

    /// A device that refuses the preferred rate (one fixed rate, as dmix's) does not fail the
    /// stream: it runs at its own, said once on standard error, and the tone is the same.
    @Test func aDeviceThatRefusesTheRateRunsAtItsOwn() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try wavBench(dir)
            try bench.route(to: "plugtest_48k")
            let result = try play(bench, ["AUDIOROUTE_PREFERRED_SAMPLE_RATE": "44100"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("the route's device plugtest_48k does not run at the session's preferred 44100 Hz: it runs at 48000 Hz"),
                    "\(result.stderr)")
            // The a52 encoder wrote its own stream into the WAV file, at the one rate it runs.
            #expect(WAV(bench.bytes("out.wav"))?.rate == 48_000)
        }
    }

    /// Later streams of the process open a refusing device at what it runs at once: alsa-lib's own
    /// line for the failed try (and the plugin's) appear once, not at every stream of a dmix route.
    @Test func laterStreamsOpenARefusingDeviceWithoutFailingFirst() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try wavBench(dir)
            try bench.route(to: "plugtest_48k")
            let client = dir + "/reopen-client"
            let compiled = try Subprocess.run("/usr/bin/cc", [
                "-std=gnu11", "-Wall", "-Werror", "-o", client, Subprocess.packageRoot + "/Tests/Helpers/reopen-client/reopen-client.c", "-lasound",
            ])
            try #require(compiled.status == 0, "cc: \(compiled.stderr)")
            let environment = bench.environment.merging(["AUDIOROUTE_PREFERRED_SAMPLE_RATE": "44100"]) { $1 }
            let result = try ChildProcess(client, ["audioroute", "3"], environment: environment).collect()
            #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
            #expect(result.stdout == "stream 1: 0\nstream 2: 0\nstream 3: 0\n", "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").filter { $0.contains("Slave PCM not usable") }.count == 1, "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").filter { $0.contains("does not run at the session's preferred") }.count == 1,
                    "\(result.stderr)")
            #expect(WAV(bench.bytes("out.wav"))?.rate == 48_000)
        }
    }

    /// A multiRoute route's further output runs at the preferred rate too, converted as the first.
    @Test func aFurtherOutputRunsAtThePreferredRate() throws {
        try withSyncTemporaryDirectory { dir in
            let bench = try wavBench(dir)
            try bench.writer.write(AlsaRouteConfig(outputs: [port("plugtest_wav"), port("plugtest_wav2")], input: nil))
            let result = try play(bench, ["AUDIOROUTE_PREFERRED_SAMPLE_RATE": "44100"])
            #expect(result.status == 0, "\(result.stderr)")
            for file in ["out.wav", "out2.wav"] {
                let wav = try #require(WAV(bench.bytes(file)), "\(file): no WAV written")
                #expect(wav.rate == 44_100, "\(file)")
                #expect(abs(wav.tone - 1000) < 5, "\(file): the tone is \(wav.tone) Hz")
            }
        }
    }
}
