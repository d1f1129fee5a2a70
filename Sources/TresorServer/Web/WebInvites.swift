import Foundation
import Synchronization
import TresorCrypto

/// Invites to register a web account (docs/WEB.md, "Registration"): with the default
/// `"webRegistration": "invite"`, only the holder of an invite the owner made for a name
/// (`tresor web invite NAME`) registers that name. Nobody else learns anything from the server
/// about which names exist: every registration without the right invite gets the same
/// `403 forbidden`. Invites live in daemon memory, hashed, and last `lifetime` seconds or
/// until used or the daemon stops.
final class WebInvites: Sendable {
    static let lifetime: TimeInterval = 7 * 24 * 3600
    /// Invites kept at most; the oldest goes first.
    static let capacity = 256

    private struct Invite {
        var digest: Data
        var expires: Date
    }

    private let invites = Mutex<[String: Invite]>([:])

    /// A new invite for login name `name` (replacing an earlier one): its code, to hand over
    /// once, and when it expires.
    func issue(name: String, now: Date = Date()) -> (code: String, expires: Date) {
        let code = WebSessions.randomToken()
        let expires = now.addingTimeInterval(Self.lifetime)
        invites.withLock { invites in
            invites = invites.filter { $0.value.expires > now }
            if invites[name] == nil, invites.count >= Self.capacity, let oldest = invites.min(by: { $0.value.expires < $1.value.expires }) {
                invites[oldest.key] = nil
            }
            invites[name] = Invite(digest: WebSessions.digest(code), expires: expires)
        }
        return (code, expires)
    }

    /// Uses up the invite for `name` if `code` is it and it has not expired.
    func redeem(name: String, code: String, now: Date = Date()) -> Bool {
        let digest = WebSessions.digest(code)
        return invites.withLock { invites in
            guard let invite = invites[name], invite.expires > now, ConstantTime.equals(invite.digest, digest) else { return false }
            invites[name] = nil
            return true
        }
    }
}
