import Foundation
import Testing

@testable import TresorSystem

/// ``TCPSockets``: the kernel names the owner of one TCP socket by its two ends — a plain IPv4
/// client and a dual-stack one connected to an IPv4-mapped address alike — and finds nothing
/// for ends no socket has.
@Suite struct TCPSocketsTests {
    /// A listener on 127.0.0.1 and its port.
    func listener() throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        try #require(bound)
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// The client's own port.
    func localPort(_ fd: Int32) -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        let family = storage.ss_family
        return withUnsafePointer(to: &storage) { pointer in
            family == sa_family_t(AF_INET)
                ? pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
                : pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
        }
    }

    @Test func findsTheOwnerOfOneSocketByItsEnds() throws {
        let (server, port) = try listener()
        defer { close(server) }
        let loopback: [UInt8] = [127, 0, 0, 1], mapped = [UInt8](repeating: 0, count: 10) + [0xff, 0xff, 127, 0, 0, 1]

        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        try #require(
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            })
        let clientPort = localPort(client)
        #expect(TCPSockets.owner(local: loopback, localPort: clientPort, remote: loopback, remotePort: port) == getuid())
        #expect(TCPSockets.owner(local: mapped, localPort: clientPort, remote: mapped, remotePort: port) == getuid(), "mapped ends")

        let dual = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(dual) }
        var address6 = sockaddr_in6()
        address6.sin6_family = sa_family_t(AF_INET6)
        address6.sin6_port = port.bigEndian
        withUnsafeMutableBytes(of: &address6.sin6_addr) { $0.copyBytes(from: mapped) }
        try #require(
            withUnsafePointer(to: &address6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(dual, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0 }
            })
        #expect(TCPSockets.owner(local: loopback, localPort: localPort(dual), remote: loopback, remotePort: port) == getuid(), "dual-stack")

        // No socket has these ends; the listener is nobody's connection.
        #expect(TCPSockets.owner(local: loopback, localPort: clientPort, remote: loopback, remotePort: port &+ 1) == nil)
        #expect(TCPSockets.owner(local: loopback, localPort: port, remote: [0, 0, 0, 0], remotePort: 0) == nil)
    }
}
