import NIOCore

/// Which local users the web server serves (docs/WEB.md, "Local users"): by default only the
/// uid the daemon runs as — the home's owner —, plus the uids of `webAllowedUIDs`, or every
/// local user with `webAllowAnyLocalUser` (a family machine whose members all sign in).
public struct LocalUserPolicy: Sendable, Equatable {
    /// Every uid admitted (the daemon's own among them); ignored when `anyUser` is set.
    public var uids: Set<UInt32>
    /// Whether any local user may connect.
    public var anyUser: Bool

    /// Only the daemon's own uid, plus `others`.
    public static func owner(_ uid: UInt32, and others: [UInt32] = []) -> LocalUserPolicy {
        LocalUserPolicy(uids: Set([uid] + others), anyUser: false)
    }

    /// Whether the client at the other end of `local` ↔ `remote` may be served: with
    /// `lookup`'s uid (the kernel's table; nil when unknown, which is refused).
    func admits(local: SocketAddress?, remote: SocketAddress?, lookup: (SocketAddress?, SocketAddress?) -> UInt32? = LoopbackPeers.owner)
        -> (admitted: Bool, uid: UInt32?)
    {
        if anyUser { return (true, nil) }
        let uid = lookup(local, remote)
        return (uid.map(uids.contains) ?? false, uid)
    }
}
