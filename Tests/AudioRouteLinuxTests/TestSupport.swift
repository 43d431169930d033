// Temporary directories removed even when a test fails, and a small
// posix_spawn runner with its own environment, without Foundation.
@_exported import AudioRouteTestSupport
import AudioRouteLinux
#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` with a fresh directory under /tmp, removed afterwards whatever happens.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    var template = Array("/tmp/audioroute-test-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp: errno \(errno)") }
    let path = String(cString: made)
    defer { removeTree(path) }
    return try body(path)
}

func writeFile(_ path: String, _ text: String) throws {
    try AtomicFile.write(Array(text.utf8), to: path, mode: 0o644)
}

/// `count` bytes of a fixed pseudo-random pattern (so that a misplaced byte shows).
func pattern(_ count: Int, seed: UInt32) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 1_664_525 &+ 1_013_904_223
        return UInt8(truncatingIfNeeded: state >> 24)
    }
}

/// Runs a program with `environment` added to this process's, returning its exit status and standard error.
func run(_ path: String, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, stderr: String) {
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
