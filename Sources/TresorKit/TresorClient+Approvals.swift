import FoundationEssentials
import TresorProtocol

// `tresor approve` (the `tresor` CLI only): applications waiting for the user's presence.
extension TresorClient {
    /// The next application waiting for the user, or nil when none came within `waitSeconds`.
    package func nextApproval(waitSeconds: Int) throws -> ApprovalRequest? {
        let response: NextApprovalResponse = try call("POST", Route.approvalsNext, NextApprovalRequest(waitSeconds: waitSeconds))
        return response.request
    }

    /// Allows request `id` with the passcode, or refuses it (`passcode` nil); `rememberSeconds`
    /// remembers an allowed generic Secret Service client for this session that long.
    package func answerApproval(_ id: String, passcode: String?, rememberSeconds: Int? = nil) throws {
        try callExpectingNoContent(
            "POST", Route.approvalsAnswer, ApprovalAnswer(id: id, allow: passcode != nil, passcode: passcode, rememberSeconds: rememberSeconds))
    }
}
