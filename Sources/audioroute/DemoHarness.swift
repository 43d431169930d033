#if canImport(Glibc)
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import CLinux
import Glibc
#endif

/// Everything the demo started (processes, temporary directories), so that one cleanup
/// stops and removes all of it: at the normal end, on failure, and from the signal thread
/// on SIGINT, SIGTERM or SIGHUP.
final class DemoRegistry: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    /// Held for the whole of a cleanup: a second caller (the main flow failing because the
    /// signal thread is stopping its children) waits until everything is gone.
    private var cleanupMutex = pthread_mutex_t()
    private var pids: [pid_t] = []
    private var dirs: [String] = []
    private var cleaned = false
    private var keep = false
    private var signalNumber: Int32 = 0

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_mutex_init(&cleanupMutex, nil)
    }

    func add(pid: pid_t) { locked { pids.append(pid) } }
    func add(dir: String) { locked { dirs.append(dir) } }
    func forget(pid: pid_t) { locked { pids.removeAll { $0 == pid } } }
    /// A signal arrived: whoever finishes cleaning up exits with 128+signal.
    func noteSignal(_ number: Int32) { locked { signalNumber = number } }
    var signalled: Int32 { locked { signalNumber } }

    /// --keep: cleanup stops the processes but leaves the directories.
    func keepDirectories() { locked { keep = true } }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body()
    }

    /// Stops the processes, newest first (SIGTERM, then SIGKILL after 3 s), and removes the
    /// directories. Runs once.
    func cleanup() {
        pthread_mutex_lock(&cleanupMutex)
        defer { pthread_mutex_unlock(&cleanupMutex) }
        let (pids, dirs) = locked { () -> ([pid_t], [String]) in
            if cleaned { return ([], []) }
            cleaned = true
            return (self.pids, keep ? [] : self.dirs)
        }
        for pid in pids.reversed() {
            kill(pid, SIGTERM)
            if !DemoRegistry.reap(pid, milliseconds: 3000) {
                kill(pid, SIGKILL)
                _ = DemoRegistry.reap(pid, milliseconds: 1000)
            }
        }
        for dir in dirs.reversed() { _ = try? DemoChild.run(["/bin/rm", "-rf", "--", dir]) }
        // The main flow may fail because a signal is stopping its children: the exit
        // status is still the signal's.
        let number = signalled
        if number != 0 { _exit(128 + number) }
    }

    /// Waits for `pid` to exit, polling; true once it has been reaped (or is not ours).
    static func reap(_ pid: pid_t, milliseconds: Int) -> Bool {
        var status: Int32 = 0
        for _ in 0..<(milliseconds / 10) {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid || (result < 0 && errno == ECHILD) { return true }
            usleep(10_000)
        }
        return false
    }
}

/// The one registry of the demo process (the signal thread cannot capture state).
let demoRegistry = DemoRegistry()

/// The write end of the signal pipe (set once, before the handlers are installed).
nonisolated(unsafe) private var demoSignalPipe: Int32 = -1

enum DemoSignals {
    /// SIGINT, SIGTERM and SIGHUP write their number to a pipe; a thread reading it cleans
    /// up and exits 128+signal. (Handlers, not a blocked mask: threads the runtime already
    /// started would not have the mask.) SIGPIPE is ignored: a dead child's stdin is an error.
    static func install() {
        var fds: [Int32] = [0, 0]
        guard demoPipe(&fds) else { return }
        demoSignalPipe = fds[1]
        signal(SIGPIPE, SIG_IGN)
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number) { received in
                var byte = UInt8(truncatingIfNeeded: received)
                _ = write(demoSignalPipe, &byte, 1)
            }
        }
        let fd = fds[0]
        let started = startThread {
            var byte: UInt8 = 0
            while read(fd, &byte, 1) < 0 && errno == EINTR {}
            let received = Int32(byte)
            let note = "audioroute demo: signal \(received), stopping everything it started\n"
            _ = note.withCString { write(2, $0, strlen($0)) }
            demoRegistry.noteSignal(received)
            demoRegistry.cleanup()
            _exit(128 + received)
        }
        if let started { Terminal.warning("demo: no signal thread (errno \(started)): Ctrl-C will not clean up") }
    }
}

/// A pipe whose two ends close on exec (Glibc does not export pipe2).
func demoPipe(_ fds: inout [Int32]) -> Bool {
    guard pipe(&fds) == 0 else { return false }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    return true
}

/// A failure of the demo's harness, named.
struct DemoError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A child process of the demo: stdin and stdout are pipes (read line by line with a
/// timeout), stderr goes to a log file. Registered for cleanup as soon as it exists.
final class DemoChild {
    let pid: pid_t
    let name: String
    private let input: Int32
    private let output: Int32
    private var buffer: [UInt8] = []

    init(_ name: String, _ argv: [String], environment: [String: String] = [:], log: String) throws {
        self.name = name
        var inPipe: [Int32] = [0, 0], outPipe: [Int32] = [0, 0]
        guard demoPipe(&inPipe), demoPipe(&outPipe) else {
            throw DemoError("\(name): pipe: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        // Nothing else: a device's `file "|demo-sink"` pipe (libasound's popen, no O_CLOEXEC)
        // kept open in a child would never let that sink see its end.
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        let pid = try DemoChild.spawn(argv, environment: environment, actions: &actions)
        close(inPipe[0])
        close(outPipe[1])
        self.pid = pid
        input = inPipe[1]
        output = outPipe[0]
        demoRegistry.add(pid: pid)
    }

    deinit {
        close(input)
        close(output)
    }

    /// posix_spawnp with the signals the demo blocks unblocked and reset in the child.
    static func spawn(
        _ argv: [String], environment: [String: String], actions: UnsafePointer<posix_spawn_file_actions_t>?
    ) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var merged: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                merged[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        for (key, value) in environment { merged[key] = value }
        let cArgv = argv.map { strdup($0) } + [nil]
        let cEnv = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in cArgv { free(pointer) }
            for pointer in cEnv { free(pointer) }
        }
        var pid = pid_t()
        let result = posix_spawnp(&pid, argv[0], actions, &attributes, cArgv, cEnv)
        guard result == 0 else { throw DemoError("cannot start \(argv[0]): \(String(cString: strerror(result)))") }
        return pid
    }

    /// Runs a command to its end with stdout to /dev/null; its exit status.
    @discardableResult
    static func run(_ argv: [String], environment: [String: String] = [:]) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        let pid = try spawn(argv, environment: environment, actions: &actions)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Writes one line to the child's stdin.
    func send(_ line: String) {
        var bytes = Array((line + "\n").utf8)
        bytes.withUnsafeMutableBytes { FileIO.writeAll(fd: input, UnsafeRawBufferPointer($0)) }
    }

    /// The next line of the child's stdout; throws on end of output or after `seconds`.
    func readLine(seconds: Double = 20) throws -> String {
        var remaining = Int32(seconds * 1000)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            guard remaining > 0 else { throw DemoError("\(name): no answer within \(seconds) s") }
            var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let before = MonotonicClock.milliseconds()
            let ready = poll(&poller, 1, remaining)
            remaining -= Int32(MonotonicClock.milliseconds() - before)
            if ready < 0 && errno != EINTR { throw DemoError("\(name): poll: \(String(cString: strerror(errno)))") }
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count == 0 { throw DemoError("\(name) exited (see its log)") }
            if count > 0 { buffer.append(contentsOf: chunk[0..<count]) }
        }
    }

    /// Sends a command and returns the answer line.
    func ask(_ line: String) throws -> String {
        send(line)
        return try readLine()
    }
}
