import Foundation
import Synchronization
import TresorCrypto
import TresorNotesDomain
import TresorWebStore

/// The embedded daemon's web sessions, in its memory only: a daemon restart signs everyone out.
/// Tokens are kept as their SHA-256; the found digest is compared in constant time anyway.
public final class MemorySessionStore: WebSessionStore {
    /// Sessions at most; the least recently used is signed out to make room.
    public static let capacity = 4096

    public let lifetimes: SessionLifetimes
    private let sessions = Mutex<[Data: WebSession]>([:])

    /// - Parameter lifetimes: how long sessions last.
    public init(lifetimes: SessionLifetimes) {
        self.lifetimes = lifetimes
    }

    public func start(for account: WebAccount, client: WebSessionClient?, now: Date) async throws -> StartedSession {
        let started = SessionTokens.newSession(for: account, client: client, now: now)
        sessions.withLock { sessions in
            if sessions.count >= Self.capacity, let oldest = sessions.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
                sessions[oldest.key] = nil
            }
            sessions[started.session.tokenDigest] = started.session
        }
        return started
    }

    public func session(forToken token: String, originToken: String, now: Date) async throws -> WebSession? {
        guard SessionTokens.isWellFormed(token), SessionTokens.isWellFormed(originToken) else { return nil }
        let digest = SessionTokens.digest(token), originDigest = SessionTokens.digest(originToken)
        let lifetimes = self.lifetimes
        return sessions.withLock { sessions in
            guard var session = sessions[digest], ConstantTime.equals(session.tokenDigest, digest),
                ConstantTime.equals(session.originTokenDigest, originDigest)
            else { return nil }
            guard lifetimes.isLive(created: session.created, lastUsed: session.lastUsed, now: now) else {
                sessions[digest] = nil
                return nil
            }
            session.lastUsed = now
            sessions[digest] = session
            return session
        }
    }

    public func end(_ selection: SessionSelection) async throws -> Int {
        sessions.withLock { sessions in
            let ended = sessions.filter { Self.selects(selection, $0.value) }.map(\.key)
            for key in ended { sessions[key] = nil }
            return ended.count
        }
    }

    static func selects(_ selection: SessionSelection, _ session: WebSession) -> Bool {
        switch selection {
        case .id(let id): return session.id == id
        case .all: return true
        case .account(let account, let except): return session.account.id == account && session.id != except
        case .localAccount: return session.account.isLocal
        }
    }

    public func list(now: Date) async throws -> [WebSession] {
        let lifetimes = self.lifetimes
        return sessions.withLock { sessions in sessions.values.filter { lifetimes.isLive(created: $0.created, lastUsed: $0.lastUsed, now: now) } }
            .sorted { ($0.created, $0.id) < ($1.created, $1.id) }
    }

    public func reportSecureSession(_ session: WebSession, open: Bool, now: Date) async throws {
        sessions.withLock { $0[session.tokenDigest]?.secureSessionReported = open ? now : nil }
    }

    public func secureSessionOpen(of session: WebSession, now: Date) async throws -> Bool {
        let lifetimes = self.lifetimes
        return sessions.withLock { sessions in
            guard let current = sessions[session.tokenDigest], lifetimes.isLive(created: current.created, lastUsed: current.lastUsed, now: now)
            else { return false }
            return lifetimes.secureSessionCounts(reported: current.secureSessionReported, now: now)
        }
    }

    public func forgetSecureSessions() async throws {
        sessions.withLock { sessions in
            for key in sessions.keys where sessions[key]?.secureSessionReported != nil {
                sessions[key]?.secureSessionReported = nil
            }
        }
    }

    public func removeExpired(now: Date) async throws -> Int {
        let lifetimes = self.lifetimes
        return sessions.withLock { sessions in
            let expired = sessions.filter { !lifetimes.isLive(created: $0.value.created, lastUsed: $0.value.lastUsed, now: now) }.map(\.key)
            for key in expired { sessions[key] = nil }
            return expired.count
        }
    }

    public func liveSessions(among digests: [Data], now: Date) async throws -> Set<Data> {
        let lifetimes = self.lifetimes
        return sessions.withLock { sessions in
            Set(
                digests.filter { digest in
                    sessions[digest].map { lifetimes.isLive(created: $0.created, lastUsed: $0.lastUsed, now: now) } ?? false
                })
        }
    }
}
