import Glibc

/// A private dbus-daemon with the stock session configuration, listening on a
/// socket in its own temporary directory. Stopped, reaped and removed in
/// `close()` (also from deinit, so a failing test cleans up).
public final class PrivateBus: @unchecked Sendable {
    public let address: String
    private let child: ChildProcess
    private let directory: String
    private var closed = false

    public init(configuration: String = "/usr/share/dbus-1/session.conf") throws {
        var template = Array("/tmp/audioroute-bus-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp: errno \(errno)") }
        directory = String(cString: made)
        // Callers of other uids (the system-bus access tests) must reach the socket.
        chmod(directory, 0o755)
        let arguments = [
            "--config-file=\(configuration)", "--nofork", "--nopidfile", "--print-address=1",
            "--address=unix:path=\(directory)/bus",
        ]
        do {
            child = try ChildProcess("/usr/bin/dbus-daemon", arguments, errorsToPipe: false)
        } catch {
            removeTree(directory)
            throw error
        }
        // The address line is the readiness line: the socket listens once it is printed.
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = read(child.stdout, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || byte == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        address = String(decoding: line, as: UTF8.self)
        guard address.hasPrefix("unix:") else {
            stop()
            throw TestFailure("dbus-daemon did not print its address")
        }
    }

    private func stop() {
        guard !closed else { return }
        closed = true
        child.kill()
        removeTree(directory)
    }

    public func close() { stop() }

    /// Stops the bus daemon (SIGSTOP): it reads nothing until `resume()`, so its clients'
    /// sockets fill up.
    public func suspend() { child.signal(SIGSTOP) }

    /// Lets a suspended bus daemon run again (SIGCONT).
    public func resume() { child.signal(SIGCONT) }

    deinit { stop() }
}
