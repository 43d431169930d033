// Player output engine benchmark (docs/benchmarks.md, "Player").
//
//   swift build -c release --product player-bench
//   .build/release/player-bench [--seconds 600] [--reroutes 500]
//
// cpu:     the engine renders and writes N seconds of a 48 kHz stereo WAV to
//          libasound's `null` PCM (which does not pace), for each case: 16-bit
//          at unity gain (bytes copied), 16-bit with volume/pan/duck (every
//          sample converted), float32 with gains, 16-bit at rate 1.5 (the
//          varispeed resampler, unity gain; "a second of audio" is a second
//          of output), and at 1.5 and 0.75 through SoundTouch (pitch kept,
//          its default settings). Reported: process CPU time
//          (user + system, getrusage) per second of audio. The null PCM's own
//          cost is included; there is no device or file I/O.
// reroute: a 48 kHz stereo 16-bit file plays through `file` PCMs (null slave,
//          files in a temporary directory) with a 100 ms buffer, following a
//          route file through the ALSA plugin's mover; after every 4 periods of
//          1024 frames the route file names the other PCM and the engine is told.
//          The gap is from `routeChanged` to the return of the first period
//          write, which moves (CLOCK_MONOTONIC): the route file's read, the new
//          PCM's open, the old one's drain. A file PCM does not play: its drain
//          is immediate, so a real device's play-out is not in these figures.

import AudioRouteCore
import AudioRouteSystem

import AudioSession
import AudioRouteALSA
import AudioRouteDecoding
import Foundation  // getrusage, mkdtemp, unlink (glibc, through Foundation: a benchmark, not shipped)

func option(_ name: String, _ fallback: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let value = Int(arguments[index + 1]) else {
        return fallback
    }
    return value
}

/// `seconds` of a 48 kHz stereo tone-ish signal in `encoding`.
func makeFile(_ encoding: SampleEncoding, seconds: Int) throws -> WAVFile {
    let frames = 48_000 * seconds
    var samples = [Double](repeating: 0, count: frames * 2)
    var state: UInt32 = 1
    for index in 0..<samples.count {
        state = state &* 1_664_525 &+ 1_013_904_223
        samples[index] = (Double(state >> 16) / 65536 - 0.5) * 0.8
    }
    let format = WAVFormat(encoding: encoding, channels: 2, sampleRate: 48_000)
    return try WAVFile(bytes: WAVFile.encode(samples, format: format))
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return user + system
}

func cpu(seconds: Int) throws {
    print("cpu: \(seconds) s of 48 kHz stereo to the null PCM, periods of 1024 frames")
    let cases: [(String, SampleEncoding, OutputGains, Double, Bool)] = [
        ("s16, unity (bytes copied)", .signed16, .unity, 1, false),
        ("s16, volume 0.8 pan -0.3 duck 0.5", .signed16, OutputGains(volume: 0.8, pan: -0.3, gain: 0.5), 1, false),
        ("float32, volume 0.8 pan -0.3 duck 0.5", .float32, OutputGains(volume: 0.8, pan: -0.3, gain: 0.5), 1, false),
        ("s16, unity, rate 1.5 (varispeed)", .signed16, .unity, 1.5, false),
        ("s16, unity, rate 1.5 (SoundTouch, pitch kept)", .signed16, .unity, 1.5, true),
        ("s16, unity, rate 0.75 (SoundTouch, pitch kept)", .signed16, .unity, 0.75, true),
    ]
    for (name, encoding, gains, rate, stretch) in cases {
        // A 10 s file played from the start again until `seconds` have been written.
        let file = try makeFile(encoding, seconds: 10)
        let engine = try PlaybackEngine(file: file, device: "null", periodFrames: 1024)
        engine.gains = gains
        engine.rate = rate
        if stretch {
            guard let stretcher = SoundTouchStretcher(sampleRate: 48_000, rate: rate) else { fatalError("SoundTouch refused 48 kHz at \(rate)") }
            engine.stretcher = stretcher
        }
        let start = cpuSeconds()
        let wall = MonotonicClock.nanoseconds()
        var written = 0
        while written < seconds * 48_000 {
            let frames = try engine.writeNextPeriod()
            if frames == 0 { try engine.seek(to: 0) }
            written += frames
        }
        let used = cpuSeconds() - start
        let elapsed = Double(MonotonicClock.nanoseconds() - wall) / 1e9
        let perSecond = used / Double(seconds) * 1000
        print("  \(name): CPU \(fmt(used)) s for \(seconds) s of audio = \(fmt(perSecond)) ms per second of audio (\(fmt(perSecond / 10)) % of one core); wall \(fmt(elapsed)) s")
    }
}

func reroutes(count: Int) throws {
    // No moves, no gaps to rank (`--reroutes 0`: the CPU figures alone).
    guard count > 0 else {
        print("reroute: skipped (--reroutes \(count))")
        return
    }
    var template = Array("/tmp/player-bench-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("mkdtemp") }
    let dir = String(cString: made)
    defer {
        for name in ["a.raw", "b.raw", "devices.conf", "route.conf"] { unlink(dir + "/" + name) }
        rmdir(dir)
    }
    try AtomicFile.write(Array("""
        pcm.!bench_a { type file slave.pcm "null" file "\(dir)/a.raw" format "raw" }
        pcm.!bench_b { type file slave.pcm "null" file "\(dir)/b.raw" format "raw" }

        """.utf8), to: dir + "/devices.conf")
    func route(_ device: String) throws {
        try AtomicFile.write(Array("pcm.!audioroute_route { type plug slave.pcm \"\(device)\" }\n".utf8), to: dir + "/route.conf")
    }
    try route("bench_a")
    let file = try makeFile(.signed16, seconds: 10)
    let engine = try PlaybackEngine(
        file: file, device: "audioroute_route", configuration: .route(file: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"]),
        periodFrames: 1024)
    var gaps: [UInt64] = []
    var moves = 0
    for index in 0..<count {
        for _ in 0..<4 where try engine.writeNextPeriod() == 0 { try engine.seek(to: 0) }
        try route(index % 2 == 0 ? "bench_b" : "bench_a")
        let start = MonotonicClock.nanoseconds()
        engine.routeChanged()
        // At the file's end the write writes nothing: from the start again (the move is still due).
        if try engine.writeNextPeriod() == 0 {
            try engine.seek(to: 0)
            try engine.writeNextPeriod()
        }
        gaps.append(MonotonicClock.nanoseconds() - start)
        if engine.takeMove() != nil { moves += 1 }
    }
    gaps.sort()
    func at(_ fraction: Double) -> String { fmt(Double(gaps[min(gaps.count - 1, Int(Double(gaps.count) * fraction))]) / 1e6) }
    print("reroute: \(count) moves between two file PCMs through the plugin's mover, 100 ms buffer, 1024-frame periods")
    print("  gap (routeChanged -> first period written on the new PCM): p50 \(at(0.5)) ms, p99 \(at(0.99)) ms, max \(fmt(Double(gaps.last!) / 1e6)) ms")
    print("  moves made: \(moves) of \(count)")
}

func fmt(_ value: Double) -> String {
    let scaled = (value * 1000).rounded() / 1000
    return "\(scaled)"
}

do {
    try cpu(seconds: option("--seconds", 600))
    try reroutes(count: option("--reroutes", 500))
} catch {
    print("player-bench: \(error)")
    exit(1)
}
