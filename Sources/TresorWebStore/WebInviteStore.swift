import Foundation

/// Invites to register a web account (docs/WEB.md, "Registration"), kept hashed: in daemon
/// memory for one embedded daemon, in the database for a server (an invite made through one
/// instance is redeemed on another). An invite lasts ``lifetime`` or until used.
public protocol WebInviteStore: Sendable {
    /// Makes an invite for login name `name`, replacing an earlier one.
    /// - Parameters:
    ///   - name: the login name (case-folded).
    ///   - now: the time.
    /// - Returns: its code, to hand over once, and when it expires.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func issue(name: String, now: Date) async throws -> (code: String, expires: Date)

    /// Uses up the invite for `name` if `code` is it and it has not expired.
    /// - Parameters:
    ///   - name: the login name.
    ///   - code: what the person typed.
    ///   - now: the time.
    /// - Returns: whether it was the invite.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func redeem(name: String, code: String, now: Date) async throws -> Bool
}

/// How long an invite lasts.
public enum WebInviteLifetime {
    public static let seconds: TimeInterval = 7 * 24 * 3600
}
