// Child processes without Foundation: posix_spawn, with what a child must not inherit from
// us (our blocked and ignored signals, descriptors another thread opened without O_CLOEXEC)
// said once, here.
import CLinux
import Glibc

/// A signal number, to send, ignore, or reset in a child.
public struct ProcessSignal: RawRepresentable, Sendable, Hashable {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let hangup = ProcessSignal(rawValue: SIGHUP)
    public static let interrupt = ProcessSignal(rawValue: SIGINT)
    public static let kill = ProcessSignal(rawValue: SIGKILL)
    public static let pipe = ProcessSignal(rawValue: SIGPIPE)
    public static let terminate = ProcessSignal(rawValue: SIGTERM)

    /// Ignores it in this process (SIG_IGN): a child gets it back as default only if it is in
    /// `SpawnOptions.defaultSignals`.
    public func ignore() { _ = signal(rawValue, SIG_IGN) }
}

extension SignalForward {
    /// `SignalForward` for named signals.
    public convenience init(_ signals: [ProcessSignal], _ action: @escaping @Sendable (Int32) -> Void) {
        self.init(signals: signals.map(\.rawValue), action)
    }
}

/// What a child's standard stream is.
public enum SpawnStream: Sendable {
    /// The same as ours.
    case inherit
    /// A copy (dup2) of this open descriptor of ours, which stays ours.
    case duplicate(Int32)
    /// `path` opened in the child with these options (no O_CLOEXEC: it must survive the exec).
    case open(String, FileDescriptor.OpenOptions, mode: UInt32 = 0o644)
}

/// How to start a child.
public struct SpawnOptions: Sendable {
    public var standardInput = SpawnStream.inherit
    public var standardOutput = SpawnStream.inherit
    public var standardError = SpawnStream.inherit
    /// Variables set in the child over ours (the child gets ours as they are when this is empty).
    public var environment: [String: String] = [:]
    /// Signals whose action is reset to the default in the child: the ones we ignore or catch.
    /// The child also starts with no signal blocked, whatever the spawning thread blocks.
    public var defaultSignals: [ProcessSignal] = []
    /// Close every descriptor from 3 up in the child. A device's `file "|cmd"` pipe (libasound's
    /// popen, no O_CLOEXEC) kept open in a child would never let that command see its end.
    public var closeOtherDescriptors = true

    public init() {}
}

/// How a child ended.
public enum Termination: Sendable, Hashable {
    case exited(Int32)
    case signalled(Int32)

    init(waitStatus raw: Int32) {
        self = (raw & 0x7f) == 0 ? .exited((raw >> 8) & 0xff) : .signalled(raw & 0x7f)
    }

    /// As a shell reports it: the exit code, or 128+N for signal N.
    public var shellStatus: Int32 {
        switch self {
        case .exited(let code): code
        case .signalled(let number): 128 + number
        }
    }
}

/// A child process we started: its pid, for signalling and reaping it (once: `wait` or a
/// `tryWait` that returned its termination).
public struct SpawnedProcess: Sendable, Hashable {
    public let pid: Int32

    public init(pid: Int32) { self.pid = pid }

    /// Starts `arguments[0]` (searched in PATH) with `arguments`.
    public static func spawn(_ arguments: [String], _ options: SpawnOptions = SpawnOptions()) throws(Errno) -> SpawnedProcess {
        guard let program = arguments.first else { throw Errno(.invalidArgument, "posix_spawnp", path: "(no command)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (stream, number) in [(options.standardInput, Int32(0)), (options.standardOutput, 1), (options.standardError, 2)] {
            switch stream {
            case .inherit: break
            case .duplicate(let fd): posix_spawn_file_actions_adddup2(&actions, fd, number)
            case .open(let path, let flags, let mode): posix_spawn_file_actions_addopen(&actions, number, path, flags.rawValue, mode_t(mode))
            }
        }
        if options.closeOtherDescriptors { posix_spawn_file_actions_addclosefrom_np(&actions, 3) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in options.defaultSignals { sigaddset(&defaults, signal.rawValue) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let status: Int32
        if options.environment.isEmpty {
            status = posix_spawnp(&pid, program, &actions, &attributes, argv, environ)
        } else {
            var merged = Environment.variables
            for (key, value) in options.environment { merged[key] = value }
            let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { for pointer in envp { free(pointer) } }
            status = posix_spawnp(&pid, program, &actions, &attributes, argv, envp)
        }
        guard status == 0 else { throw Errno(Errno.Code(status), "posix_spawnp", path: program) }
        return SpawnedProcess(pid: pid)
    }

    /// Sends `signal`; false if the process is gone (or not ours to signal).
    @discardableResult
    public func send(_ signal: ProcessSignal) -> Bool { Glibc.kill(pid, signal.rawValue) == 0 }

    /// Waits for it to end (retried on EINTR), blocking the calling thread.
    public func wait() throws(Errno) -> Termination {
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 {
            if Errno.Code.current == .interrupted { continue }
            throw Errno.current("waitpid", path: String(pid))
        }
        return Termination(waitStatus: raw)
    }

    /// Its termination if it has ended (and reaps it), nil if it still runs. Throws
    /// `.noChildProcess` if it was already reaped or is not our child.
    public func tryWait() throws(Errno) -> Termination? {
        var raw: Int32 = 0
        while true {
            let result = waitpid(pid, &raw, WNOHANG)
            if result == pid { return Termination(waitStatus: raw) }
            if result == 0 { return nil }
            if Errno.Code.current == .interrupted { continue }
            throw Errno.current("waitpid", path: String(pid))
        }
    }

    /// `wait` on a thread of its own, so that no thread of Swift's cooperative pool blocks.
    public func termination() async throws(Errno) -> Termination {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Termination, Errno>, Never>) in
            let process = self
            let failed = startThread {
                do throws(Errno) {
                    continuation.resume(returning: .success(try process.wait()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            if let failed { continuation.resume(returning: .failure(Errno(Errno.Code(failed), "pthread_create"))) }
        }
        return try result.get()
    }
}
