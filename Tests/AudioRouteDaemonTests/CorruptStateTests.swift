// The state file as a fault injector leaves it: a corpus of corrupt files and
// things that are not files, each loaded through StateStore.load; what the writer
// keeps within the limits; silent mode across a restart; and the built daemon
// with a FIFO or a link to /dev/zero as its state.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteDaemon
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Logging
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A valid state file: the one every truncation cuts.
private let validDocument: String = {
    var state = DaemonState()
    for uid in ["usb-headset", "bt-00:11:22:33:44:55-a2dp", "hdmi-0"] { _ = state.sequences.arrival(of: uid) }
    state.priorities = ["usb-headset": 150, "hdmi-0": -5]
    state.preferredInputs = ["org.gnome.Calls": "usb-headset-mic"]
    state.silentMode = true
    return String(decoding: state.fileBytes, as: UTF8.self)
}()

/// A document with the given members replacing the valid defaults (raw JSON texts).
private func document(
    version: String = "1", counter: String = "3", sequences: String = #"{"a": 1}"#, priorities: String = #"{"a": 5}"#,
    preferred: String = #"{"app": "mic"}"#, extra: String = ""
) -> String {
    #"{"version": \#(version), "sequenceCounter": \#(counter), "sequences": \#(sequences), "priorities": \#(priorities), "preferredInputs": \#(preferred)\#(extra)}"#
}

/// `count` members `"<prefix><n>": <value>`.
private func members(_ count: Int, prefix: String = "k", value: (Int) -> String) -> String {
    "{" + (0..<count).map { "\"\(prefix)\($0)\": \(value($0))" }.joined(separator: ", ") + "}"
}

/// One corrupt state: what to put at the state file's path, and a part of the reason
/// the load must give (the fault named: a JSON path, a kind of file, a size).
struct Corruption: Sendable, CustomTestStringConvertible {
    var name: String
    var reason: String
    var make: @Sendable (_ path: String, _ dir: String) throws -> Void
    var testDescription: String { name }

    static func text(_ name: String, _ reason: String, _ content: @escaping @Sendable () -> String) -> Corruption {
        Corruption(name: name, reason: reason) { path, _ in try writeText(path, content()) }
    }

    static func truncated(at cut: Int) -> Corruption {
        let count = validDocument.utf8.count
        let length = cut < 0 ? count + cut : cut
        return .text("truncated to \(length) of \(count) bytes", "not JSON") { String(decoding: Array(validDocument.utf8)[..<length], as: UTF8.self) }
    }
}

/// Makes a Unix socket at `path` and leaves it there (the descriptor is closed: the name stays).
private func makeSocket(_ path: String) throws {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in for (index, byte) in path.utf8.enumerated() { buffer[index] = byte } }
    let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
    guard bound == 0 else { throw TestFailure("bind \(path): errno \(errno)") }
}

private func check(_ result: Int32, _ what: String) throws { if result != 0 { throw TestFailure("\(what): errno \(errno)") } }

private let corpus: [Corruption] = [
    // Cut short at several points.
    .truncated(at: 1), .truncated(at: 12), .truncated(at: 40), .truncated(at: validDocument.utf8.count / 2), .truncated(at: -3),
    // Not JSON.
    .text("empty", "not JSON") { "" },
    .text("binary", "not JSON") { "garbage\u{0}\u{1}\u{7f}" },
    .text("nested 300 deep", "nesting deeper than 256") { String(repeating: "[", count: 300) + String(repeating: "]", count: 300) },
    .text("unpaired surrogate", "unpaired surrogate") { document(preferred: #"{"app": "\ud800"}"#) },
    // Not the document.
    .text("an array", "$: expected an object, found an array") { "[1, 2, 3]" },
    .text("a string", "$: expected an object, found a string") { "\"state\"" },
    .text("no version", "$.version: missing") { #"{"sequenceCounter": 0, "sequences": {}, "priorities": {}, "preferredInputs": {}}"# },
    .text("unsupported version", "$.version: unsupported version 2") { document(version: "2") },
    .text("version a string", "$.version: missing or not an integer") { document(version: "\"1\"") },
    .text("version repeated", #"$: duplicate key "version""#) { document(extra: #", "version": 1"#) },
    .text("no preferred inputs", "$.preferredInputs: missing") { #"{"version": 1, "sequenceCounter": 0, "sequences": {}, "priorities": {}}"# },
    .text("sequences an array", "$.sequences: missing or not an object") { document(sequences: "[1]") },
    // Counters and sequences.
    .text("negative counter", "$.sequenceCounter") { document(counter: "-1") },
    .text("counter over 2^53", "$.sequenceCounter: missing or not an integer in 0...9007199254740992") { document(counter: "9007199254740993", sequences: "{}") },
    .text("negative sequence", #"$.sequences["a"]: expected an integer in 1...sequenceCounter (3), found -5"#) { document(sequences: #"{"a": -5}"#) },
    .text("sequence zero", #"$.sequences["a"]"#) { document(sequences: #"{"a": 0}"#) },
    .text("sequence over the counter", #"$.sequences["a"]: expected an integer in 1...sequenceCounter (3), found 4"#) { document(sequences: #"{"a": 4}"#) },
    .text("sequence a string", #"$.sequences["a"]"#) { document(sequences: #"{"a": "1"}"#) },
    .text("4097 sequences", "$.sequences: 4097 entries; at most 4096") { document(counter: "4097", sequences: members(4097) { "\($0 + 1)" }) },
    .text("sequence key of 4097 bytes", "a key of 4097 bytes; at most 4096") { document(sequences: "{\"\(String(repeating: "u", count: 4097))\": 1}") },
    // Priorities.
    .text("priority -2^63", #"$.priorities["p"]: expected an integer in -1000...1000, found -9223372036854775808"#) {
        document(priorities: #"{"p": -9223372036854775808}"#)
    },
    .text("priority 2^63-1", #"$.priorities["p"]: expected an integer in -1000...1000, found 9223372036854775807"#) {
        document(priorities: #"{"p": 9223372036854775807}"#)
    },
    .text("priority 1001", #"$.priorities["p"]: expected an integer in -1000...1000, found 1001"#) { document(priorities: #"{"p": 1001}"#) },
    .text("priority -1001", #"found -1001"#) { document(priorities: #"{"p": -1001}"#) },
    .text("priority 1.5", #"$.priorities["p"]: expected an integer in -1000...1000, found 1.5"#) { document(priorities: #"{"p": 1.5}"#) },
    .text("priority 10^20", #"$.priorities["p"]"#) { document(priorities: #"{"p": 100000000000000000000}"#) },
    .text("priority a string", #"$.priorities["p"]: expected an integer in -1000...1000, found a string"#) { document(priorities: #"{"p": "high"}"#) },
    .text("priority repeated", #"$.priorities: duplicate key "a""#) { document(priorities: #"{"a": 1, "a": 2}"#) },
    .text("1025 priorities", "$.priorities: 1025 entries; at most 1024") { document(priorities: members(1025) { _ in "1" }) },
    // Preferred inputs and silent mode.
    .text("preferred input a number", #"$.preferredInputs["app"]: expected a port uid string, found a number"#) { document(preferred: #"{"app": 7}"#) },
    .text("preferred input of 5000 bytes", #"$.preferredInputs["app"]: a string of 5000 bytes; at most 4096"#) {
        document(preferred: "{\"app\": \"\(String(repeating: "m", count: 5000))\"}")
    },
    .text("1025 preferred inputs", "$.preferredInputs: 1025 entries; at most 1024") { document(preferred: members(1025, prefix: "app") { "\"mic-\($0)\"" }) },
    .text("silent mode a string", "$.silentMode: expected a boolean, found a string") { document(extra: #", "silentMode": "yes""#) },
    .text("silent mode null", "$.silentMode: expected a boolean, found null") { document(extra: #", "silentMode": null"#) },
    // Too large to be read at all.
    .text("a 10 MB string", "is larger than 1048576 bytes") { document(preferred: "{\"app\": \"\(String(repeating: "m", count: 10_000_000))\"}") },
    .text("2 MiB of valid JSON", "is larger than 1048576 bytes") {
        document(counter: "40000", sequences: members(40000, prefix: String(repeating: "p", count: 40)) { "\($0 + 1)" })
    },
    // Not a regular file.
    Corruption(name: "a FIFO without a writer", reason: "is a FIFO, not a regular file") { path, _ in try check(mkfifo(path, 0o600), "mkfifo") },
    Corruption(name: "a directory", reason: "is a directory, not a regular file") { path, _ in try check(mkdir(path, 0o700), "mkdir") },
    Corruption(name: "a socket", reason: "is a socket, not a regular file") { path, _ in try makeSocket(path) },
    Corruption(name: "a character device (/dev/zero's numbers)", reason: "is a character device, not a regular file") { path, _ in
        // Needs CAP_MKNOD (the suite runs as root). 1:5, glibc's makedev for small numbers (a macro Swift cannot call).
        try check(mknod(path, S_IFCHR | 0o600, dev_t(1 << 8 | 5)), "mknod")
    },
    Corruption(name: "a link to /dev/zero", reason: "is a symbolic link, not a regular file") { path, _ in try check(symlink("/dev/zero", path), "symlink") },
    Corruption(name: "a link to a FIFO", reason: "is a symbolic link, not a regular file") { path, dir in
        try check(mkfifo(dir + "/fifo", 0o600), "mkfifo")
        try check(symlink(dir + "/fifo", path), "symlink")
    },
    Corruption(name: "a dangling link", reason: "is a symbolic link, not a regular file") { path, dir in try check(symlink(dir + "/nothing", path), "symlink") },
    // Refused too, by design (docs/daemon.md, "Limits"): the daemon never makes the file a link.
    Corruption(name: "a link to a valid state file", reason: "is a symbolic link, not a regular file") { path, dir in
        try writeText(dir + "/elsewhere.json", validDocument)
        try check(symlink(dir + "/elsewhere.json", path), "symlink")
    },
]

/// A load and its result, handed to a thread.
private final class LoadBox: Sendable {
    let store: StateStore
    let logger: Logger
    let result = Mutex<(DaemonState, StateStore.LoadOutcome)?>(nil)
    init(_ store: StateStore, _ logger: Logger) {
        self.store = store
        self.logger = logger
    }
}

/// `store.load` on a thread of its own, waited for up to `seconds`: nil if it has not
/// returned by then (blocked in a system call). Not on the cooperative pool, which has a
/// thread per core: two loads blocked on FIFOs there would leave no thread to time them out.
/// A blocked thread is left behind; the test fails instead of hanging the suite.
private func loadOnOwnThread(_ store: StateStore, logger: Logger, seconds: Double) throws -> (DaemonState, StateStore.LoadOutcome)? {
    let box = LoadBox(store, logger)
    var thread = pthread_t()
    let started = pthread_create(&thread, nil, { argument in
        let box = Unmanaged<LoadBox>.fromOpaque(argument!).takeRetainedValue()
        let loaded = box.store.load(logger: box.logger)
        box.result.withLock { $0 = loaded }
        return nil
    }, Unmanaged.passRetained(box).toOpaque())
    guard started == 0 else { throw TestFailure("pthread_create: \(started)") }
    pthread_detach(thread)
    for _ in 0..<Int(seconds * 500) {
        if let loaded = box.result.withLock({ $0 }) { return loaded }
        usleep(2000)
    }
    return nil
}

/// The file type bits of `path` itself (not what a link points to), or nil if there is nothing.
private func fileType(_ path: String) -> mode_t? {
    var info = stat()
    return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
}

/// `state` saved by a StateStore in `directory` and loaded back (which must succeed).
private func savedAndLoaded(_ state: DaemonState, in directory: String) throws -> DaemonState {
    let store = StateStore(directory: directory)
    try store.save(state)
    let (logger, _) = recordingLogger()
    let (loaded, outcome) = store.load(logger: logger)
    #expect(outcome == .loaded)
    return loaded
}

@Suite struct CorruptStateTests {
    @Test func theCorpusIsLarge() {
        // The issue asks for about 30 at least; what each is, is in the list above.
        #expect(corpus.count >= 30)
        print("corrupt-state corpus: \(corpus.count) files")
    }

    /// Each is moved aside (itself: a link, not its target), a warning names the fault,
    /// defaults are used, nothing blocks, and the next save starts afresh.
    @Test(arguments: corpus)
    func aCorruptStateIsMovedAsideWithItsFaultNamed(_ corruption: Corruption) async throws {
        try await withTemporaryDirectory { dir in
            let store = StateStore(directory: dir + "/state")
            #expect(mkdir(store.directory, 0o700) == 0)
            try corruption.make(store.path, dir)
            let type = fileType(store.path)
            let (logger, logs) = recordingLogger()
            // A load that blocks (a FIFO opened without O_NONBLOCK) fails here rather than hang the suite.
            guard let (state, outcome) = try loadOnOwnThread(store, logger: logger, seconds: 20) else {
                Issue.record("the load did not return within 20 s")
                return
            }
            #expect(state == DaemonState())
            guard case .movedAside(let movedTo?, let reason) = outcome else {
                Issue.record("not moved aside: \(outcome)")
                return
            }
            #expect(reason.contains(corruption.reason), "reason: \(reason)")
            #expect(reason.utf8.count < 400, "a reason that quotes the file: \(reason.prefix(400))")
            #expect(movedTo.hasPrefix(store.path + ".corrupt-"))
            #expect(fileType(store.path) == nil)
            #expect(fileType(movedTo) == type, "the file itself moved aside, whatever it is")
            let warnings = logs.all.filter { $0.level == .warning }
            #expect(warnings.count == 1)
            #expect(warnings.first?.metadata["reason"] == reason)
            if corruption.name == "a link to a valid state file" {
                // What the link pointed to is left alone.
                #expect(try readText(dir + "/elsewhere.json") == validDocument)
            }
            try store.save(DaemonState(silentMode: true))
            let (saved, savedOutcome) = store.load(logger: logger)
            #expect(savedOutcome == .loaded)
            #expect(saved == DaemonState(silentMode: true))
        }
    }

    /// A state just within every limit loads: the limits refuse nothing a real state holds.
    @Test func aStateAtEveryLimitLoads() async throws {
        try await withTemporaryDirectory { dir in
            var state = DaemonState(silentMode: true)
            for n in 1...DaemonState.maxSequences { state.sequences.record(UInt64(n), for: "usb-0000:00:14.0-\(n)-analog-output") }
            for n in 0..<DaemonState.maxPriorities { state.priorities["bt-00:11:22:33:\(n)-a2dp"] = n % 2 == 0 ? 1000 : -1000 }
            for n in 0..<DaemonState.maxPreferredInputs { state.preferredInputs["org.example.App\(n)"] = "usb-mic-\(n)" }
            state.preferredInputs["org.example.App0"] = String(repeating: "u", count: DaemonState.maxStringBytes)
            let loaded = try savedAndLoaded(state, in: dir)
            #expect(loaded == state)
        }
    }

    /// The cap holds while reading, not only by fstat's size: /proc files say 0 bytes.
    @Test func theReadStopsAtTheCapWhateverTheSizeSays() throws {
        #expect(throws: FileReadError.tooLarge(path: "/proc/self/maps", size: 17, limit: 16)) {
            try AtomicFile.readRegularFile("/proc/self/maps", limit: 16)
        }
        #expect(try AtomicFile.readRegularFile("/proc/self/maps", limit: 1 << 20).count > 16)
    }

    @Test func aFileWithoutSilentModeIsAnOlderFileAndReadsAsOff() throws {
        let state = try DaemonState(json: try JSON.parse(document()))
        #expect(state.silentMode == false)
        #expect(state.priorities == ["a": 5])
        #expect(try DaemonState(json: try JSON.parse(document(extra: #", "silentMode": true"#))).silentMode)
        #expect(try DaemonState(json: try JSON.parse(validDocument)).silentMode)
    }
}

/// The writer keeps what it saves within what the loader accepts.
@Suite struct BoundedStateTests {
    @Test func theOldestSequencesAreForgottenBeyondTheCount() async throws {
        var state = DaemonState()
        for n in 0..<5000 { _ = state.sequences.arrival(of: "port-\(n)") }
        let bounded = state.bounded()
        #expect(bounded.sequences.last.count == DaemonState.maxSequences)
        #expect(bounded.sequences.last["port-4999"] == 5000)
        #expect(bounded.sequences.last["port-903"] == nil)
        #expect(bounded.sequences.last["port-904"] == 905)
        #expect(bounded.sequences.counter == 5000)
        // Within the limits, a state is written as it is.
        var small = DaemonState()
        for n in 0..<10 { _ = small.sequences.arrival(of: "port-\(n)") }
        #expect(small.bounded() == small)
        try await withTemporaryDirectory { dir in
            let loaded = try savedAndLoaded(state, in: dir)
            #expect(loaded == bounded)
        }
    }

    @Test func theOldestSequencesAreForgottenWhileTheFileWouldBeTooLarge() async throws {
        var state = DaemonState()
        state.priorities = ["usb-dac": 300]
        // 600 uids of 4000 bytes: 2.4 MB, within the count.
        for n in 0..<600 { _ = state.sequences.arrival(of: "\(n)-" + String(repeating: "x", count: 4000)) }
        // Too long to be read back: left out.
        _ = state.sequences.arrival(of: String(repeating: "y", count: DaemonState.maxStringBytes + 1))
        let bounded = state.bounded()
        let size = bounded.fileBytes.count
        #expect(size <= DaemonState.maxFileBytes)
        #expect(size > DaemonState.maxFileBytes - 3 * 4020, "no more forgotten than needed: \(size)")
        #expect(bounded.priorities == state.priorities)
        let kept = bounded.sequences.last
        #expect(kept.count > 200 && kept.count < 600)
        // The newest are kept, the oldest forgotten.
        #expect(kept.values.min() == UInt64(600 - kept.count + 1))
        #expect(kept.values.max() == 600)
        try await withTemporaryDirectory { dir in
            let loaded = try savedAndLoaded(state, in: dir)
            #expect(loaded == bounded)
        }
    }

    @Test func settingsBeyondTheLimitsAreNamed() {
        #expect(DaemonState().settingsProblem == nil)
        var state = DaemonState()
        for n in 0...DaemonState.maxPriorities { state.priorities["p\(n)"] = 1 }
        #expect(state.settingsProblem == "1025 port priorities; at most 1024 are kept")
        state = DaemonState(priorities: ["p": 1001])
        #expect(state.settingsProblem == "priority 1001 is outside -1000...1000")
        state = DaemonState(preferredInputs: ["app": String(repeating: "m", count: 4097)])
        #expect(state.settingsProblem == "a string of 4097 bytes; at most 4096 are kept")
        // Within every count and string limit, but more than half the file.
        state = DaemonState()
        for n in 0..<70 { state.preferredInputs["\(n)" + String(repeating: "a", count: 4000)] = String(repeating: "m", count: 4000) }
        #expect(state.settingsProblem?.hasPrefix("the settings would take ") == true, "\(state.settingsProblem ?? "nil")")
        state.preferredInputs = Dictionary(uniqueKeysWithValues: state.preferredInputs.prefix(60).map { ($0.key, $0.value) })
        #expect(state.settingsProblem == nil)
    }

    @Test func aSettingBeyondTheLimitsIsRefusedAndChangesNothing() async throws {
        try await withTemporaryDirectory { dir in
            // Full: 1023 priorities of ports not present, and the DAC's.
            var initial = DaemonState()
            for n in 1..<DaemonState.maxPriorities { initial.priorities["gone-\(n)"] = 1 }
            initial.priorities["usb-dac"] = 7
            let dac = Port(uid: "usb-dac", type: .usbAudio, device: "usb-dac", direction: .output, alsa: "plughw:CARD=DAC,DEV=0")
            let mic = Port(uid: "usb-mic", type: .usbAudio, device: "usb-mic", direction: .input, alsa: "plughw:CARD=Mic,DEV=0")
            let udev = TestWatcher(name: "udev", present: [.added([dac, mic])])
            let harness = Harness(dir: dir, watchers: [udev], initial: initial, coalescing: .seconds(3600))
            try await harness.running {
                await #expect(throws: RequestError.limitExceeded("1025 port priorities; at most 1024 are kept")) {
                    try await harness.routeService.setPriority(5, for: "usb-mic")
                }
                #expect(await harness.routeService.ports.first { $0.uid == "usb-mic" }?.priority == mic.priority)
                #expect(await harness.routeService.currentState.priorities == initial.priorities)
                // One already set can still change: the count stays.
                try await harness.routeService.setPriority(5, for: "usb-dac")
                #expect(harness.savedState()?.priorities["usb-dac"] == 5)
                #expect(harness.savedState()?.priorities.count == DaemonState.maxPriorities)
            }
            #expect(DBusErrorReply(RequestError.limitExceeded("x")).name == "org.freedesktop.DBus.Error.LimitsExceeded")
        }
    }
}

@Suite struct SilentModePersistenceTests {
    /// Saved before the call returns (a kill -9 right after loses nothing), and on at the
    /// next start: the restored route service announces the change when it is switched off.
    @Test func silentModeSurvivesARestart() async throws {
        try await withTemporaryDirectory { dir in
            let first = Harness(dir: dir, watchers: [], coalescing: .seconds(3600))
            try await first.running {
                try await first.routeService.setSilentMode(true)
                #expect(first.savedState()?.silentMode == true)
                // Repeated: still saved, nothing announced twice.
                try await first.routeService.setSilentMode(true)
            }
            let (logger, _) = recordingLogger()
            let (loaded, outcome) = first.store.load(logger: logger)
            #expect(outcome == .loaded)
            #expect(loaded.silentMode)

            let second = Harness(dir: dir, watchers: [], initial: loaded, coalescing: .seconds(3600))
            let events = EventLog(second.routeService.events.subscribe())
            try await second.running {
                #expect(await second.routeService.silentMode)
                try await second.routeService.setSilentMode(false)
                #expect(try await events.next() == .silentModeChanged(false))
                #expect(second.savedState()?.silentMode == false)
            }
        }
    }

    /// Through the daemon's D-Bus API: set, the daemon killed with SIGKILL (the reply
    /// means saved), started again on the same state directory: still on.
    @Test func silentModeSurvivesADaemonRestartOverDBus() throws {
        let state = try makeTemporaryDirectory()
        defer { removeTree(state) }
        do {
            let daemon = try RunningDaemon(arguments: ["--state-dir", state])
            let client = try APIClient(address: daemon.bus.address)
            #expect(client.manager("SetSilentMode", "b", "[true]") == "{\"reply\": null}")
        }
        let daemon = try RunningDaemon(arguments: ["--state-dir", state])
        let client = try APIClient(address: daemon.bus.address)
        #expect(client.property(DBusAPI.managerPath, DBusAPI.managerInterface, "SilentMode") == "{\"reply\": true}")
    }
}

/// The built daemon with a state that used to hang or exhaust it.
@Suite struct AudioroutedHardeningTests {
    /// VmRSS of `pid`, from /proc, e.g. "8420 kB".
    static func residentMemory(_ pid: pid_t) -> String {
        let status = (try? readText("/proc/\(pid)/status")) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? "VmRSS: ?"
        return String(line.dropFirst("VmRSS:".count).trimmingPrefix(while: { $0 == " " || $0 == "\t" }))
    }

    @Test(arguments: ["FIFO", "link to /dev/zero"])
    func aStateThatIsNoFileStillStartsPromptlyAndStops(_ kind: String) async throws {
        try await withTemporaryDirectory { dir in
            #expect(mkdir(dir + "/state", 0o700) == 0)
            let path = dir + "/state/state.json"
            if kind == "FIFO" { #expect(mkfifo(path, 0o600) == 0) } else { #expect(symlink("/dev/zero", path) == 0) }
            let started = ContinuousClock.now
            let (socket, bus, child) = try AudioroutedEndToEndTests.startOnPrivateBus(in: dir)
            defer { bus.close() }
            let ready = socket.receive(seconds: 20)
            let elapsed = ContinuousClock.now - started
            #expect(ready == "READY=1", "stderr: \(child.availableStderr())")
            // Measured, not asserted (docs/benchmarks.md).
            print("state a \(kind): READY after \(elapsed), VmRSS \(Self.residentMemory(child.pid))")
            child.signal(SIGTERM)
            let status = child.wait(seconds: 10)
            let stderr = child.availableStderr()
            #expect(status == 0, "stderr: \(stderr)")
            #expect(stderr.contains("state file unusable, moved aside"), "stderr: \(stderr)")
            #expect(stderr.contains(kind == "FIFO" ? "is a FIFO, not a regular file" : "is a symbolic link, not a regular file"), "stderr: \(stderr)")
            let entries = directoryEntries(dir + "/state")
            #expect(entries.count == 1 && entries.first?.hasPrefix("state.json.corrupt-") == true, "\(entries)")
        }
    }
}
