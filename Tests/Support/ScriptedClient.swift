import Glibc

/// A process speaking JSON lines over stdin/stdout (Tests/Fixtures/dbus/client.py):
/// started with pipes, read with a deadline, killed and reaped in `close()`
/// (also from deinit). It also exits by itself when its stdin closes.
public final class ScriptedClient: @unchecked Sendable {
    public let pid: pid_t
    private let input: Int32
    private let output: Int32
    private var buffer: [UInt8] = []
    private var closed = false

    public init(_ arguments: [String], environment: [String: String] = [:]) throws {
        var toChild: [Int32] = [0, 0]
        var fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else { throw SupportError("pipe: errno \(errno)") }
        // Other tests spawn in parallel: keep these ends out of their children.
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        var env: [String] = []
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            let key = text.split(separator: "=", maxSplits: 1).first.map(String.init) ?? text
            if environment[key] == nil { env.append(text) }
            index += 1
        }
        env += environment.map { "\($0.key)=\($0.value)" }
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, arguments[0], &actions, nil, argv, envp)
        Glibc.close(toChild[0])
        Glibc.close(fromChild[1])
        guard spawned == 0 else {
            Glibc.close(toChild[1])
            Glibc.close(fromChild[0])
            throw SupportError("cannot start \(arguments[0]): errno \(spawned)")
        }
        pid = child
        input = toChild[1]
        output = fromChild[0]
    }

    /// Writes one line.
    public func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
    }

    /// The next line, or nil when none came within `seconds` (or the process ended).
    public func readLine(seconds: Double = 10) -> String? {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let deadline = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 + seconds
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            clock_gettime(CLOCK_MONOTONIC, &now)
            let left = deadline - (Double(now.tv_sec) + Double(now.tv_nsec) / 1e9)
            guard left > 0 else { return nil }
            var fds = [pollfd(fd: output, events: Int16(POLLIN), revents: 0)]
            let r = poll(&fds, 1, Int32(left * 1000) + 1)
            if r < 0 && errno == EINTR { continue }
            guard r > 0 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            buffer += chunk[..<n]
        }
    }

    /// Kills the process (SIGKILL by default) and reaps it.
    public func kill(_ signal: Int32 = SIGKILL) {
        guard !closed else { return }
        closed = true
        Glibc.kill(pid, signal)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        Glibc.close(input)
        Glibc.close(output)
    }

    public func close() { kill() }

    deinit { kill() }
}
