// Synchronous file and process helpers for tests that are not async (the
// libudev, libasound and ALSA file tests), without Foundation.
#if canImport(Glibc)
import AudioRouteSystem
import Glibc
#endif

/// Runs `body` with a fresh directory under /tmp, removed afterwards whatever happens
/// (the synchronous form of `withTemporaryDirectory`, for tests that are not async).
public func withSyncTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let path = try makeTemporaryDirectory()
    defer { removeTree(path) }
    return try body(path)
}

/// Writes `text` to `path` (0644), replacing what was there.
public func writeFile(_ path: String, _ text: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw TestFailure("open \(path): errno \(errno)") }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { throw TestFailure("write \(path): errno \(errno)") }
        offset += written
    }
}

/// `count` bytes of a fixed pseudo-random pattern (so that a misplaced byte shows).
public func pattern(_ count: Int, seed: UInt32) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 1_664_525 &+ 1_013_904_223
        return UInt8(truncatingIfNeeded: state >> 24)
    }
}

/// Runs a program with `environment` added to this process's, returning its exit status and standard error.
public func run(_ path: String, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, stderr: String) {
    var errPipe: [Int32] = [0, 0]
    guard pipe(&errPipe) == 0 else { throw TestFailure("pipe: errno \(errno)") }
    _ = fcntl(errPipe[0], F_SETFD, FD_CLOEXEC)
    _ = fcntl(errPipe[1], F_SETFD, FD_CLOEXEC)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
    let result = spawn(path, arguments, environment: environment, actions: &actions)
    close(errPipe[1])
    guard case .success(let pid) = result else {
        close(errPipe[0])
        throw TestFailure("cannot start \(path): \(result)")
    }
    var err: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(errPipe[0], $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        err += chunk[0..<count]
    }
    close(errPipe[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return (exit, String(decoding: err, as: UTF8.self))
}

public func readText(_ path: String) throws -> String { String(decoding: try AtomicFile.read(path), as: UTF8.self) }

public func writeText(_ path: String, _ text: String) throws { try AtomicFile.write(Array(text.utf8), to: path) }

public func directoryEntries(_ path: String) -> [String] {
    guard let dir = opendir(path) else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        if name != "." && name != ".." { names.append(name) }
    }
    return names.sorted()
}
