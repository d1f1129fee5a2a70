import CTresorSystem
import TresorSystem

/// The process that connected a socket, pinned: its credentials (`SO_PEERCRED`) and a pidfd
/// (`SO_PEERPIDFD`), both taken by the kernel at `connect(2)`. The pidfd names that process
/// alone, so once it has exited nothing — not a process given the same pid — passes as it.
struct PinnedPeer: Sendable {
    let credentials: PeerCredentials
    let pidfd: Int32

    /// Whether the pinned process is still running.
    var isAlive: Bool { tresor_pidfd_has_exited(pidfd) == 0 }
}
