import Foundation

/// Sharing an unlocked note with other accounts of the same store — ``WebStore``'s sharing area.
public protocol SharingStore: Sendable {
    /// Shares note `id` with the account that signs in as `name` (the owner only; not a locked
    /// note). The note's revision counts up (sharing it with a participant again changes nothing).
    /// - Parameters:
    ///   - id: the note.
    ///   - name: the participant's login name.
    ///   - owner: who shares.
    /// - Returns: the note's owner and participants now.
    /// - Throws: ``NotesError/notFound(_:)`` for an unknown name, ``NotesError/wrongLockState(_:)``,
    ///   ``NotesError/invalid(_:)`` (itself, too many).
    func share(note id: String, with name: String, by owner: AccountID) async throws -> ShareInfo

    /// Removes `name` from note `id`'s participants: the owner removes anyone, a participant
    /// only themself. The note's revision counts up.
    /// - Parameters:
    ///   - id: the note.
    ///   - name: the participant's login name.
    ///   - account: who asks.
    /// - Throws: ``NotesError/notFound(_:)``, ``NotesError/forbidden(_:)``.
    func unshare(note id: String, participant name: String, by account: AccountID) async throws
}
