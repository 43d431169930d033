// sd_notify(3) from libsystemd, which the daemon links for sd-bus anyway.
import AudioRouteSystem
import CSystemd

/// Tells the service manager about the daemon's state (sd_notify(3)).
public enum SystemdNotify {
    /// Sends `state` ("READY=1", "STOPPING=1", "STATUS=...") to the socket named by
    /// `NOTIFY_SOCKET`: a filesystem path, or an abstract socket when it starts with "@".
    /// Returns false when there is no socket to tell (not started by systemd), throws when
    /// the socket is named but unusable.
    @discardableResult
    public static func notify(_ state: String) throws(Errno) -> Bool {
        guard let socket = Environment.variables["NOTIFY_SOCKET"], !socket.isEmpty else { return false }
        let status = sd_notify(0, state)
        guard status >= 0 else { throw Errno(Errno.Code(-status), "sd_notify \(state) to", path: socket) }
        return status > 0
    }
}
