import CTresorSystem
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Unix sockets as the kernel knows them, whoever holds them: which sockets a process has open,
/// what each is connected to (socket diagnostics, `NETLINK_SOCK_DIAG`), and which other processes
/// hold the same socket.
///
/// `ConnectionHolding` uses them to check the process a bus names for a connection against the
/// sockets connected to the bus (docs/SECURITY.md, "Borrowed bus connections").
public enum UnixSockets {
    /// The inodes of the sockets process `pid` holds open, or nil when its descriptors cannot be read.
    /// - Parameters:
    ///   - pid: the process.
    ///   - procRoot: where procfs is mounted.
    public static func inodes(heldBy pid: Int32, procRoot: String = "/proc") -> [UInt64]? {
        var inodes = [UInt64](repeating: 0, count: 16)
        while true {
            let count = inodes.withUnsafeMutableBufferPointer { buffer in
                buffer.withMemoryRebound(to: CUnsignedLongLong.self) {
                    tresor_socket_inodes(pid, $0.baseAddress, Int32($0.count), procRoot)
                }
            }
            guard count >= 0 else { return nil }
            if Int(count) <= inodes.count { return Array(inodes[..<Int(count)]) }
            inodes = [UInt64](repeating: 0, count: Int(count) * 2)
        }
    }

    /// The socket at the other end of socket `inode` and the address that peer is bound to (for a
    /// server's accepted connection, the listening address); nil when the socket is not found in this
    /// network namespace or is not connected.
    public static func peer(of inode: UInt64) -> (inode: UInt64, address: [UInt8])? {
        guard let peer = describe(inode)?.peer, peer != 0, let bound = describe(peer) else { return nil }
        return (peer, bound.address)
    }

    /// Socket `inode`'s peer (0 when none) and its own address.
    private static func describe(_ inode: UInt64) -> (peer: UInt64, address: [UInt8])? {
        var peer: UInt64 = 0
        var name = [UInt8](repeating: 0, count: 128)
        var length: UInt = 0
        guard tresor_unix_socket_peer(inode, &peer, &name, UInt(name.count), &length) == 0 else { return nil }
        return (peer, address(name[..<Int(length)]))
    }

    /// An address as `sun_path` bytes: a path up to its terminating NUL (the kernel keeps one, and
    /// `getpeername` may return it), an abstract name (its first byte NUL) whole.
    private static func address(_ bytes: some Collection<UInt8>) -> [UInt8] {
        bytes.first == 0 ? Array(bytes) : Array(bytes.prefix { $0 != 0 })
    }

    /// The address the peer of our connected socket `fd` is bound to (`getpeername`): for a client of
    /// a server, the server's listening address. Nil when it has none or `fd` is not connected.
    public static func peerAddress(ofConnected fd: Int32) -> [UInt8]? {
        var address = sockaddr_un()
        var size = socklen_t(MemoryLayout<sockaddr_un>.size)
        let read = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &size) }
        }
        let header = MemoryLayout<sa_family_t>.size
        guard read == 0, Int(size) > header else { return nil }
        return withUnsafeBytes(of: address.sun_path) { Self.address($0.prefix(Int(size) - header)) }
    }

    /// The processes of `uid` other than `excluding` that hold one of `inodes` open.
    /// - Parameters:
    ///   - inodes: socket inodes.
    ///   - uid: whose processes to look at (only they can be read without privileges).
    ///   - excluding: a process left out (the one known to hold them).
    ///   - procRoot: where procfs is mounted.
    public static func holders(of inodes: [UInt64], uid: uid_t, excluding: Int32, procRoot: String = "/proc") -> [Int32] {
        guard !inodes.isEmpty else { return [] }
        var found = [pid_t](repeating: 0, count: 16)
        let count = tresor_socket_holders(
            inodes.map { CUnsignedLongLong($0) }, Int32(inodes.count), uid, excluding, &found, Int32(found.count), procRoot)
        return count > 0 ? Array(found[..<Int(count)]) : []
    }
}
