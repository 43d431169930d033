import AudioRouteCore
import AudioRouteSystem
import AudioSession
import Synchronization

/// The devices' far ends for `--reroute-bench`: each device's `file` PCM writes into a
/// FIFO that a thread of this process keeps open and reads at the device's real rate
/// (48 kHz, 16-bit stereo), so the player is paced as by a device, no process is started
/// when a PCM opens, and the first frame a device gets is stamped (CLOCK_MONOTONIC) when
/// its read returns.
final class DemoFIFOReaders: Sendable {
    /// Per device: the bytes read, and when a read came after the FIFO had been idle.
    private struct Counts {
        var bytes: [String: Int] = [:]
        var starts: [String: [UInt64]] = [:]
    }
    private let counts = Mutex(Counts())
    /// A read that waited this long for data starts a new stream (a PCM opened).
    static let idleNanoseconds: UInt64 = 60_000_000

    init(_ devices: DemoDevices) throws {
        for name in DemoDevices.names {
            let path = "\(devices.dir)/\(name).fifo"
            try FileDescriptor.makeFIFO(path)
            // Read and write: never an end of file when a PCM closes, and a PCM's open does not wait.
            let fifo = try FileDescriptor.open(path, .readWrite)
            // One page (about 21 ms of audio): the writer is held close to real time, and
            // a device is idle soon after its PCM closes. Set while it is empty.
            fifo.setPipeCapacity(4096)
            // The reader thread owns it from here (for the life of the process).
            let fd = fifo.release()
            if let error = startThread({ [self] in self.read(FileDescriptor(adopting: fd), name) }) {
                throw DemoError("reader thread: errno \(error)")
            }
        }
    }

    private func read(_ fd: borrowing FileDescriptor, _ name: String) {
        // A device that takes a 10 ms period (480 frames, the player's period) at a time.
        // When the previous read's pacing ended: a read returning much later waited for data.
        var ready: UInt64 = 0
        var start: UInt64 = 0
        var total: UInt64 = 0
        while true {
            let count = (try? fd.read(upTo: 1920).count) ?? 0
            let now = MonotonicClock.nanoseconds()
            if count <= 0 { return }
            let newStream = now - ready > Self.idleNanoseconds
            counts.withLock { c in
                c.bytes[name, default: 0] += count
                if newStream { c.starts[name, default: []].append(now) }
            }
            if newStream {
                start = now
                total = 0
            }
            total += UInt64(count)
            // Wait until the device would have played what it took.
            let due = start + total * 1_000_000_000 / 192_000
            let after = MonotonicClock.nanoseconds()
            if due > after { MonotonicClock.sleep(nanoseconds: due - after) }
            ready = MonotonicClock.nanoseconds()
        }
    }

    /// Frames `name` has received.
    func frames(_ name: String) -> Int {
        counts.withLock { ($0.bytes[name] ?? 0) / 4 }
    }

    /// The first stream start on `name` at or after `after`.
    func firstStart(_ name: String, after: UInt64) -> UInt64? {
        counts.withLock { $0.starts[name]?.first { $0 >= after } }
    }
}

/// `audioroute demo --reroute-bench N`: the reroute gap end to end. The music is the
/// AudioPlayer following its session, as in the story. Each cycle: the music plays on the
/// speaker; a USB headset is plugged (the emitter's `tload`, stamped just before the
/// card's last uevent); the time until the headset's device reads its first frame is the
/// gap: the daemon's udev watcher, tower and route file, the D-Bus signal, the client
/// library, the player's reroute (rewind, drain and close of the old PCM, open of the
/// new one through the route file) and its first period's write. Then the headset is
/// unplugged (the player pauses) and play is pressed again.
struct RerouteBench {
    let timeline: DemoTimeline
    let root: String
    let dir: String
    let music: AudioSession
    let emitter: DemoChild
    let readers: DemoFIFOReaders
    let cycles: Int
    let routeFile: String
    let asoundrc: String

    static let headsetUSB = "/devices/pci0000:00/0000:00:14.0/usb1/1-11/1-11.4"

    func run() async throws {
        // The USB headset fixture, its card pointed at demo_usb.
        let fixture = root + "/Tests/Fixtures/udev/usb-headset-razer-blackshark-v3-pro.umockdev"
        guard let text = try? AtomicFile.read(fixture) else { throw DemoError("missing \(fixture)") }
        let cardLine = "P: \(Self.headsetUSB)/1-11.4:1.0/sound/card2"
        var lines = String(decoding: text, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let index = lines.firstIndex(of: cardLine) else { throw DemoError("no card2 record in \(fixture)") }
        lines.insert("E: AUDIOROUTE_ALSA_PCM=demo_usb", at: index + 1)
        let record = lines.joined(separator: "\n")
        let headset = dir + "/usb-headset.umockdev"
        try AtomicFile.write(Array(record.utf8), to: headset)

        try await music.setCategory(.playback)
        try await music.setActive(true)
        try await waitForSpeaker()
        let player = try Story.musicPlayer(file: dir + "/music.wav", routeFile: routeFile, configurationFiles: [asoundrc])
        let following = await player.follow(music)
        defer { following.cancel() }
        // A second subscriber stamps when the session's newDeviceAvailable arrives: the
        // span splits there into the daemon and client library, and the player's reroute.
        let heard = Mutex<[UInt64]>([])
        let notifications = await music.notifications
        let stamping = Task {
            for await notification in notifications {
                let now = MonotonicClock.nanoseconds()
                if case .routeChange(let info) = notification, info.reason == .newDeviceAvailable { heard.withLock { $0.append(now) } }
            }
        }
        defer { stamping.cancel() }
        timeline.event("bench", ["cycles": .integer(Int64(cycles))], "\(cycles) cycles: music on the speaker, USB headset plugged (timed), unplugged")

        var gaps: [Double] = []
        var toClient: [Double] = []
        var toFrame: [Double] = []
        for cycle in 0..<cycles {
            // Playing on the speaker (0.1 s of it).
            let before = readers.frames("demo_builtin")
            if !player.isPlaying {
                // Play pressed, as an app does it: the session activated first.
                try await music.setActive(true)
                try player.play()
            }
            try await waitUntil("music on the speaker (cycle \(cycle))") { readers.frames("demo_builtin") >= before + 4800 }
            let answer = try emitter.ask("tload \(headset)")
            guard answer.hasPrefix("OK tload "), let sent = UInt64(answer.dropFirst("OK tload ".count)) else {
                throw DemoError("emitter: tload: \(answer)")
            }
            var first: UInt64?
            try await waitUntil("the music on the USB headset (cycle \(cycle))") {
                first = readers.firstStart("demo_usb", after: sent)
                return first != nil
            }
            gaps.append(Double(first! - sent) / 1e6)
            if let notified = heard.withLock({ $0.first { $0 >= sent } }) {
                toClient.append(Double(notified - sent) / 1e6)
                toFrame.append(Double(first! - notified) / 1e6)
            }
            let unplug = try emitter.ask("tunplug \(Self.headsetUSB)")
            guard unplug.hasPrefix("OK") else { throw DemoError("emitter: tunplug: \(unplug)") }
            try await waitUntil("the player to pause on the unplug (cycle \(cycle))") { !player.isPlaying }
            try await waitForSpeaker()
            // The headset's device has played out what it had: the next plug starts a new stream.
            var last = -1
            while readers.frames("demo_usb") != last {
                last = readers.frames("demo_usb")
                try await Task.sleep(for: .milliseconds(2 * Int(DemoFIFOReaders.idleNanoseconds / 1_000_000)))
            }
        }
        following.cancel()
        // Wait for the readers to take the last frames, then check that none was lost.
        try await Task.sleep(for: .milliseconds(200))
        let received = DemoDevices.names.map { readers.frames($0) }.reduce(0, +)
        let played = player.framesPlayed
        func stats(_ values: [Double]) -> (p50: Double, p99: Double, max: Double, min: Double) {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return (0, 0, 0, 0) }
            func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int((p / 100 * Double(sorted.count - 1)).rounded()))] }
            return (percentile(50), percentile(99), sorted.last!, sorted.first!)
        }
        let format = { (value: Double) in String(Int((value * 1000).rounded())) + " µs" }
        for (name, values) in [("uevent -> first frame on the USB headset", gaps), ("uevent -> the session's newDeviceAvailable", toClient),
                               ("newDeviceAvailable -> first frame (the player's reroute)", toFrame)] {
            let s = stats(values)
            timeline.event(
                "bench result",
                ["span": .string(name), "count": .integer(Int64(values.count)), "p50ms": .double(s.p50), "p99ms": .double(s.p99),
                 "maxms": .double(s.max), "minms": .double(s.min)],
                "\(name), \(values.count) plugs: p50 \(format(s.p50)), p99 \(format(s.p99)), max \(format(s.max)), min \(format(s.min))")
        }
        timeline.event("bench frames", ["framesPlayed": .integer(Int64(played)), "framesReceived": .integer(Int64(received))],
                       "frames played \(played), received by the devices \(received)")
        if received != played { throw DemoError("the devices received \(received) frames, the player played \(played)") }
    }

    func waitForSpeaker() async throws {
        try await waitUntil("the route file to name demo_builtin") {
            guard let text = try? AtomicFile.read(routeFile) else { return false }
            return String(decoding: text, as: UTF8.self).contains("slave.pcm \"demo_builtin\"")
        }
    }
}
