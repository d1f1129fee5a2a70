import TresorProtocol
import TresorSecretService

/// Where a socket-API application's read that needs the user is put to them: the desktop's own
/// prompter when the daemon answers on a desktop session's bus (``DesktopUnlock``, the passcode
/// typed there), falling back to a `tresor approve` waiting in a terminal (``ApprovalBroker``) —
/// as a Secret Service client's is.
struct PresenceQuestions: Sendable {
    let approvals: ApprovalBroker
    /// The desktop's prompter, when the daemon answers on a session bus.
    let desktop: @Sendable () -> DesktopUnlock?

    /// Whether anyone may be asked: a desktop session, or a `tresor approve` waiting.
    var anyoneToAsk: Bool { approvals.hasApprover || desktop() != nil }

    /// Puts `request` to the user.
    /// - Parameters:
    ///   - request: who asks for what, as `tresor approve` shows it.
    ///   - pid: the asking process, whose command line and parents the prompter shows.
    /// - Returns: whether the user allowed this one read.
    func ask(_ request: ApprovalRequest, pid: Int32) async -> Bool {
        guard let desktop = desktop() else { return await approvals.ask(request) }
        let answer = await desktop.approve(
            executable: request.executable, application: request.application, item: request.item, requester: PresenceRequester(pid: pid),
            mayRemember: false, withdrawal: PromptWithdrawal(), fallback: approvals.askUser)
        switch answer {
        case .once, .forSession: return true
        case .refused, .nobodyToAsk: return false
        }
    }
}
