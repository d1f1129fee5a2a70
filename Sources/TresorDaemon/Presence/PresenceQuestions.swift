import TresorModel
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

    /// What an application is told when nobody could be asked after all: the Secret Service's words.
    static let nobodyToAsk = "nobody could be asked: " + UnaskedPrompt.noPrompterOrApprover

    /// Puts a read to the user: in the desktop's prompter, which falls back to `tresor approve`,
    /// or in `tresor approve` (one ``ApprovalRequest``, made by ``ApprovalBroker/askUser(executable:application:item:access:requester:mayRemember:withdrawal:)``).
    /// - Parameters:
    ///   - executable: the application's executable.
    ///   - application: who Tresor knows it as (its default group).
    ///   - item: the item, in words.
    ///   - pid: the asking process, whose command line and parents the user is shown.
    /// - Returns: the user's answer: this one read allowed (``PresenceAnswer/once``), refused, or
    ///   nobody could be asked after all (the desktop's prompter gone, the approver left).
    func ask(executable: String, application: String, item: String, pid: Int32) async -> PresenceAnswer {
        let requester = PresenceRequester(pid: pid)
        if let desktop = desktop() {
            return await desktop.approve(
                executable: executable, application: application, item: item, access: .read, requester: requester, mayRemember: false,
                withdrawal: PromptWithdrawal(), fallback: approvals.askUser)
        }
        return await approvals.askUser(
            executable: executable, application: application, item: item, access: .read, requester: requester, mayRemember: false,
            withdrawal: PromptWithdrawal())
    }
}
