import AudioRouteCore
import AudioRouteSystem
import AudioRouteTestbed
import AudioSession
import Synchronization

/// The elements of a stream, collected as they come by a task of their own, for a flow that
/// takes them when it is ready.
final class Collected<Item: Sendable>: Sendable {
    private final class Store: Sendable {
        let items = Mutex<[Item]>([])
    }

    private let store: Store
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<Item>) {
        let store = Store()
        self.store = store
        task = Task {
            for await item in stream { store.items.withLock { $0.append(item) } }
        }
    }

    deinit { task.cancel() }

    /// Removes and returns the first item `matches` accepts, if any.
    func take(where matches: (Item) -> Bool) -> Item? {
        store.items.withLock { items in items.firstIndex(where: matches).map { items.remove(at: $0) } }
    }

    /// Removes and returns every item, oldest first.
    func takeAll() -> [Item] {
        store.items.withLock { items in
            defer { items.removeAll() }
            return items
        }
    }

    /// No more items.
    func stop() { task.cancel() }
}

/// Notifications of one session, collected so that the story can wait for one.
final class DemoInbox: Sendable {
    private let items: Collected<AudioSessionNotification>

    init(_ session: AudioSession) async {
        items = Collected(await session.notifications)
    }

    /// Removes and returns the first notification `matches` accepts, waiting up to `seconds`.
    func take(_ what: String, seconds: Double = 15, _ matches: (AudioSessionNotification) -> Bool) async throws -> AudioSessionNotification {
        let deadline = MonotonicClock.milliseconds() + Int64(seconds * 1000)
        while MonotonicClock.milliseconds() < deadline {
            if let item = items.take(where: matches) { return item }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw DemoError("no \(what) within \(seconds) s")
    }

    func stop() { items.stop() }
}

/// The demo's devices: each port's ALSA name is a `file` PCM writing raw frames here.
struct DemoDevices {
    static let names = ["demo_builtin", "demo_headphones", "bluealsa_a2dp", "bluealsa_sco", "demo_usb"]
    let dir: String
    /// This executable: its hidden `demo-sink` command is each device's far end.
    let executable: String
    /// `--reroute-bench`: each device's file is a FIFO (`<name>.fifo`) read by a thread of
    /// the demo (`DemoFIFOReaders`), which stamps the first frame a device gets.
    var fifos = false

    /// The ALSA configuration: a file PCM per device and `bluealsa` (what BlueZ ports name,
    /// `bluealsa:DEV=…,PROFILE=a2dp|sco`) mapped onto them by profile. It is loaded over
    /// the system's, so every name overrides (`pcm.!name`): BlueALSA's own `pcm.bluealsa`
    /// (/etc/alsa/conf.d/20-bluealsa.conf), merged with this one, is a load error.
    var configuration: String {
        var text = ""
        for name in Self.names {
            // The story's: the file is a pipe to `audioroute demo-sink`, started at each
            // open, which takes the frames at the device's real rate (the null slave does
            // not pace) and writes <name>.raw, or <name>.raw.0001, ... if it exists.
            if fifos {
                text += "pcm.!\(name) { type file slave.pcm \"null\" file \"\(dir)/\(name).fifo\" format \"raw\" truncate true }\n"
            } else {
                text += "pcm.!\(name) { type file slave.pcm \"null\" file \"|exec '\(executable)' demo-sink '\(dir)/\(name).raw'\" format \"raw\" }\n"
            }
        }
        text += """
            pcm.!bluealsa {
              @args [ DEV PROFILE ]
              @args.DEV { type string default "00:00:00:00:00:00" }
              @args.PROFILE { type string default "a2dp" }
              type plug
              slave.pcm { @func concat strings [ "bluealsa_" $PROFILE ] }
            }

            """
        return text
    }

    /// Every output file and its length in frames (16-bit stereo: 4 bytes a frame).
    /// One file per open of a device: name.raw, then name.raw.0001, .0002...
    func files() -> [String: Int] {
        var result: [String: Int] = [:]
        for file in (try? Directory.entries(dir)) ?? [] where device(of: file) != nil {
            if let size = FileInfo.size("\(dir)/\(file)") { result[file] = size / 4 }
        }
        return result
    }

    /// The device a file belongs to.
    func device(of file: String) -> String? { Self.names.first { file == "\($0).raw" || file.hasPrefix("\($0).raw.") } }

    /// Frames each device has received so far: the sum of its files.
    func frames() -> [String: Int] {
        var result: [String: Int] = [:]
        for name in Self.names { result[name] = 0 }
        for (file, frames) in files() { if let name = device(of: file) { result[name, default: 0] += frames } }
        return result
    }

    /// Frames each device received between two snapshots of `files()` (devices that got none left out).
    func frames(from start: [String: Int], to end: [String: Int]) -> [String: Int] {
        var result: [String: Int] = [:]
        for (file, count) in end where count != start[file] {
            if let name = device(of: file) { result[name, default: 0] += count - (start[file] ?? 0) }
        }
        return result
    }

    /// Waits (polling every millisecond) until `device` has received `frames` frames since
    /// the snapshot `start`; the frames it got. Throws after `seconds`.
    func waitForFrames(on device: String, atLeast frames: Int, since start: [String: Int], what: String? = nil, seconds: Double = 10) async throws -> Int {
        let deadline = MonotonicClock.milliseconds() + Int64(seconds * 1000)
        while true {
            let got = self.frames(from: start, to: files())[device] ?? 0
            if got >= frames { return got }
            guard MonotonicClock.milliseconds() < deadline else {
                throw DemoError("waited \(seconds) s for \(what ?? "\(frames) frames of music on \(device)"): it got \(got)")
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// The largest sample of what `device` received since the snapshot `start`.
    func peak(of device: String, since start: [String: Int]) -> Double {
        files().filter { self.device(of: $0.key) == device }.map { peak($0.key, from: start[$0.key] ?? 0) }.max() ?? 0
    }

    /// The largest sample (0...1 of full scale) of `file` from frame `from` on (to frame `to`).
    func peak(_ file: String, from: Int, to: Int? = nil) -> Double {
        guard let bytes = try? AtomicFile.read("\(dir)/\(file)"), bytes.count > from * 4 else { return 0 }
        var peak = 0
        var index = from * 4
        let end = min(bytes.count, (to ?? Int.max / 8) * 4)
        while index + 1 < end {
            let sample = Int(Int16(bitPattern: UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8))
            peak = max(peak, abs(sample))
            index += 2
        }
        return Double(peak) / 32768
    }
}

/// The story: the harness up, then music through route changes, a prompt, a call, an
/// override and an unplug, checked at the end against what the file PCMs received.
struct DemoStory {
    let root: String
    let timeline: DemoTimeline
    /// `--reroute-bench N`: N plug/unplug cycles measured instead of the story.
    var benchCycles: Int? = nil
    /// Frames the music must reach a device with in each phase it is audible (0.25 s at 48 kHz).
    static let windowFrames = 12_000
    static let promptFrames = 4_800
    static let callFrames = 8_000
    static let btAddress = "00:1B:66:AD:7E:01"

    func run() async throws {
        let emitterScript = root + "/share/demo/emitter.py"
        let fixture = root + "/share/demo/phone.umockdev"
        let bluezScript = root + "/scripts/bluez-testbench.py"
        for path in [emitterScript, fixture, bluezScript] where !FileInfo.isReadable(path) {
            throw DemoError("missing \(path): the demo's fixtures ship with the package (share/demo, scripts)")
        }
        let dir = try Directory.makeTemporary(prefix: "/tmp/audioroute-demo-")
        demoRegistry.add(dir: dir)
        for sub in ["out", "logs", "run", "state"] { try AtomicFile.createDirectory(dir + "/" + sub) }
        let selfPath = Directory.currentExecutable() ?? ""
        guard !selfPath.contains("'") else { throw DemoError("the demo cannot run from a path with a quote: \(selfPath)") }
        var devices = DemoDevices(dir: dir + "/out", executable: selfPath)
        devices.fifos = benchCycles != nil
        let readers = benchCycles != nil ? try DemoFIFOReaders(devices) : nil
        let asoundrc = dir + "/asoundrc"
        try AtomicFile.write(Array(devices.configuration.utf8), to: asoundrc, mode: 0o644, durable: false)
        timeline.event("harness", ["dir": .string(dir)], "temporary directory \(dir)")

        // Each child lives as long as this: letting one go closes its standard streams.
        let (sessionBus, busAddress) = try startSessionBus(dir)
        let (bluez, systemBus) = try startBluez(dir, script: bluezScript)
        let (emitter, testbed) = try startTestbed(dir, script: emitterScript, fixture: fixture)
        let daemon = try startDaemon(dir, next: selfPath, testbed: testbed, emitter: emitter, busAddress: busAddress, systemBus: systemBus)
        let bus = AudioSession.Bus.address(busAddress)
        let music = AudioSession(bus: bus, appName: "music")
        timeline.event("daemon", ["pid": .integer(Int64(daemon.process.pid))], "audiorouted is up (pid \(daemon.process.pid))")

        let routeFile = dir + "/run/audioroute/asound.conf"
        if let benchCycles, let readers {
            try await RerouteBench(
                timeline: timeline, root: root, dir: dir, music: music, emitter: emitter, readers: readers, cycles: benchCycles,
                routeFile: routeFile, asoundrc: asoundrc
            ).run()
        } else {
            let aplay = AplaySetup.prepare(root: root, dir: dir, executable: selfPath, busAddress: busAddress, timeline: timeline)
            try await Story(timeline: timeline, bus: bus, music: music, devices: devices, bluez: bluez, emitter: emitter,
                            routeFile: routeFile, asoundrc: asoundrc, musicFile: dir + "/music.wav", aplay: aplay).play()
        }
        withExtendedLifetime((sessionBus, bluez, emitter, daemon)) {}
    }

    /// A private session bus (AudioRouteTestbed's dbus-daemon), and its address.
    func startSessionBus(_ dir: String) throws -> (PrivateBusDaemon, String) {
        let sessionBus = try PrivateBusDaemon(
            socket: dir + "/session_bus", log: .open(dir + "/logs/dbus-daemon.log", [.writeOnly, .create, .append]), seconds: 20,
            started: { demoRegistry.add($0) })
        timeline.event("sessionBus", ["address": .string(sessionBus.address)], "private session bus at \(sessionBus.address)")
        return (sessionBus, sessionBus.address)
    }

    /// A private system bus with the BlueZ mock and its adapter hci0; the mock and the bus's address.
    func startBluez(_ dir: String, script: String) throws -> (DemoChild, String) {
        let bluez = try DemoChild("bluez-testbench", ["/usr/bin/python3", script], log: dir + "/logs/bluez.log")
        let bluezReady = try bluez.readLine(seconds: 30)
        guard bluezReady.hasPrefix("ready ") else { throw DemoError("bluez-testbench said \(bluezReady)") }
        let systemBus = String(bluezReady.dropFirst("ready ".count))
        try bluez.expectOK(#"{"cmd": "adapter", "name": "hci0", "alias": "demo-phone"}"#)
        timeline.event("systemBus", ["address": .string(systemBus)], "private system bus with the BlueZ mock (adapter hci0) at \(systemBus)")
        return (bluez, systemBus)
    }

    /// The umockdev testbed of the phone, with its headset jack, driven by the emitter; the
    /// emitter and the testbed's root.
    func startTestbed(_ dir: String, script: String, fixture: String) throws -> (DemoChild, String) {
        let emitter = try DemoChild(
            "emitter", ["umockdev-wrapper", "/usr/bin/python3", script], environment: ["PYTHONUNBUFFERED": "1"],
            log: dir + "/logs/emitter.log")
        let emitterReady = try emitter.readLine(seconds: 30)
        guard emitterReady.hasPrefix("READY ") else { throw DemoError("umockdev emitter said \(emitterReady)") }
        let testbed = String(emitterReady.dropFirst("READY ".count))
        try emitter.expectOK("jackdev /dev/input/event20 14 0 PinePhone_Headset_Jack")
        try emitter.expectOK("load \(fixture)")
        timeline.event("testbed", ["root": .string(testbed)], "umockdev testbed: a phone (speaker, receiver, mic, headset jack)")
        return (emitter, testbed)
    }

    /// The real audiorouted next to this executable, in the testbed, on the private buses
    /// (AudioRouteTestbed's launch), once it has said READY=1.
    func startDaemon(_ dir: String, next selfPath: String, testbed: String, emitter: DemoChild, busAddress: String, systemBus: String) throws -> LaunchedDaemon {
        let daemonPath = String(selfPath[..<(selfPath.lastIndex(of: "/") ?? selfPath.startIndex)]) + "/audiorouted"
        guard FileInfo.isExecutable(daemonPath) else { throw DemoError("no audiorouted next to \(selfPath): build every product first (swift build)") }
        var launch = DaemonLaunch(binary: daemonPath, directory: dir, sessionBus: busAddress)
        launch.systemBus = systemBus
        launch.wrapper = ["umockdev-wrapper"]
        // No UCM helper: the phone is a umockdev record, whose card has no control device for
        // a UCM profile to open (libasound's card lookup aborts inside umockdev's preload).
        launch.arguments = ["--ucm-helper", "none"]
        launch.environment = ["UMOCKDEV_DIR": testbed]
        let daemon = try launch.start(
            standardInput: .open("/dev/null", .readOnly), standardOutput: .open("/dev/null", .writeOnly),
            standardError: .open(dir + "/logs/audiorouted.log", [.writeOnly, .create, .append]), started: { demoRegistry.add($0) })
        emitter.send("adopt \(daemon.process.pid)")
        _ = try emitter.readLine()
        do {
            try daemon.waitUntilReady(seconds: 15)
        } catch {
            throw DemoError("\(error) (see its log)")
        }
        return daemon
    }
}
