import FoundationEssentials
import TresorProtocol

// `tresor approve` (the `tresor` CLI only): applications waiting for the user's presence.
extension TresorClient {
    /// The next application waiting for the user, or nil when none came within `waitSeconds`.
    /// - Parameter waitSeconds: how long to wait for one, 1 to 60; the daemon keeps the
    ///   connection open meanwhile.
    /// - Returns: the request — the application, its executable, the item and what it asks to
    ///   do with it — or nil.
    /// - Throws: `APIError` (`missingEntitlement` for any caller but a `tresor approve` in the
    ///   foreground of its terminal, `param` for a wait out of range).
    package func nextApproval(waitSeconds: Int) throws -> ApprovalRequest? {
        let response: NextApprovalResponse = try call("POST", Route.approvalsNext, NextApprovalRequest(waitSeconds: waitSeconds))
        return response.request
    }

    /// Allows request `id` with the passcode, or refuses it (`passcode` nil); `rememberSeconds`
    /// remembers an allowed generic Secret Service client for this session that long.
    /// - Parameters:
    ///   - id: the request, from ``nextApproval(waitSeconds:)``.
    ///   - passcode: the keybag passcode to allow it, or nil to refuse it.
    ///   - rememberSeconds: 1 s to 366 days, or nil to allow this one request only.
    /// - Throws: `APIError` (`authFailed` for a wrong passcode, counted as at unlock; `notFound`
    ///   when the application stopped waiting; `param` for `rememberSeconds` out of range).
    package func answerApproval(_ id: String, passcode: String?, rememberSeconds: Int? = nil) throws {
        try callExpectingNoContent(
            "POST", Route.approvalsAnswer, ApprovalAnswer(id: id, allow: passcode != nil, passcode: passcode, rememberSeconds: rememberSeconds))
    }
}
