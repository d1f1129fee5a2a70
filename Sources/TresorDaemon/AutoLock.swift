import Foundation
import Synchronization
import TresorProtocol

/// Locks the keybag after a period without client activity, unless a client holds it off
/// for a stated reason (docs/API.md, "Auto-lock and holds"). Holds end when their connection
/// closes.
final class AutoLock: Sendable {
    let idleLimit: Duration?
    private let state: Mutex<State>

    private struct State {
        var lastActivity = ContinuousClock.now
        /// What reset the idle clock last, in the user's words (`tresor status` shows it).
        var lastActivityBy = "the daemon's start"
        var holds: [String: (hold: Hold, connection: ConnectionID)] = [:]
    }

    /// - Parameter idleSeconds: 0 disables auto-lock.
    init(idleSeconds: Int) {
        idleLimit = idleSeconds > 0 ? .seconds(idleSeconds) : nil
        state = Mutex(State())
    }

    /// Records client activity: the idle period starts again.
    /// - Parameter activity: what it was, in the user's words ("secret-tool read a secret").
    func touch(by activity: String) {
        state.withLock {
            $0.lastActivity = .now
            $0.lastActivityBy = activity
        }
    }

    /// What reset the idle clock last.
    var lastActivity: String { state.withLock { $0.lastActivityBy } }

    var idleSeconds: Int {
        let idle = ContinuousClock.now - state.withLock { $0.lastActivity }
        return Int(idle.components.seconds)
    }

    var holds: [Hold] { state.withLock { $0.holds.values.map(\.hold).sorted { $0.since < $1.since } } }

    func addHold(reason: String, client: ClientDescription, connection: ConnectionID) -> Hold {
        let hold = Hold(
            id: UUID().uuidString.lowercased(), reason: reason, client: client, since: Date().timeIntervalSince1970)
        state.withLock { $0.holds[hold.id] = (hold, connection) }
        return hold
    }

    /// Ends a hold; only the connection that made it may end it early.
    func removeHold(id: String, connection: ConnectionID) -> Bool {
        state.withLock { state in
            guard state.holds[id]?.connection == connection else { return false }
            state.holds[id] = nil
            return true
        }
    }

    /// Whether `connection` made a hold that still runs: closing it would end the hold.
    func holdsOpen(_ connection: ConnectionID) -> Bool {
        state.withLock { $0.holds.values.contains { $0.connection == connection } }
    }

    func connectionClosed(_ connection: ConnectionID) {
        state.withLock { state in
            let before = state.holds.count
            state.holds = state.holds.filter { $0.value.connection != connection }
            // Ending a hold restarts the idle period rather than locking at once; any other
            // closing connection (a status poll) is no activity.
            if state.holds.count != before {
                state.lastActivity = .now
                state.lastActivityBy = "a hold ended"
            }
        }
    }

    /// Checks once a second until cancelled; calls `lock` when the idle limit passes with no hold.
    func run(lock: @Sendable () async -> Void) async {
        guard let idleLimit else { return }
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(250))
            let due = state.withLock { state in
                state.holds.isEmpty && ContinuousClock.now - state.lastActivity >= idleLimit
            }
            if due {
                await lock()
                touch(by: "the auto-lock")  // one lock per idle period, not one per tick
            }
        }
    }
}
