import AudioRouteCore
import AudioRouteSystem
import Glibc

/// The built audiorouted on a private session bus (no system bus: no BlueZ), with
/// temporary state and runtime directories; READY=1 on NOTIFY_SOCKET says it serves.
public final class RealDaemon: @unchecked Sendable {
    public let process: ChildProcess
    public let directory: String

    /// - Parameters:
    ///   - testbed: a umockdev testbed's root: the daemon runs under `umockdev-wrapper` with
    ///     `UMOCKDEV_DIR` set, so its udev watcher sees the testbed's devices.
    public init(address: String, directory: String, testbed: String? = nil) throws {
        self.directory = directory
        let socket = try NotifySocket(path: directory + "/notify-\(UInt32.random(in: 0...UInt32.max))")
        var environment = [
            "DBUS_SESSION_BUS_ADDRESS": address, "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/audioroute-no-system-bus",
            "NOTIFY_SOCKET": socket.name,
        ]
        let arguments = ["--state-dir", directory + "/state", "--runtime-dir", directory + "/run", "--log-level", "debug"]
        if let testbed {
            environment["UMOCKDEV_DIR"] = testbed
            process = try ChildProcess("/usr/bin/umockdev-wrapper", [productsDirectory + "/audiorouted"] + arguments, environment: environment)
        } else {
            process = try ChildProcess(productsDirectory + "/audiorouted", arguments, environment: environment)
        }
        guard socket.receive(seconds: 20) == "READY=1" else {
            process.signal(SIGKILL)
            throw TestFailure("audiorouted did not get ready: \(process.availableStderr())")
        }
    }

    public func kill() {
        process.signal(SIGKILL)
        _ = process.wait(seconds: 10)
    }

    deinit { kill() }
}

