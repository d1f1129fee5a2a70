import Synchronization

/// How the provider takes back a question it put to the user, once nobody waits for the answer:
/// the client dismissed its prompt or left the bus, or the keybag was unlocked another way. The
/// asker (the desktop's prompter) closes its window then. Safe from any thread.
public final class PromptWithdrawal: Sendable {
    private struct State {
        var withdrawn = false
        var handlers: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Whether the question was taken back.
    public var isWithdrawn: Bool { state.withLock { $0.withdrawn } }

    /// Runs `handler` when the question is taken back — at once if it was already.
    /// - Parameter handler: closes what asks (a prompter's window); runs once, on the thread
    ///   that withdraws.
    public func onWithdraw(_ handler: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.withdrawn { return true }
            state.handlers.append(handler)
            return false
        }
        if now { handler() }
    }

    /// Takes the question back: every handler runs, once.
    func withdraw() {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.withdrawn else { return [] }
            state.withdrawn = true
            defer { state.handlers = [] }
            return state.handlers
        }
        handlers.forEach { $0() }
    }
}
