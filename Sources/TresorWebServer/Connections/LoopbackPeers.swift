import Foundation
import NIOCore
import Synchronization
import TresorModel
import TresorSystem

/// Which local user owns the other end of a loopback TCP connection (docs/WEB.md, "Local
/// users"). The socket API learns its peer's uid from `SO_PEERCRED`; TCP has no such thing,
/// but Linux lists every TCP socket with its owner's uid in `/proc/net/tcp` and
/// `/proc/net/tcp6`. The client's socket is the row whose local address is the server's
/// remote address and whose remote address is the server's local address.
enum LoopbackPeers {
    /// An address and port, IPv4 addresses as IPv4-mapped IPv6 (`::ffff:a.b.c.d`) so that a
    /// dual-stack client socket (listed in `tcp6`) compares equal to its IPv4 form.
    struct Endpoint: Hashable, CustomStringConvertible {
        var address: [UInt8]
        var port: UInt16

        var description: String { "\(address.hexString):\(port)" }

        static func mapped(ipv4 bytes: [UInt8], port: UInt16) -> Endpoint {
            Endpoint(address: [UInt8](repeating: 0, count: 10) + [0xff, 0xff] + bytes, port: port)
        }
    }

    /// The tables the kernel keeps, IPv4 then IPv6.
    static let tables = ["/proc/net/tcp", "/proc/net/tcp6"]

    /// Whether the kernel's socket diagnostics have answered once: from then on a socket they
    /// do not find is gone, and the tables — read whole, their length growing with every socket
    /// of the machine — are not read instead.
    private static let diagnosticsAnswer = Atomic<Bool>(false)

    /// The uid owning the client end of the connection the server sees as `local` ↔ `remote`;
    /// nil when the kernel lists no such socket (not Linux, or the client already went away).
    /// Asked of the kernel's socket diagnostics for that one socket (``TCPSockets``), or, where
    /// they do not answer, found in the tables.
    static func owner(local: SocketAddress?, remote: SocketAddress?) -> UInt32? {
        guard let local = local.flatMap(endpoint), let remote = remote.flatMap(endpoint) else { return nil }
        if let uid = TCPSockets.owner(local: remote.address, localPort: remote.port, remote: local.address, remotePort: local.port) {
            diagnosticsAnswer.store(true, ordering: .relaxed)
            return uid
        }
        if diagnosticsAnswer.load(ordering: .relaxed) { return nil }
        for table in tables {
            guard let handle = FileHandle(forReadingAtPath: table) else { continue }
            defer { try? handle.close() }
            guard let data = try? handle.readToEnd() else { continue }
            if let uid = owner(clientLocal: remote, clientRemote: local, table: String(decoding: data, as: UTF8.self)) { return uid }
        }
        return nil
    }

    /// The uid in `table` (the text of `/proc/net/tcp` or `tcp6`) of the socket whose local
    /// endpoint is `clientLocal` and whose remote endpoint is `clientRemote`. Listening
    /// sockets and TIME_WAIT rows (which the kernel lists as uid 0) are skipped.
    static func owner(clientLocal: Endpoint, clientRemote: Endpoint, table: String) -> UInt32? {
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 7, fields[3] != "0A", fields[3] != "06",
                let local = endpoint(procField: fields[1]), local == clientLocal,
                let remote = endpoint(procField: fields[2]), remote == clientRemote
            else { continue }
            return UInt32(fields[7])
        }
        return nil
    }

    /// An endpoint as the kernel prints it: `0100007F:1F90` (IPv4) or 32 hex digits and a
    /// port (IPv6). The address is printed as 32-bit words in the host's byte order, so each
    /// word's native bytes are the address bytes.
    static func endpoint(procField field: Substring) -> Endpoint? {
        let parts = field.split(separator: ":")
        guard parts.count == 2, let port = UInt16(parts[1], radix: 16), [8, 32].contains(parts[0].count) else { return nil }
        var bytes: [UInt8] = []
        var index = parts[0].startIndex
        while index < parts[0].endIndex {
            let next = parts[0].index(index, offsetBy: 8)
            guard let word = UInt32(parts[0][index..<next], radix: 16) else { return nil }
            withUnsafeBytes(of: word) { bytes.append(contentsOf: $0) }
            index = next
        }
        return bytes.count == 4 ? .mapped(ipv4: bytes, port: port) : Endpoint(address: bytes, port: port)
    }

    /// A NIO socket address as an endpoint; nil for a Unix socket.
    static func endpoint(_ address: SocketAddress) -> Endpoint? {
        guard let port = address.port, let port16 = UInt16(exactly: port) else { return nil }
        switch address {
        case .v4(let v4):
            let bytes = withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
            return .mapped(ipv4: bytes, port: port16)
        case .v6(let v6):
            return Endpoint(address: withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }, port: port16)
        case .unixDomainSocket:
            return nil
        }
    }
}
