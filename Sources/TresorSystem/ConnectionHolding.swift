import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Whether a process holds the connections a server says it opened, and holds them alone.
///
/// A server that knows its clients by the pid that connected (a D-Bus bus) names the process
/// that opened a connection, not the one that speaks on it: a process can connect, fork, and
/// execute another program while its child keeps the socket. The kernel tells what the bus
/// cannot: which sockets connected to the server each process holds (docs/SECURITY.md,
/// "Borrowed bus connections").
public enum ConnectionHolding {
    /// Why the connections the server listening at `address` names for `pid` may be spoken on
    /// by another process; nil when nothing says so.
    ///
    /// - The process holds fewer sockets connected to the server than the server names
    ///   connections for it: it closed one at `exec` (every D-Bus library sets close-on-exec)
    ///   while another process kept it.
    /// - Another process of `uid` holds one of those sockets and runs another program (a child
    ///   forked without `exec` runs the same one: that is still the program named). Looking
    ///   reads every descriptor of every process of `uid`.
    /// - Parameters:
    ///   - pid: the process the server names.
    ///   - connections: how many connections the server names for `pid` (at least one).
    ///   - address: the server's listening address, the peer of every client's socket.
    ///   - uid: whose processes to look at for other holders.
    ///   - lookingForOtherHolders: whether to look for another process holding the sockets.
    ///   - procRoot: where procfs is mounted.
    /// - Returns: the reason to doubt, or nil.
    public static func doubt(
        pid: Int32, connections: Int, to address: [UInt8], uid: uid_t, lookingForOtherHolders: Bool = true, procRoot: String = "/proc"
    ) -> String? {
        guard let sockets = UnixSockets.inodes(heldBy: pid, procRoot: procRoot) else {
            return "the connections of process \(pid) cannot be read"
        }
        let toServer = sockets.filter { UnixSockets.peer(of: $0)?.address == address }
        if toServer.count < max(1, connections) {
            return "process \(pid) does not hold the bus connection it opened: another process speaks on it"
        }
        guard lookingForOtherHolders else { return nil }
        let executable = ProcessImage.executable(of: pid, procRoot: procRoot)
        for holder in UnixSockets.holders(of: toServer, uid: uid, excluding: pid, procRoot: procRoot)
        where ProcessImage.executable(of: holder, procRoot: procRoot) != executable {
            return "process \(holder), another program, holds the bus connection of process \(pid)"
        }
        return nil
    }
}
