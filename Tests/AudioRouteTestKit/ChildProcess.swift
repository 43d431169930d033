// The one way tests start a child process without Foundation: posix_spawn with pipes,
// nothing inherited past 0-2, killed and reaped if the test forgets. Subprocess.run,
// run(_:_:environment:) and ScriptedProcess are small layers over it; the daemon's launch
// (AudioRouteTestbed) starts its child itself and is adopted.
import CLinux
import Glibc

/// A started child process, killed (SIGKILL) and reaped if the test forgets.
public final class ChildProcess {
    /// Where the child's standard input comes from.
    public enum Input {
        /// This process's own standard input.
        case inherit
        /// A pipe: write with `send`, end with `closeInput`.
        case pipe
        /// A descriptor the caller owns.
        case descriptor(Int32)
    }

    public let pid: pid_t
    /// The read end of the child's standard output, or -1.
    public let stdout: Int32
    /// The read end of the child's standard error (non-blocking), or -1.
    public let stderr: Int32
    /// The write end of the child's standard input (`.pipe`), or -1.
    public private(set) var stdin: Int32 = -1
    public private(set) var exitStatus: Int32?

    /// Starts `path`; `environment` entries are added to (or replace) this process's and
    /// `removing` are taken out. With `errorsToPipe` false the child writes its errors to
    /// this process's standard error (for children whose errors nobody reads: a full pipe
    /// would block them).
    public init(
        _ path: String, _ arguments: [String], environment: [String: String] = [:], removing: Set<String> = [],
        input: Input = .inherit, errorsToPipe: Bool = true
    ) throws {
        var outPipe: [Int32] = [0, 0]
        var errPipe: [Int32] = [0, 0]
        var inPipe: [Int32] = [-1, -1]
        // O_CLOEXEC: other tests spawn in parallel; these ends must stay out of their children.
        guard cloexecPipe(&outPipe) else { throw TestFailure("pipe: errno \(errno)") }
        if errorsToPipe, !cloexecPipe(&errPipe) { throw TestFailure("pipe: errno \(errno)") }
        if !errorsToPipe { errPipe = [-1, -1] }
        if case .pipe = input, !cloexecPipe(&inPipe) { throw TestFailure("pipe: errno \(errno)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        switch input {
        case .inherit: break
        case .pipe: posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        case .descriptor(let fd): posix_spawn_file_actions_adddup2(&actions, fd, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        if errorsToPipe { posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2) }
        let result = spawn(path, arguments, environment: environment, removing: removing, actions: &actions)
        for fd in [outPipe[1], errPipe[1], inPipe[0]] where fd >= 0 { close(fd) }
        guard case .success(let pid) = result else {
            for fd in [outPipe[0], errPipe[0], inPipe[1]] where fd >= 0 { close(fd) }
            throw TestFailure("cannot start \(path): \(result)")
        }
        self.pid = pid
        stdout = outPipe[0]
        stderr = errPipe[0]
        stdin = inPipe[1]
        if stderr >= 0 { _ = fcntl(stderr, F_SETFL, fcntl(stderr, F_GETFL) | O_NONBLOCK) }
    }

    /// A child another layer starts (AudioRouteTestbed's daemon launch): `start` gets the write
    /// ends of the standard output and error pipes to give the child, and returns its pid.
    /// Standard input is inherited.
    public init(startingWith start: (_ standardOutput: Int32, _ standardError: Int32) throws -> pid_t) throws {
        var outPipe: [Int32] = [0, 0]
        var errPipe: [Int32] = [0, 0]
        guard cloexecPipe(&outPipe) else { throw TestFailure("pipe: errno \(errno)") }
        guard cloexecPipe(&errPipe) else {
            for fd in outPipe { close(fd) }
            throw TestFailure("pipe: errno \(errno)")
        }
        let started: pid_t
        do {
            started = try start(outPipe[1], errPipe[1])
        } catch {
            for fd in outPipe + errPipe { close(fd) }
            throw error
        }
        close(outPipe[1])
        close(errPipe[1])
        pid = started
        stdout = outPipe[0]
        stderr = errPipe[0]
        _ = fcntl(stderr, F_SETFL, fcntl(stderr, F_GETFL) | O_NONBLOCK)
    }

    public func signal(_ number: Int32) { if exitStatus == nil { Glibc.kill(pid, number) } }

    /// Writes `bytes` to the child's standard input (`.pipe`), all of them unless it closed.
    public func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count && stdin >= 0 {
            let n = bytes[offset...].withUnsafeBytes { write(stdin, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Ends the child's standard input.
    public func closeInput() {
        if stdin >= 0 { close(stdin) }
        stdin = -1
    }

    /// Waits up to `seconds` for the child to exit; its exit code, or 128+signal. Nil on timeout.
    public func wait(seconds: Double) -> Int32? {
        if let exitStatus { return exitStatus }
        var clock = ContinuousClock.now
        let deadline = clock.advanced(by: .milliseconds(Int(seconds * 1000)))
        while true {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { return reaped(status) }
            clock = ContinuousClock.now
            if clock >= deadline { return nil }
            usleep(2000)
        }
    }

    /// Waits for the child to exit, however long it takes.
    public func waitForExit() -> Int32 {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return reaped(status)
    }

    /// SIGKILLs the child, if it still runs, and reaps it.
    public func kill() {
        guard exitStatus == nil else { return }
        Glibc.kill(pid, SIGKILL)
        _ = waitForExit()
    }

    private func reaped(_ status: Int32) -> Int32 {
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        exitStatus = code
        return code
    }

    /// Reads what is available on standard error now.
    public func availableStderr() -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(stderr, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Feeds `input` (then ends it, for `.pipe`), reads standard output and error to their
    /// ends, and waits for the exit: everything the child said.
    public func collect(input: [UInt8] = []) -> ProcessResult {
        var pending = input[...]
        if pending.isEmpty { closeInput() }
        var out: [UInt8] = []
        var err: [UInt8] = []
        var open = (stdout: true, stderr: stderr >= 0)
        var chunk = [UInt8](repeating: 0, count: 65536)
        while open.stdout || open.stderr || stdin >= 0 {
            // Small inputs fit in the pipe buffer; larger ones are written as poll allows.
            var fds = [
                pollfd(fd: open.stdout ? stdout : -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: open.stderr ? stderr : -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stdin, events: Int16(POLLOUT), revents: 0),
            ]
            if poll(&fds, 3, -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for (slot, fd) in [(0, stdout), (1, stderr)] where fds[slot].revents != 0 {
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    if slot == 0 { out += chunk[0..<count] } else { err += chunk[0..<count] }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    if slot == 0 { open.stdout = false } else { open.stderr = false }
                }
            }
            if fds[2].revents != 0 {
                let written = pending.withUnsafeBytes { write(stdin, $0.baseAddress, min($0.count, 65536)) }
                if written > 0 { pending = pending.dropFirst(written) }
                if written < 0 && errno != EINTR || pending.isEmpty { closeInput() }
            }
        }
        let status = waitForExit()
        return ProcessResult(status: status, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }

    deinit {
        kill()
        closeInput()
        close(stdout)
        if stderr >= 0 { close(stderr) }
    }
}

/// pipe(2) with both ends close-on-exec (pipe2 needs _GNU_SOURCE, which Swift's Glibc lacks).
private func cloexecPipe(_ fds: inout [Int32]) -> Bool {
    guard pipe(&fds) == 0 else { return false }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    return true
}

/// What a finished child said, and its exit code (128+signal if a signal ended it).
public struct ProcessResult {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var stdoutLines: [Substring] { stdout.split(separator: "\n", omittingEmptySubsequences: true) }
}

/// Runs a program with `environment` added to this process's, returning its exit status and standard error.
public func run(_ path: String, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, stderr: String) {
    let result = try ChildProcess(path, arguments, environment: environment).collect()
    return (result.status, result.stderr)
}

/// `posix_spawn`s `path` with `arguments`, this process's environment with
/// `environment` added (or replacing) and `removing` taken out, and `actions`.
/// Returns the child's pid, or the errno posix_spawn gave.
public func spawn(
    _ path: String, _ arguments: [String], environment: [String: String], removing: Set<String> = [],
    actions: inout posix_spawn_file_actions_t
) -> Result<pid_t, SpawnError> {
    var env: [String] = []
    var index = 0
    while let entry = environ[index] {
        let text = String(cString: entry)
        let key = text.split(separator: "=", maxSplits: 1).first.map(String.init) ?? text
        if environment[key] == nil && !removing.contains(key) { env.append(text) }
        index += 1
    }
    env += environment.map { "\($0.key)=\($0.value)" }
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup($0) } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    // Nothing but 0-2: a descriptor another thread just opened without O_CLOEXEC (libasound's
    // popen for a `file "|cmd"` PCM) must not live on in a child and keep its pipe from closing.
    posix_spawn_file_actions_addclosefrom_np(&actions, 3)
    // A child starts as from a shell: no signal blocked, none ignored. The test runner's threads
    // block most signals, and a child would inherit that mask: SIGTERM never reached an aplay.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    posix_spawnattr_setsigmask(&attributes, &none)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
    return spawned == 0 ? .success(pid) : .failure(SpawnError(errno: spawned))
}

/// posix_spawn's error number.
public struct SpawnError: Error, CustomStringConvertible {
    public var errno: Int32
    public var description: String { "errno \(errno)" }
}

