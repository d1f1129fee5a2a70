import CTresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// TCP sockets as the kernel knows them, whoever holds them (socket diagnostics,
/// `NETLINK_SOCK_DIAG`): the web server learns which local user is at the other end of a
/// loopback connection (docs/WEB.md, "Local users").
public enum TCPSockets {
    /// The uid owning the TCP socket whose own end is `local`:`localPort` and whose other end is
    /// `remote`:`remotePort`, found by the kernel in one lookup (however many sockets there are).
    /// - Parameters:
    ///   - local: 4 bytes (IPv4) or 16 (IPv6; an IPv4-mapped one is looked up as IPv4, which finds
    ///     a dual-stack socket too).
    ///   - localPort: the socket's own port.
    ///   - remote: the address of its other end, the same size as `local`.
    ///   - remotePort: the port of its other end.
    /// - Returns: the uid, or nil when no such socket exists or the kernel does not answer.
    public static func owner(local: [UInt8], localPort: UInt16, remote: [UInt8], remotePort: UInt16) -> UInt32? {
        var local = local, remote = remote
        if local.count == 16, remote.count == 16, isMapped(local), isMapped(remote) {
            local = Array(local.suffix(4))
            remote = Array(remote.suffix(4))
        }
        guard local.count == remote.count, [4, 16].contains(local.count) else { return nil }
        var uid: UInt32 = 0
        let family = local.count == 4 ? AF_INET : AF_INET6
        guard tresor_tcp_socket_uid(family, local, localPort, remote, remotePort, &uid) == 0 else { return nil }
        return uid
    }

    /// `::ffff:a.b.c.d`.
    static func isMapped(_ address: [UInt8]) -> Bool {
        address.prefix(10).allSatisfy { $0 == 0 } && address[10] == 0xff && address[11] == 0xff
    }
}
