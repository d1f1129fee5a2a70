import Foundation
import Testing
import TresorProtocol
@testable import TresorDaemon

/// Requests go only to an approver that is still the user when a request is handed over
/// (docs/SECURITY.md, "Who may approve").
@Suite struct ApprovalBrokerTests {
    static func request(_ id: String) -> ApprovalRequest {
        ApprovalRequest(id: id, application: "TESTP.app", executable: "/usr/bin/example", item: "genericPassword, example", created: 0)
    }

    /// An approver that went to the background while it waited is let go with nothing; the next
    /// approver that is the user gets the request.
    @Test func anApproverNoLongerTheUserIsPassedOver() async throws {
        let broker = ApprovalBroker()
        async let gone = broker.nextRequest(within: .seconds(20)) { false }
        while !broker.hasApprover { try await Task.sleep(for: .milliseconds(10)) }
        async let user = broker.nextRequest(within: .seconds(20)) { true }
        // Both wait before the request comes.
        try await Task.sleep(for: .milliseconds(200))
        async let answer = broker.ask(Self.request("r1"))
        #expect(await gone == nil, "the approver in the background saw nothing")
        let handed = await user
        #expect(handed?.id == "r1")
        #expect(broker.settle("r1", allowed: true))
        #expect(await answer)
    }

    /// With every waiting approver passed over, the request waits in the queue for the next one.
    @Test func withNobodyLeftTheRequestWaits() async throws {
        let broker = ApprovalBroker()
        async let gone = broker.nextRequest(within: .seconds(20)) { false }
        while !broker.hasApprover { try await Task.sleep(for: .milliseconds(10)) }
        async let answer = broker.ask(Self.request("r2"))
        #expect(await gone == nil)
        let next = await broker.nextRequest(within: .seconds(5)) { true }
        #expect(next?.id == "r2")
        #expect(broker.settle("r2", allowed: false))
        #expect(await answer == false)
    }
}
