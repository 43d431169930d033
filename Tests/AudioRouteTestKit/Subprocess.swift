// Runs a built binary with arguments and standard input, collecting its
// output, without Foundation: posix_spawn with pipes, drained with poll.
#if canImport(Glibc)
import CLinux
import Glibc
#endif

public struct ProcessResult {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var stdoutLines: [Substring] { stdout.split(separator: "\n", omittingEmptySubsequences: true) }
}

public enum Subprocess {
    /// The directory of the running test binary: `swift build` puts the products there.
    public static let productsDirectory: String = {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        precondition(count > 0, "cannot read /proc/self/exe")
        let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return String(path[..<path.lastIndex(of: "/")!])
    }()

    /// The package root, from this file's path.
    public static let packageRoot: String = {
        let file = #filePath
        // <root>/Tests/audiorouteTests/Subprocess.swift
        var parts = file.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()

    public static func product(_ name: String) -> String { productsDirectory + "/" + name }

    /// Runs `path` with `arguments`, feeding `input` on standard input.
    public static func run(_ path: String, _ arguments: [String], input: [UInt8] = []) throws -> ProcessResult {
        var inPipe: [Int32] = [0, 0]
        var outPipe: [Int32] = [0, 0]
        var errPipe: [Int32] = [0, 0]
        for index in 0..<3 {
            let ok = index == 0 ? pipe(&inPipe) : index == 1 ? pipe(&outPipe) : pipe(&errPipe)
            guard ok == 0 else { throw RunError(message: "pipe failed: errno \(errno)") }
        }
        // Other tests spawn in parallel: keep these ends out of their children.
        for fd in inPipe + outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        // No other inherited descriptor: another thread's pipe would stay open in the child.
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        close(inPipe[0])
        close(outPipe[1])
        close(errPipe[1])
        guard spawned == 0 else {
            close(inPipe[1])
            close(outPipe[0])
            close(errPipe[0])
            throw RunError(message: "cannot start \(path): errno \(spawned)")
        }
        // Small inputs fit in the pipe buffer; larger ones are written as poll allows.
        var pending = input[...]
        if pending.isEmpty { close(inPipe[1]) }
        var out: [UInt8] = []
        var err: [UInt8] = []
        var open = (stdin: !pending.isEmpty, stdout: true, stderr: true)
        var chunk = [UInt8](repeating: 0, count: 65536)
        while open.stdout || open.stderr || open.stdin {
            var fds = [
                pollfd(fd: open.stdout ? outPipe[0] : -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: open.stderr ? errPipe[0] : -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: open.stdin ? inPipe[1] : -1, events: Int16(POLLOUT), revents: 0),
            ]
            if poll(&fds, 3, -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for (slot, fd) in [(0, outPipe[0]), (1, errPipe[0])] where fds[slot].revents != 0 {
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    if slot == 0 { out += chunk[0..<count] } else { err += chunk[0..<count] }
                } else if count == 0 || errno != EINTR {
                    if slot == 0 { open.stdout = false } else { open.stderr = false }
                }
            }
            if fds[2].revents != 0 {
                let written = pending.withUnsafeBytes { write(inPipe[1], $0.baseAddress, min($0.count, 65536)) }
                if written > 0 { pending = pending.dropFirst(written) }
                if written < 0 && errno != EINTR || pending.isEmpty {
                    close(inPipe[1])
                    open.stdin = false
                }
            }
        }
        close(outPipe[0])
        close(errPipe[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return ProcessResult(status: exit, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }

    public static func readFile(_ path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw RunError(message: "cannot open \(path): errno \(errno)") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

public struct RunError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
