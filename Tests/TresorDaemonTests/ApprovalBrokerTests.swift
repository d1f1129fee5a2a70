import Foundation
import Testing
import TresorProtocol

@testable import TresorDaemon

/// Requests go only to an approver that is still the user when a request is handed over
/// (docs/SECURITY.md, "Who may approve").
@Suite struct ApprovalBrokerTests {
    /// How long an approver waits for a request: far past a hand-over, even when the test
    /// process's threads are all busy with other suites for a while (an approver's wait is wall
    /// time, and one that ran out gets nothing).
    static let approverWait: Duration = .seconds(120)

    static func request(_ id: String) -> ApprovalRequest {
        ApprovalRequest(id: id, application: "TESTP.app", executable: "/usr/bin/example", item: "genericPassword, example", created: 0)
    }

    /// An approver that went to the background while it waited is let go with nothing; the next
    /// approver that is the user gets the request.
    @Test func anApproverNoLongerTheUserIsPassedOver() async throws {
        let broker = ApprovalBroker()
        async let gone = broker.nextRequest(within: Self.approverWait) { false }
        while !broker.hasApprover { try await Task.sleep(for: .milliseconds(10)) }
        async let user = broker.nextRequest(within: Self.approverWait) { true }
        // Both wait before the request comes, most likely; one that comes later finds it queued.
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
        async let gone = broker.nextRequest(within: Self.approverWait) { false }
        while !broker.hasApprover { try await Task.sleep(for: .milliseconds(10)) }
        async let answer = broker.ask(Self.request("r2"))
        #expect(await gone == nil)
        let next = await broker.nextRequest(within: Self.approverWait) { true }
        #expect(next?.id == "r2")
        #expect(broker.settle("r2", allowed: false))
        #expect(await answer == false)
    }
}
