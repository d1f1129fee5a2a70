import Foundation
import Synchronization
import TresorCrypto
import TresorWebStore

/// The embedded daemon's invites, or its password-reset codes, hashed in its memory: each lasts
/// its purpose's lifetime, until used, or until the daemon stops.
public final class MemoryInviteStore: WebInviteStore {
    /// Invites kept at most; the oldest goes first.
    public static let capacity = 256

    private struct Invite {
        var digest: Data
        var expires: Date
    }

    private let invites = Mutex<[String: Invite]>([:])
    private let lifetime: TimeInterval

    /// An empty store.
    /// - Parameter purpose: what its codes are for, which says how long they last.
    public init(_ purpose: WebInvitePurpose) {
        lifetime = purpose.lifetime
    }

    public func issue(name: String, now: Date) async throws -> (code: String, expires: Date) {
        let code = SessionTokens.random()
        let expires = now.addingTimeInterval(lifetime)
        invites.withLock { invites in
            invites = invites.filter { $0.value.expires > now }
            if invites[name] == nil, invites.count >= Self.capacity, let oldest = invites.min(by: { $0.value.expires < $1.value.expires }) {
                invites[oldest.key] = nil
            }
            invites[name] = Invite(digest: SessionTokens.digest(code), expires: expires)
        }
        return (code, expires)
    }

    public func redeem(name: String, code: String, now: Date) async throws -> Bool {
        let digest = SessionTokens.digest(code)
        return invites.withLock { invites in
            guard let invite = invites[name], invite.expires > now, ConstantTime.equals(invite.digest, digest) else { return false }
            invites[name] = nil
            return true
        }
    }
}
