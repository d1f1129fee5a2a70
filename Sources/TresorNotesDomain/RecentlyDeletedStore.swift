import Foundation

/// Recently Deleted — ``WebStore``'s area for deleted notes, kept for
/// ``NoteRules/recentlyDeletedDays`` days, restored or deleted for good.
public protocol RecentlyDeletedStore: Sendable {
    /// Moves a note to Recently Deleted.
    /// - Parameter id: the note.
    /// - Throws: ``NotesError/invalid(_:)`` when it is there already.
    func moveToRecentlyDeleted(_ id: String) async throws

    /// Brings a note back from Recently Deleted.
    /// - Parameter id: the note.
    /// - Returns: its summary.
    /// - Throws: ``NotesError/invalid(_:)`` when it is not there.
    func restoreNote(_ id: String) async throws -> NoteSummary

    /// The account's notes in Recently Deleted, most recently deleted first.
    /// - Parameter account: the owner.
    /// - Returns: their summaries.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func recentlyDeleted(account: AccountID) async throws -> [NoteSummary]

    /// Deletes a note in Recently Deleted for good, with its attachments.
    /// - Parameter id: the note.
    /// - Throws: ``NotesError/invalid(_:)`` when it is not in Recently Deleted.
    func deleteForGood(_ id: String) async throws

    /// Deletes every note of `account` in Recently Deleted for good.
    /// - Parameter account: the owner.
    /// - Returns: how many.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func emptyRecentlyDeleted(account: AccountID) async throws -> Int

    /// Deletes for good the notes in Recently Deleted for ``NoteRules/recentlyDeletedDays`` days.
    /// - Returns: how many.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func deleteExpiredNotes() async throws -> Int
}
