import CLinux
import Glibc

/// A private dbus-daemon with the stock session configuration, listening on a
/// socket in its own temporary directory. Stopped, reaped and removed in
/// `close()` (also from deinit, so a failing test cleans up).
public final class PrivateBus: @unchecked Sendable {
    public let address: String
    private let pid: pid_t
    private let directory: String
    private var closed = false

    public init(configuration: String = "/usr/share/dbus-1/session.conf") throws {
        var template = Array("/tmp/audioroute-bus-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp: errno \(errno)") }
        directory = String(cString: made)
        // Callers of other uids (the system-bus access tests) must reach the socket.
        chmod(directory, 0o755)
        var out: [Int32] = [0, 0]
        guard pipe(&out) == 0 else { throw TestFailure("pipe: errno \(errno)") }
        // Other tests spawn in parallel: keep these ends out of their children.
        for fd in out { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        // No other inherited descriptor (see spawn in TestSupport.swift).
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        let arguments = [
            "/usr/bin/dbus-daemon", "--config-file=\(configuration)", "--nofork", "--nopidfile", "--print-address=1",
            "--address=unix:path=\(directory)/bus",
        ]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, arguments[0], &actions, nil, argv, environ)
        Glibc.close(out[1])
        defer { Glibc.close(out[0]) }
        guard spawned == 0 else {
            removeTree(directory)
            throw TestFailure("cannot start dbus-daemon: errno \(spawned)")
        }
        pid = child
        // The address line is the readiness line: the socket listens once it is printed.
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = read(out[0], &byte, 1)
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
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        removeTree(directory)
    }

    public func close() { stop() }

    /// Stops the bus daemon (SIGSTOP): it reads nothing until `resume()`, so its clients'
    /// sockets fill up.
    public func suspend() { kill(pid, SIGSTOP) }

    /// Lets a suspended bus daemon run again (SIGCONT).
    public func resume() { kill(pid, SIGCONT) }

    deinit { stop() }
}
