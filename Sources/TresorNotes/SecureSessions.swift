import Crypto
import Foundation

/// The open secure sessions (docs/API.md, "Locked notes and secure sessions"): for each passphrase
/// (generation or imported passphrase) entered recently, its derived key and when it was last used.
/// Held in memory only; ending a session drops the key (`SymmetricKey` zeroes its storage when
/// freed).
struct SecureSessions {
    private struct Session {
        var key: SymmetricKey
        var lastUsed: Date
    }

    private var sessions: [Int64: Session] = [:]

    /// The key of passphrase `id` if its session is open and not idle past `timeout`;
    /// using it counts as activity.
    mutating func key(for id: Int64, now: Date, timeout: TimeInterval) -> SymmetricKey? {
        guard let session = sessions[id] else { return nil }
        guard now.timeIntervalSince(session.lastUsed) < timeout else {
            sessions[id] = nil
            return nil
        }
        sessions[id]?.lastUsed = now
        return session.key
    }

    func isOpen(_ id: Int64, now: Date, timeout: TimeInterval) -> Bool {
        guard let session = sessions[id] else { return false }
        return now.timeIntervalSince(session.lastUsed) < timeout
    }

    mutating func open(_ id: Int64, key: SymmetricKey, now: Date) {
        sessions[id] = Session(key: key, lastUsed: now)
    }

    mutating func end(_ id: Int64) { sessions[id] = nil }

    /// Lock Now: every session ends. Returns how many were open.
    @discardableResult
    mutating func endAll() -> Int {
        let count = sessions.count
        sessions.removeAll()
        return count
    }

    /// Ends the sessions idle for `timeout` or longer; returns how many.
    mutating func expire(now: Date, timeout: TimeInterval) -> Int {
        let idle = sessions.filter { now.timeIntervalSince($0.value.lastUsed) >= timeout }.map(\.key)
        for id in idle { sessions[id] = nil }
        return idle.count
    }

    var count: Int { sessions.count }
}
