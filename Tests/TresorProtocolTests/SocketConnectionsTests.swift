import Testing
import TresorProtocol

/// A client reads how long the daemon keeps an idle connection from `Keep-Alive` (docs/API.md,
/// "Connections"); a value it cannot read leaves it with the default.
@Suite struct SocketConnectionsTests {
    @Test(
        arguments: [
            ("timeout=120", 120), ("timeout=5, max=100", 5), ("max=100, timeout = 7", 7), ("TIMEOUT=3", 3),
            ("timeout=0", nil), ("timeout=-4", nil), ("timeout=soon", nil), ("max=3", nil), ("", nil),
        ] as [(String, Int?)])
    func keepAliveTimeout(header: String, seconds: Int?) {
        #expect(SocketConnections.timeout(inKeepAlive: header) == seconds)
    }
}
