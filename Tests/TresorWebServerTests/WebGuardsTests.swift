import Foundation
import NIOCore
import Testing

@testable import TresorWebServer

/// The pieces behind the web server's guards (docs/SECURITY.md, §3.12), without a daemon: finding a loopback
/// connection's owner in the kernel's TCP tables and logging repeated failures once per
/// interval. (Reserving sign-in attempts atomically is the web stores' conformance suite's:
/// Tests/TresorWebStoreTests.)
@Suite struct WebGuardsTests {
    // Rows as Linux prints them (x86-64): the server on 127.0.0.1:8080 (0x1F90), a client on
    // port 40000 (0x9C40) owned by uid 1000, a TIME_WAIT row of an earlier connection (uid 0).
    static let tcp = """
          sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
           0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
           1: 0100007F:9C41 0100007F:1F90 06 00000000:00000000 03:00000DA3 00000000     0        0 0 3 0000000000000000
           2: 0100007F:1F90 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0000000000000000 20 4 30 10 -1
           3: 0100007F:9C40 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 3 1 0000000000000000 20 4 30 10 -1
        """
    // A dual-stack client socket connected to ::ffff:127.0.0.1, as /proc/net/tcp6 lists it.
    static let tcp6 = """
          sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
           0: 0000000000000000FFFF00000100007F:9C42 0000000000000000FFFF00000100007F:1F90 01 00000000:00000000 00:00000000 00000000  1001        0 4 1 0000000000000000 20 4 30 10 -1
        """

    static func endpoint(_ port: UInt16) -> LoopbackPeers.Endpoint { .mapped(ipv4: [127, 0, 0, 1], port: port) }

    @Test func findsTheClientsUIDInBothTables() throws {
        let server = Self.endpoint(8080)
        #expect(LoopbackPeers.owner(clientLocal: Self.endpoint(40000), clientRemote: server, table: Self.tcp) == 1000)
        #expect(LoopbackPeers.owner(clientLocal: Self.endpoint(40002), clientRemote: server, table: Self.tcp6) == 1001)
        // The TIME_WAIT row (uid 0) is no live client; the server's own row is not the client's.
        #expect(LoopbackPeers.owner(clientLocal: Self.endpoint(40001), clientRemote: server, table: Self.tcp) == nil)
        #expect(
            LoopbackPeers.owner(clientLocal: server, clientRemote: Self.endpoint(40000), table: Self.tcp) == 0,
            "the server's side is found only when asked for it")
        #expect(LoopbackPeers.owner(clientLocal: Self.endpoint(40003), clientRemote: server, table: Self.tcp) == nil)
    }

    @Test func parsesKernelEndpointsAndNIOAddressesAlike() throws {
        #expect(LoopbackPeers.endpoint(procField: "0100007F:1F90") == Self.endpoint(8080))
        #expect(LoopbackPeers.endpoint(procField: "0000000000000000FFFF00000100007F:1F90") == Self.endpoint(8080))
        #expect(LoopbackPeers.endpoint(procField: "00000000000000000000000001000000:1F90")?.address == [UInt8](repeating: 0, count: 15) + [1])
        for bad in ["", "0100007F", "0100007F:", "0100007Z:1F90", "0100007F:1F90:1", "100007F:1F90", "0100007F:10000"] {
            #expect(LoopbackPeers.endpoint(procField: Substring(bad)) == nil, "\(bad)")
        }
        #expect(LoopbackPeers.endpoint(try SocketAddress(ipAddress: "127.0.0.1", port: 8080)) == Self.endpoint(8080))
        #expect(LoopbackPeers.endpoint(try SocketAddress(ipAddress: "::ffff:127.0.0.1", port: 8080)) == Self.endpoint(8080))
        #expect(LoopbackPeers.endpoint(try SocketAddress(ipAddress: "::1", port: 1))?.address == [UInt8](repeating: 0, count: 15) + [1])
    }

    @Test func policyAdmitsOnlyTheListedUIDs() throws {
        let local = try SocketAddress(ipAddress: "127.0.0.1", port: 8080), remote = try SocketAddress(ipAddress: "127.0.0.1", port: 40000)
        let policy = LocalUserPolicy.owner(1000, and: [1002])
        #expect(policy.admits(local: local, remote: remote, lookup: { _, _ in 1000 }).admitted)
        #expect(policy.admits(local: local, remote: remote, lookup: { _, _ in 1002 }).admitted)
        #expect(!policy.admits(local: local, remote: remote, lookup: { _, _ in 1001 }).admitted)
        #expect(!policy.admits(local: local, remote: remote, lookup: { _, _ in nil }).admitted, "unknown is refused")
        let anyone = LocalUserPolicy(uids: [1000], anyUser: true)
        #expect(anyone.admits(local: local, remote: remote, lookup: { _, _ in nil }).admitted)
    }

    @Test func repeatedFailuresAreLoggedOncePerInterval() {
        let limiter = RepeatedLogLimiter(interval: 10)
        let start = Date()
        #expect(limiter.admit("sign-in throttled", now: start) == 0)
        for second in 1...9 { #expect(limiter.admit("sign-in throttled", now: start + Double(second)) == nil) }
        #expect(limiter.admit("other kind", now: start + 1) == 0, "kinds are counted apart")
        #expect(limiter.admit("sign-in throttled", now: start + 10) == 9, "the next line says how many were left out")
    }

    /// Each client but the owner gets its share; all of them together leave the owner's room;
    /// a slot given back can be taken again.
    @Test func connectionSlotsKeepRoomForTheOwner() {
        let slots = ConnectionSlots(perClient: 2, othersTogether: 3)
        #expect(slots.take(for: .client("uid 1001")) && slots.take(for: .client("uid 1001")))
        #expect(!slots.take(for: .client("uid 1001")), "over one client's share")
        #expect(slots.take(for: .client("uid 1002")))
        #expect(!slots.take(for: .client("uid 1003")), "over the others' pool: the rest is the owner's")
        for _ in 0..<100 { #expect(slots.take(for: .owner) && slots.take(for: .trustedProxy)) }
        slots.giveBack(for: .client("uid 1001"))
        #expect(slots.take(for: .client("uid 1003")))
        #expect(!slots.take(for: .client("uid 1001")))
    }

    @Test func connectionLimitsAreChecked() throws {
        let defaults = try ConnectionLimits(total: nil, perClient: nil, reservedForOwner: nil)
        #expect(defaults.total == 64 && defaults.perClient == 8 && defaults.reservedForOwner == 16)
        #expect(throws: WebConfigurationError.self) { try ConnectionLimits(total: 8, perClient: 2, reservedForOwner: 8) }
        #expect(throws: WebConfigurationError.self) { try ConnectionLimits(total: 8, perClient: 0, reservedForOwner: 2) }
        #expect(throws: WebConfigurationError.self) { try ConnectionLimits(total: 0, perClient: 1, reservedForOwner: 0) }
    }

    @Test func loopbackPeersAreRecognizedInEveryForm() {
        for address in ["127.0.0.1", "127.5.6.7", "::1", "::ffff:127.0.0.2", "::FFFF:127.0.0.1"] {
            #expect(ConnectionLimiter.isLoopback(address), "\(address)")
        }
        for address in ["10.0.0.5", "::ffff:10.0.0.5", "2001:db8::1", "unknown"] {
            #expect(!ConnectionLimiter.isLoopback(address), "\(address)")
        }
    }
}
