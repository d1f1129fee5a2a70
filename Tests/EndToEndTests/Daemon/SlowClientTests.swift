import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// Clients of the user's that stall halfway through a request — in its head, in its body — hold
/// their own connection and nothing else: other clients are served meanwhile, and each stalled
/// request, once finished, is answered (docs/SECURITY.md, "The Unix socket").
@Suite(.blocksItsThread, .serialized) struct SlowClientTests {
    @Test func aClientStalledMidRequestHoldsOnlyItsOwnConnection() throws {
        let harness = try Harness.initialized(passcode: "e2e-slow-client-passcode")
        let socket = harness.paths.socket.path
        let status = RawConnection.bytes(of: .init(path: Route.status))
        let hold = RawConnection.bytes(
            of: .init(method: "POST", path: Route.holds, body: try JSONEncoder().encode(["reason": "a slow client's hold"])))
        // One stops inside the head, the other inside the body.
        let inHead = try RawConnection(socket: socket)
        try inHead.send(bytes: Array(status.prefix(20)))
        let inBody = try RawConnection(socket: socket)
        try inBody.send(bytes: Array(hold.dropLast(8)))

        #expect(try harness.tresor(["status"]).succeeded)
        #expect(try RawConnection.get(Route.status, socket: socket).status == 200)
        #expect(try inHead.answer(within: 0.5) == nil)
        #expect(try inBody.answer(within: 0.5) == nil)

        try inHead.send(bytes: Array(status.dropFirst(20)))
        #expect(try inHead.answer(within: 10)?.status == 200)
        try inBody.send(bytes: Array(hold.suffix(8)))
        let held = try #require(try inBody.answer(within: 10))
        #expect(held.status == 200)
        #expect(try JSONDecoder().decode(Hold.self, from: held.body).reason == "a slow client's hold")
        #expect(harness.daemonIsRunning)
    }
}
