import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// A flood of connections from the user's own processes: past the daemon's limit a new
/// connection waits in the socket's backlog — the daemon neither accepts it nor runs out of
/// descriptors — and is served as soon as the flood lets one go (docs/SECURITY.md, "Applications
/// using TresorKit", connection flood).
@Suite(.blocksItsThread, .serialized) struct ConnectionLimitTests {
    static let limit = 256

    @Test func aConnectionPastTheLimitWaitsUntilOneCloses() throws {
        let harness = try Harness.initialized(passcode: "e2e-flood-passcode")
        let socket = harness.paths.socket.path
        let request = RawConnection.Request(path: Route.keychains)
        var held: [RawConnection] = []
        for _ in 0..<Self.limit {
            let connection = try RawConnection(socket: socket)
            #expect(try connection.exchange([request]).first?.status == 200)
            held.append(connection)
        }
        let waiting = try RawConnection(socket: socket)
        try waiting.send(request)
        #expect(
            try waiting.answer(within: 1) == nil,
            "a connection past the limit was served; held connections the daemon closed: \(held.filter(\.isClosedByTheDaemon).count)")
        #expect(harness.daemonIsRunning)

        held.removeFirst()
        let answer = try waiting.answer(within: 10)
        #expect(answer?.status == 200, "the waiting connection was not served once one closed: \(String(describing: answer))")
        held.removeAll()
        #expect(try harness.tresor(["status"]).succeeded)
    }
}
