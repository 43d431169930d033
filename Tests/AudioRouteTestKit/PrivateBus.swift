import AudioRouteSystem
import AudioRouteTestbed
import Glibc

/// A private dbus-daemon (AudioRouteTestbed's) with the stock session configuration, listening
/// on a socket in its own temporary directory. Stopped, reaped and removed in `close()` (also
/// from deinit, so a failing test cleans up).
public final class PrivateBus: @unchecked Sendable {
    public let address: String
    private let bus: PrivateBusDaemon
    private let directory: String
    private var closed = false

    public init(configuration: String = PrivateBusDaemon.sessionConfiguration) throws {
        var template = Array("/tmp/audioroute-bus-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp: errno \(errno)") }
        directory = String(cString: made)
        // Callers of other uids (the system-bus access tests) must reach the socket.
        chmod(directory, 0o755)
        do {
            bus = try PrivateBusDaemon(socket: directory + "/bus", configuration: configuration)
        } catch {
            removeTree(directory)
            throw TestFailure("\(error)")
        }
        address = bus.address
    }

    public func close() {
        guard !closed else { return }
        closed = true
        bus.stop()
        removeTree(directory)
    }

    /// Stops the bus daemon (SIGSTOP): it reads nothing until `resume()`, so its clients'
    /// sockets fill up.
    public func suspend() { bus.send(ProcessSignal(rawValue: SIGSTOP)) }

    /// Lets a suspended bus daemon run again (SIGCONT).
    public func resume() { bus.send(ProcessSignal(rawValue: SIGCONT)) }

    deinit { close() }
}
