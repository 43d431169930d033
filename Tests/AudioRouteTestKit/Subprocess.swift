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

    public static func readFile(_ path: String) throws -> String { try readText(path) }
}
