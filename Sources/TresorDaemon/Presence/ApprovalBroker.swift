import Foundation
import Synchronization
import TresorModel
import TresorProtocol
import TresorSecretService
import TresorSystem

/// Asks the user — through `tresor approve`, waiting in their terminal — whether an application
/// may have a secret that needs the user's presence, so the application never collects the
/// passcode itself (docs/API.md, "Approvals"). The application learns yes or no.
///
/// An approver is a `tresor approve` process asking for the next request
/// (``nextRequest(within:isUser:)``); it is *present* while it waits, and while a request it took
/// is unanswered (it is asking the user). Without a present approver, nobody is asked and the
/// application gets `passcodeRequired` at once, as before. A request goes only to an approver
/// that is still the user when it is handed over — in the foreground of its terminal
/// (``ApprovalRoutes``; docs/SECURITY.md, "Who may approve"): one that went to the background
/// while it waited is let go with nothing.
final class ApprovalBroker: Sendable {
    /// How long an application's request waits for the user's answer.
    static let answerTimeout: Duration = .seconds(45)

    private struct State {
        /// Requests no approver has taken yet (every one of them is in `asked`).
        var queued: [ApprovalRequest] = []
        /// Every unanswered request's waiting application, by request id.
        var asked: [String: CheckedContinuation<Bool, Never>] = [:]
        /// `tresor approve` processes waiting for a request, by the id of their wait, each with
        /// how to tell whether it is still the user.
        var approvers: [WaitingApprover] = []
        /// How long the user said to remember an allowed request, by request id ("for this session").
        var remembered: [String: TimeInterval] = [:]
    }

    private struct WaitingApprover {
        var wait: UUID
        var continuation: CheckedContinuation<ApprovalRequest?, Never>
        var isUser: @Sendable () -> Bool
    }

    private let state = Mutex(State())

    /// Whether a `tresor approve` is there to ask.
    var hasApprover: Bool {
        // Waiting for a request, or asking the user about one it took (asked but not queued).
        state.withLock { !$0.approvers.isEmpty || $0.asked.count > $0.queued.count }
    }

    /// Asks the user about `request`; true only when they allowed it (with the passcode) in time.
    func ask(_ request: ApprovalRequest) async -> Bool { await askRemembering(request).allowed }

    /// ``ask(_:)``, and how long the user said to remember it ("for this session"), if they did.
    func askRemembering(_ request: ApprovalRequest) async -> (allowed: Bool, rememberFor: TimeInterval?) {
        let allowed = await askOnce(request)
        return (allowed, state.withLock { $0.remembered.removeValue(forKey: request.id) })
    }

    private func askOnce(_ request: ApprovalRequest) async -> Bool {
        let id = request.id
        let timeout = Task { [weak self] in
            try await Task.sleep(for: Self.answerTimeout)
            self?.settle(id, allowed: false)
        }
        defer { timeout.cancel() }
        return await withCheckedContinuation { continuation in
            state.withLock { $0.asked[id] = continuation }
            hand(request)
        }
    }

    /// Gives `request` to the first waiting approver that is still the user, letting go with
    /// nothing each one that is not; queues it when none is left.
    private func hand(_ request: ApprovalRequest) {
        while true {
            let approver = state.withLock { state -> WaitingApprover? in
                // Settled meanwhile (timed out): nobody is to be asked any more.
                guard state.asked[request.id] != nil else { return nil }
                if state.approvers.isEmpty {
                    state.queued.append(request)
                    return nil
                }
                return state.approvers.removeFirst()
            }
            guard let approver else { return }
            // Read outside the lock: it reads /proc.
            if approver.isUser() {
                approver.continuation.resume(returning: request)
                return
            }
            approver.continuation.resume(returning: nil)
        }
    }

    /// The next request for the user, waiting up to `limit` for one; nil when none came, or
    /// when `isUser` said no as a request was about to be handed over.
    /// - Parameters:
    ///   - limit: how long to wait.
    ///   - isUser: whether the approver is still the user (asked again at each hand-over).
    func nextRequest(within limit: Duration, isUser: @escaping @Sendable () -> Bool) async -> ApprovalRequest? {
        let wait = UUID()
        return await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> ApprovalRequest? in
                // A request that timed out was taken off the queue when it was settled.
                if !state.queued.isEmpty { return state.queued.removeFirst() }
                state.approvers.append(WaitingApprover(wait: wait, continuation: continuation, isUser: isUser))
                return nil
            }
            if let ready {
                continuation.resume(returning: ready)
                return
            }
            Task { [weak self] in
                try? await Task.sleep(for: limit)
                self?.releaseApprover(wait)
            }
        }
    }

    /// Settles request `id`; an allowed one is remembered for `rememberFor` when its asker
    /// remembers (``askUser(executable:application:item:access:requester:mayRemember:withdrawal:)``).
    /// - Returns: false when no such request waits (answered, timed out).
    @discardableResult
    func settle(_ id: String, allowed: Bool, rememberFor: TimeInterval? = nil) -> Bool {
        let waiting = state.withLock { state in
            state.queued.removeAll { $0.id == id }
            let waiting = state.asked.removeValue(forKey: id)
            if waiting != nil, allowed, let rememberFor { state.remembered[id] = rememberFor }
            return waiting
        }
        waiting?.resume(returning: allowed)
        return waiting != nil
    }

    /// Ends an approver's wait with nothing, unless a request was handed to it meanwhile.
    private func releaseApprover(_ wait: UUID) {
        let waiting = state.withLock { state -> CheckedContinuation<ApprovalRequest?, Never>? in
            guard let index = state.approvers.firstIndex(where: { $0.wait == wait }) else { return nil }
            return state.approvers.remove(at: index).continuation
        }
        waiting?.resume(returning: nil)
    }
}

extension ApprovalBroker {
    /// The Secret Service's way in: a desktop client's read of a `userPresence` item, or a generic
    /// client's read or change, put to the user when a `tresor approve` is there to ask (no at
    /// once otherwise).
    /// - Parameters:
    ///   - executable: the client's executable.
    ///   - application: who Tresor knows it as (its group).
    ///   - item: the item, in words.
    ///   - access: what the client asks to do with it.
    ///   - requester: the process behind the client.
    ///   - mayRemember: a generic client, which `tresor approve --for-session` remembers.
    ///   - withdrawal: taken back when the client no longer waits: the request leaves
    ///     `tresor approve`, refused.
    /// - Returns: the user's answer: once, for this session, or no; nobody to ask without an approver.
    @Sendable func askUser(
        executable: String, application: String, item: String, access: SecretAccess, requester: PresenceRequester, mayRemember: Bool,
        withdrawal: PromptWithdrawal
    ) async -> PresenceAnswer {
        guard hasApprover else { return .nobodyToAsk }
        guard !withdrawal.isWithdrawn else { return .refused }
        let id = UUID().uuidString.lowercased()
        withdrawal.onWithdraw { [weak self] in self?.settle(id, allowed: false) }
        let (allowed, remembered) = await askRemembering(
            ApprovalRequest(
                id: id, application: application, executable: executable, item: item, access: access,
                created: Date().timeIntervalSince1970, processes: requester.pid.map { ProcessChain.of(pid: $0) },
                unverifiedIdentity: requester.unverified))
        guard allowed else { return .refused }
        return mayRemember ? remembered.map(PresenceAnswer.forSession) ?? .once : .once
    }
}
