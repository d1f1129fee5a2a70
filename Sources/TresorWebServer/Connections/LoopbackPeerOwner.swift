import NIOCore

/// The uid of one connection's other end, looked up at most once — each lookup reads the
/// kernel's tables — and shared by the connection's handlers (``ConnectionLimiter`` as it
/// opens, ``LocalUserFilter`` at its first request). Used on the connection's event loop only.
final class LoopbackPeerOwner {
    private var found: UInt32??

    /// ``LoopbackPeers/owner(local:remote:)``, the first time; after it, what it answered.
    func owner(local: SocketAddress?, remote: SocketAddress?) -> UInt32? {
        if let found { return found }
        let uid = LoopbackPeers.owner(local: local, remote: remote)
        found = .some(uid)
        return uid
    }
}
