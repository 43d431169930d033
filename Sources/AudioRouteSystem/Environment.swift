// The process's environment, standard streams and exit, without Foundation.
import Glibc

/// This process's environment and its immediate exit.
public enum Environment {
    /// Every variable (environ), by name.
    public static var variables: [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return result
    }

    /// Sets (or with nil removes) a variable of this process (setenv, unsetenv), for libraries
    /// it loads later to read: the ALSA plugin's AUDIOROUTE_IO_BUFFER_DURATION. glibc's setenv is
    /// not safe against a getenv on another thread at the same moment; callers set before opening.
    public static func set(_ name: String, to value: String?) throws(Errno) {
        let result = value.map { setenv(name, $0, 1) } ?? unsetenv(name)
        guard result == 0 else { throw Errno(Errno.Code(errno), value == nil ? "unsetenv \(name)" : "setenv \(name)") }
    }

    /// Ends the process now (_exit): no atexit handlers, no flushing, safe from any thread while
    /// others run (a signal thread that has cleaned up).
    public static func exitImmediately(_ status: Int32) -> Never { _exit(status) }
}

/// Standard input, output and error: used, never owned (nothing here closes them).
public enum StandardStream: Int32, Sendable {
    case input = 0
    case output = 1
    case error = 2

    /// Whether it is a terminal (isatty).
    public var isTerminal: Bool { isatty(rawValue) == 1 }

    /// Runs `body` with the stream as a `FileDescriptor` that is not closed afterwards.
    public func withDescriptor<R, E: Error>(_ body: (borrowing FileDescriptor) throws(E) -> R) throws(E) -> R {
        let descriptor = FileDescriptor(adopting: rawValue)
        let result: Result<R, E>
        do throws(E) {
            result = .success(try body(descriptor))
        } catch {
            result = .failure(error)
        }
        _ = descriptor.release()
        return try result.get()
    }

    /// Writes all of `bytes`. A failure (a closed pipe) is dropped: nothing could report it.
    public func write(_ bytes: [UInt8]) {
        withDescriptor { descriptor in _ = try? descriptor.writeAll(bytes) }
    }

    /// Writes `text` as UTF-8.
    public func write(_ text: String) { write(Array(text.utf8)) }

    /// Reads to the end.
    public func readToEnd() throws(Errno) -> [UInt8] {
        try withDescriptor { (descriptor) throws(Errno) in try descriptor.readToEnd() }
    }
}
