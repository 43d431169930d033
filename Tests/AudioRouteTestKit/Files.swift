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
