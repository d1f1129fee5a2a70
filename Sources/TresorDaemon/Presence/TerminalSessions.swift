import Foundation
import Synchronization
import TresorKeybag
import TresorProtocol
import TresorSystem

/// Terminals where the user proved their presence with the passcode (`tresor unlock --for`),
/// like sudo's timestamp: until the session ends, the `tresor` tool run from that terminal
/// reveals secrets without asking again (docs/SECURITY.md, "Terminal sessions").
///
/// A session is bound to the terminal's kernel session and its leader's start time
/// (``ControllingTerminal``), to one keychain, and to that keychain's current unlocked period:
/// it ends when it expires, when the keybag locks (`tresor lock`, auto-lock) and when the
/// passcode changes — whichever comes first. Sessions live in the daemon's memory only.
final class TerminalSessions: Sendable {
    private struct Key: Hashable {
        var keychain: String
        var terminal: ControllingTerminal
    }

    private struct Session {
        var expires: ContinuousClock.Instant
        var expiresAt: Date
        var period: UnlockPeriod
    }

    private let sessions = Mutex<[Key: Session]>([:])

    /// Opens (or renews) the session of `terminal` for `keychain`, for `seconds`, tied to the
    /// keybag's `period`.
    func open(keychain: String, terminal: ControllingTerminal, seconds: Int, period: UnlockPeriod) {
        let session = Session(expires: .now + .seconds(seconds), expiresAt: Date().addingTimeInterval(TimeInterval(seconds)), period: period)
        sessions.withLock { $0[Key(keychain: keychain, terminal: terminal)] = session }
    }

    /// Whether `terminal` has an open session for `keychain` whose keybag is still in `period`
    /// (its current unlocked period; nil while it is locked). A session found over is dropped.
    func isOpen(keychain: String, terminal: ControllingTerminal, period: UnlockPeriod?) -> Bool {
        let key = Key(keychain: keychain, terminal: terminal)
        return sessions.withLock { sessions in
            guard let session = sessions[key] else { return false }
            guard session.expires > .now, session.period == period else {
                sessions[key] = nil
                return false
            }
            return true
        }
    }

    /// The open sessions, for `tresor status`. `period` gives each keychain's current unlocked
    /// period; sessions that are over are dropped, not listed.
    func list(period: (String) -> UnlockPeriod?) -> [TerminalSessionInfo] {
        sessions.withLock { sessions in
            sessions = sessions.filter { $0.value.expires > .now && $0.value.period == period($0.key.keychain) }
            return sessions.map {
                TerminalSessionInfo(keychain: $0.key.keychain, terminal: $0.key.terminal.name, expires: $0.value.expiresAt.timeIntervalSince1970)
            }
            .sorted { ($0.keychain, $0.terminal) < ($1.keychain, $1.terminal) }
        }
    }
}
