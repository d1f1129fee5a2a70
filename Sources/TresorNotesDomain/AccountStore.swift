import Foundation

/// The web accounts a note store keeps — ``WebStore``'s accounts area: each signs in with a
/// password of which only a salted hash is kept (``PasswordHash``); the local account ("On My
/// Computer") is `local`.
public protocol AccountStore: Sendable {
    /// The fewest PBKDF2 rounds accepted for a passphrase made in the browser (and the rounds
    /// account passwords are hashed with).
    var minimumIterations: Int { get }

    /// Creates a web account and keeps only its password's salted hash.
    /// - Parameters:
    ///   - name: the login name as typed (case-folded; `local` is taken).
    ///   - password: the password.
    /// - Returns: the account.
    /// - Throws: ``NotesError/nameTaken(_:)``, ``NotesError/invalid(_:)``.
    func registerAccount(name: String, password: AccountPassword) async throws -> WebAccount

    /// The web account `name` when `password` is its password; nil otherwise (an unknown name
    /// costs the same KDF run as a known one).
    /// - Parameters:
    ///   - name: the login name.
    ///   - password: what was typed.
    /// - Returns: the account, or nil.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func authenticate(name: String, password: AccountPassword) async throws -> WebAccount?

    /// Whether `password` is web account `account`'s password.
    /// - Parameters:
    ///   - password: what was typed.
    ///   - account: the account.
    /// - Returns: true when it is.
    /// - Throws: ``NotesError/notFound(_:)``.
    func checkPassword(_ password: AccountPassword, account: AccountID) async throws -> Bool

    /// Replaces a web account's password when `current` is right (of changes made at once from
    /// one current password, exactly one is kept).
    /// - Parameters:
    ///   - account: the account.
    ///   - current: what was typed as the current password.
    ///   - new: the new password.
    /// - Returns: false, changing nothing, when `current` is wrong.
    /// - Throws: ``NotesError/notFound(_:)``, ``NotesError/invalid(_:)`` for the local account.
    func changePassword(account: AccountID, current: AccountPassword, to new: AccountPassword) async throws -> Bool

    /// Replaces a web account's password without the current one: the owner's password-reset
    /// code for it was given (docs/WEB.md, "A forgotten password").
    /// - Parameters:
    ///   - account: the account.
    ///   - new: the new password.
    /// - Throws: ``NotesError/notFound(_:)``, ``NotesError/invalid(_:)`` for the local account.
    func setPassword(account: AccountID, to new: AccountPassword) async throws

    /// The account that signs in as `name`, if any.
    /// - Parameter name: a login name.
    /// - Returns: the account, or nil.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func account(named name: String) async throws -> WebAccount?
}
