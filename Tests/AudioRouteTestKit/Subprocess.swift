// The built products and the package's files, for the tests that run a binary
// (through ChildProcess).
import Glibc

public enum Subprocess {
    public static var productsDirectory: String { AudioRouteTestKit.productsDirectory }

    /// The package root, from this file's path.
    public static let packageRoot: String = {
        let file = #filePath
        // <root>/Tests/AudioRouteTestKit/Subprocess.swift
        var parts = file.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()

    public static func product(_ name: String) -> String { productsDirectory + "/" + name }

    /// Runs `path` with `arguments`, feeding `input` on standard input.
    public static func run(_ path: String, _ arguments: [String], input: [UInt8] = []) throws -> ProcessResult {
        try ChildProcess(path, arguments, input: .pipe).collect(input: input)
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
