// The daemon's side of the API that the contract (AudioRouteIPC's DBusAPI) leaves to it:
// who may call what on the system bus, and the replies for its own refusals.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteDBus

extension DBusErrorReply {
    /// The reply for a refused or unsaved daemon request.
    public init(_ error: RequestError) {
        switch error {
        case .refused(let refused): self.init(refused)
        case .limitExceeded: self.init(.limitsExceeded, error.description)
        case .notSaved: self.init(.notSaved, error.description)
        }
    }
}

/// Who may change routing on the system bus.
public struct AccessPolicy: Sendable, Hashable {
    /// False on the session bus: the bus already admits only its user.
    public var enforced: Bool
    /// The gid of group `audio`, if the group exists.
    public var audioGroup: UInt32?

    public init(enforced: Bool, audioGroup: UInt32?) {
        self.enforced = enforced
        self.audioGroup = audioGroup
    }

    /// Whether a call to `interface.member` by a caller with `credentials` may go on.
    /// Credentials that could not be fetched deny a privileged call (fail closed).
    public func allows(interface: String, member: String, credentials: Result<BusCredentials, BusError>?) -> Bool {
        guard enforced, DBusAPI.privilegedMembers.contains(interface + "." + member) else { return true }
        guard case .success(let caller)? = credentials, let uid = caller.uid else { return false }
        if uid == 0 { return true }
        if let audioGroup, caller.gids.contains(audioGroup) { return true }
        return false
    }
}
