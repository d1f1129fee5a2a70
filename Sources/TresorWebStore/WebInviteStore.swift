import Foundation

/// One-time codes for a login name, kept hashed: invites to register a web account (docs/WEB.md,
/// "Registration") and codes to set a new password for one ("A forgotten password") — one store
/// for each ``WebInvitePurpose``, so no code of one opens the other. In daemon memory for one
/// embedded daemon, in the database for a server (a code made through one instance is redeemed
/// on another). A code lasts its purpose's ``WebInvitePurpose/lifetime`` or until used.
public protocol WebInviteStore: Sendable {
    /// Makes a code for login name `name`, replacing an earlier one.
    /// - Parameters:
    ///   - name: the login name (case-folded).
    ///   - now: the time.
    /// - Returns: its code, to hand over once, and when it expires.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func issue(name: String, now: Date) async throws -> (code: String, expires: Date)

    /// Uses up the code for `name` if `code` is it and it has not expired.
    /// - Parameters:
    ///   - name: the login name.
    ///   - code: what the person typed.
    ///   - now: the time.
    /// - Returns: whether it was the code.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func redeem(name: String, code: String, now: Date) async throws -> Bool
}

/// What a one-time code of a ``WebInviteStore`` lets its holder do with its login name.
public enum WebInvitePurpose: Sendable {
    /// Register it (`tresor web invite NAME`).
    case registration
    /// Set a new password for the account of that name (`tresor web reset-password NAME`).
    case passwordReset

    /// How long a code lasts: an invite a week; a password reset a day, since it opens an
    /// account that exists.
    public var lifetime: TimeInterval {
        switch self {
        case .registration: 7 * 24 * 3600
        case .passwordReset: 24 * 3600
        }
    }
}
