import CTresorSystem
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The process at the other end of a Unix socket, as the kernel reports it (`SO_PEERCRED`).
/// The values are captured by the kernel at `connect()`, so the peer cannot choose them.
public struct PeerCredentials: Sendable, Equatable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// Reads the credentials of the peer of the connected socket `fd`.
    public init(socket fd: Int32) throws {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        guard tresor_peer_credentials(fd, &pid, &uid, &gid) == 0 else {
            throw SecureFileError.systemCall("getsockopt(SO_PEERCRED)", path: "socket", errno: errno)
        }
        self.init(pid: pid, uid: uid, gid: gid)
    }
}

extension PeerCredentials {
    /// `sizeof(struct ucred)` as the C library defines it, for code that mirrors the struct.
    public static var kernelLayoutSize: Int { Int(tresor_ucred_size()) }
}
