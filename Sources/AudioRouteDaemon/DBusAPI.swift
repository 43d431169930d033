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

extension AccessPolicy {
    /// Whether the caller is root or in group `audio`: who may change routing, and take the
    /// session pool's reserve. False for credentials that could not be fetched.
    public func isPrivileged(_ credentials: BusCredentials) -> Bool {
        guard let uid = credentials.uid else { return false }
        if uid == 0 { return true }
        if let audioGroup, credentials.gids.contains(audioGroup) { return true }
        return false
    }
}

/// Who may open one more session: small ordered rules, the first that refuses names its
/// limit (docs/security.md, "The session pool"; the choice in docs/decisions.md).
///
/// The pool's `total` places are an open part, shared between users, and a `reserve` that
/// only root and group `audio` may take once the open part refuses them. In the open part a
/// user always gets its first `guaranteed` places while one is free; beyond them it takes at
/// most a fair share (the open part over the users holding places, plus one for a newcomer),
/// and only while `newcomerRoom` places stay free for users still to come. So no user locks
/// another out, and a user alone cannot fill the pool. On the session bus (not `enforced`)
/// every caller is the bus's one user: the whole pool is open to it.
public struct SessionPool: Sendable, Hashable {
    /// One session held.
    public struct Holder: Sendable, Hashable {
        public var owner: String
        public var uid: UInt32
        /// In the reserve, rather than the open part.
        public var reserved: Bool

        public init(owner: String, uid: UInt32, reserved: Bool) {
            self.owner = owner
            self.uid = uid
            self.reserved = reserved
        }
    }

    /// Where an admitted session sits.
    public enum Place: Sendable, Hashable {
        case open
        case reserve
    }

    /// Shares and the reserve apply (the system bus).
    public var enforced: Bool
    public var total = DBusAPI.maxSessions
    public var reserve = DBusAPI.reservedSessions
    public var guaranteed = DBusAPI.guaranteedSessionsPerUser
    public var newcomerRoom = DBusAPI.newcomerRoom
    public var perConnection = DBusAPI.maxSessionsPerName
    public var connectionsPerUser = DBusAPI.maxConnectionsPerUser

    public init(enforced: Bool) { self.enforced = enforced }

    /// The open part: what every user shares.
    public var openPart: Int { enforced ? total - reserve : total }

    /// The most places `uid`'s sessions may take in the open part while `users` users
    /// (the caller included) hold places there.
    public func share(users: Int) -> Int { max(guaranteed, openPart / (users + 1)) }

    /// Where `owner`, of user `uid`, gets one more session, or why not (the message of a
    /// `LimitsExceeded`).
    public func admit(owner: String, uid: UInt32, privileged: Bool, holders: some Collection<Holder>) -> Result<Place, Refusal> {
        let owned = holders.count { $0.owner == owner }
        guard owned < perConnection else {
            return .failure(Refusal("\(owner) already holds \(owned) sessions; at most \(perConnection)"))
        }
        let connections = Set(holders.lazy.filter { $0.uid == uid }.map(\.owner))
        guard connections.contains(owner) || connections.count < connectionsPerUser else {
            return .failure(Refusal("user \(uid) already holds sessions on \(connections.count) connections; at most \(connectionsPerUser)"))
        }
        guard holders.count < total else {
            return .failure(Refusal("the daemon holds \(holders.count) sessions, its limit; close one first"))
        }
        let inOpen = holders.filter { !$0.reserved }
        let free = openPart - inOpen.count
        let mine = inOpen.count { $0.uid == uid }
        let users = Set(inOpen.map(\.uid)).union([uid]).count
        let share = share(users: users)
        let refusal: Refusal
        if free <= 0 {
            refusal = Refusal("the \(openPart) sessions open to every user are taken; close one first")
        } else if !enforced || mine < guaranteed {
            return .success(.open)
        } else if mine >= share {
            refusal = Refusal("user \(uid) holds \(mine) sessions, its share while \(users) users hold sessions")
        } else if free - 1 < newcomerRoom {
            refusal = Refusal("user \(uid) holds \(mine) sessions; the last \(newcomerRoom) are kept for users who hold fewer than \(guaranteed)")
        } else {
            return .success(.open)
        }
        let reserved = holders.count { $0.reserved }
        if enforced, privileged, reserved < reserve { return .success(.reserve) }
        return .failure(refusal)
    }

    /// A refusal's message.
    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }
}
