// Temporary directories, child processes, a stand-in for systemd's notify
// socket: the harness pieces every test target shares, without Foundation.
import Synchronization

#if canImport(Glibc)
import CLinux
import Glibc
#endif

public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Runs `body` with a fresh directory under /tmp, removed afterwards whatever happens.
public func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = try makeTemporaryDirectory()
    defer { removeTree(path) }
    return try await body(path)
}

public func makeTemporaryDirectory() throws -> String {
    var template = Array("/tmp/audioroute-test-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp: errno \(errno)") }
    return String(cString: made)
}

/// `rm -rf path`.
public func removeTree(_ path: String) {
    var info = stat()
    guard lstat(path, &info) == 0 else { return }
    guard info.st_mode & S_IFMT == S_IFDIR, let dir = opendir(path) else {
        unlink(path)
        return
    }
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        if name == "." || name == ".." { continue }
        removeTree(path + "/" + name)
    }
    closedir(dir)
    rmdir(path)
}

/// The directory of the running test binary: `swift build` puts the products there.
public let productsDirectory: String = {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    precondition(count > 0, "cannot read /proc/self/exe")
    let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return String(path[..<path.lastIndex(of: "/")!])
}()

/// A started child process, killed (SIGKILL) and reaped if the test forgets.
public final class ChildProcess {
    public let pid: pid_t
    /// The read end of the child's standard output, or -1.
    public let stdout: Int32
    /// The read end of the child's standard error (non-blocking), or -1.
    public let stderr: Int32
    public private(set) var exitStatus: Int32?

    /// Starts `path`; `environment` entries are added to (or replace) this process's.
    /// `stdin`: a descriptor to give the child as its standard input.
    public init(_ path: String, _ arguments: [String], environment: [String: String] = [:], removing: Set<String> = [], stdin: Int32? = nil) throws {
        var outPipe: [Int32] = [0, 0]
        var errPipe: [Int32] = [0, 0]
        guard pipe(&outPipe) == 0, pipe(&errPipe) == 0 else { throw TestFailure("pipe: errno \(errno)") }
        // Other tests spawn in parallel: keep these ends out of their children.
        for fd in outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin { posix_spawn_file_actions_adddup2(&actions, stdin, 0) }
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        let result = spawn(path, arguments, environment: environment, removing: removing, actions: &actions)
        close(outPipe[1])
        close(errPipe[1])
        guard case .success(let pid) = result else {
            close(outPipe[0])
            close(errPipe[0])
            throw TestFailure("cannot start \(path): \(result)")
        }
        self.pid = pid
        stdout = outPipe[0]
        stderr = errPipe[0]
        _ = fcntl(stderr, F_SETFL, fcntl(stderr, F_GETFL) | O_NONBLOCK)
    }

    public func signal(_ number: Int32) { if exitStatus == nil { kill(pid, number) } }

    /// Waits up to `seconds` for the child to exit; its exit code, or 128+signal. Nil on timeout.
    public func wait(seconds: Double) -> Int32? {
        if let exitStatus { return exitStatus }
        var clock = ContinuousClock.now
        let deadline = clock.advanced(by: .milliseconds(Int(seconds * 1000)))
        while true {
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
                exitStatus = code
                return code
            }
            clock = ContinuousClock.now
            if clock >= deadline { return nil }
            usleep(2000)
        }
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

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        close(stdout)
        close(stderr)
    }
}

/// A datagram socket standing in for systemd's notification socket.
public final class NotifySocket {
    public let fd: Int32
    /// The NOTIFY_SOCKET value: a path, or "@name" for an abstract socket.
    public let name: String

    public init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        name = path
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in for (index, byte) in bytes.enumerated() { buffer[index] = byte } }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0 else {
            close(fd)
            throw TestFailure("bind \(path): errno \(errno)")
        }
    }

    /// The next datagram within `seconds`, or nil.
    public func receive(seconds: Double) -> String? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(seconds * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    deinit {
        close(fd)
        if !name.hasPrefix("@") { unlink(name) }
    }
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
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
    return spawned == 0 ? .success(pid) : .failure(SpawnError(errno: spawned))
}

/// posix_spawn's error number.
public struct SpawnError: Error, CustomStringConvertible {
    public var errno: Int32
    public var description: String { "errno \(errno)" }
}

/// A process's resident memory, in KiB: VmRSS and VmHWM from /proc/PID/status, and the RSS
/// counted page by page with its anonymous part from /proc/PID/smaps_rollup (VmRSS comes from
/// counters that proc(5) calls inaccurate, by tens of pages per thread; the rest of the
/// anonymous part is mapped files: code).
public struct ProcessMemory: Sendable, CustomStringConvertible {
    public var rssKiB: Int
    public var peakKiB: Int
    public var exactKiB: Int
    public var anonymousKiB: Int

    /// VmRSS and VmHWM in MiB.
    public var rss: Double { Double(rssKiB) / 1024 }
    public var peak: Double { Double(peakKiB) / 1024 }

    /// Nil when the process is gone or its files cannot be read.
    public init?(pid: Int32) {
        func fields(_ path: String) -> [String: Int]? {
            guard let file = fopen(path, "r") else { return nil }
            defer { fclose(file) }
            var found: [String: Int] = [:]
            var line = [CChar](repeating: 0, count: 256)
            while fgets(&line, Int32(line.count), file) != nil {
                // "VmRSS:\t    8500 kB"
                let text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                guard let colon = text.firstIndex(of: ":") else { continue }
                if let value = Int(String(text[colon...].filter(\.isNumber))) { found[String(text[..<colon])] = value }
            }
            return found
        }
        guard let status = fields("/proc/\(pid)/status"), let rollup = fields("/proc/\(pid)/smaps_rollup"),
            let rss = status["VmRSS"], let peak = status["VmHWM"], let exact = rollup["Rss"], let anonymous = rollup["Anonymous"]
        else { return nil }
        (rssKiB, peakKiB, exactKiB, anonymousKiB) = (rss, peak, exact, anonymous)
    }

    public var description: String {
        func mib(_ value: Double) -> String {
            let hundredths = Int((value * 100).rounded())
            return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100) MiB"
        }
        return "VmRSS \(mib(rss)), VmHWM \(mib(peak))"
    }
}
