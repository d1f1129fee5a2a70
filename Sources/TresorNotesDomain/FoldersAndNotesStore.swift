import Foundation

/// Folders and notes — ``WebStore``'s area for what an account keeps and finds: its folders, its
/// own notes and those shared with it, search, and saving an edit with its merge
/// (``ThreeWayMerge``).
public protocol FoldersAndNotesStore: Sendable {
    // MARK: Folders

    /// The account's folders, by name, each with its count of notes not deleted.
    /// - Parameter account: the owner.
    /// - Returns: the folders.
    /// - Throws: ``NotesError/unavailable(_:)``, ``NotesError/contentUnavailable``.
    func folders(account: AccountID) async throws -> [Folder]

    /// Creates a folder, or returns the one of that name.
    /// - Parameters:
    ///   - name: its name.
    ///   - account: the owner.
    /// - Returns: the folder.
    /// - Throws: ``NotesError/invalid(_:)``.
    func createFolder(named name: String, account: AccountID) async throws -> Folder

    /// Deletes a folder; its notes move out of it first (into no folder), in the same step, each
    /// announced as changed with its new revision, and the account's folders as `.folders`.
    /// - Parameters:
    ///   - id: the folder.
    ///   - account: the owner.
    /// - Throws: ``NotesError/notFound(_:)``.
    func deleteFolder(id: String, account: AccountID) async throws

    // MARK: Notes

    /// What `account` may do with note `id`: a note it may not see is `notFound` exactly as a
    /// missing one. A note in Recently Deleted is its owner's alone, and only with
    /// `includingDeleted` (otherwise `invalid`, "restore it first").
    /// - Parameters:
    ///   - id: the note.
    ///   - account: who asks.
    ///   - includingDeleted: whether a note in Recently Deleted is answered (to its owner).
    /// - Returns: owner or participant.
    /// - Throws: ``NotesError/notFound(_:)``, ``NotesError/invalid(_:)``.
    func access(toNote id: String, for account: AccountID, includingDeleted: Bool) async throws -> NoteAccess

    /// The account's own notes not deleted (or one folder's), pinned first, then most recently
    /// modified.
    /// - Parameters:
    ///   - account: the owner.
    ///   - folderID: a folder of the account, or nil for all.
    /// - Returns: their summaries.
    /// - Throws: ``NotesError/notFound(_:)`` for an unknown folder.
    func notes(account: AccountID, folderID: String?) async throws -> [NoteSummary]

    /// The notes others share with `account`, most recently modified first.
    /// - Parameter account: the participant.
    /// - Returns: their summaries.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func notesShared(with account: AccountID) async throws -> [NoteSummary]

    /// The account's notes whose title — or, for unlocked notes, body — holds every word of
    /// `text` (as word prefixes, case and diacritics ignored): those with more of the words in
    /// their title first, then the most recently modified, then by id (``SearchWords``).
    /// - Parameters:
    ///   - text: what was typed.
    ///   - account: the owner.
    /// - Returns: the matching notes' summaries.
    /// - Throws: ``NotesError/invalid(_:)`` for an empty or too long text, or one without a word.
    func search(_ text: String, account: AccountID) async throws -> [NoteSummary]

    /// The preview (``NoteRules/preview(body:title:matching:)``) of each unlocked note of `ids`.
    /// - Parameters:
    ///   - ids: the notes.
    ///   - query: a search's words, to preview the line each note matches on; none otherwise.
    /// - Returns: note id → preview (notes without one are left out).
    /// - Throws: ``NotesError/unavailable(_:)``.
    func previews(ofNotes ids: [String], matching query: [String]) async throws -> [String: String]

    /// One note's summary.
    /// - Parameter id: the note.
    /// - Returns: its summary.
    /// - Throws: ``NotesError/notFound(_:)``.
    func summary(ofNote id: String) async throws -> NoteSummary

    /// An unlocked note with its body and attachments.
    /// - Parameter id: the note.
    /// - Returns: the note.
    /// - Throws: ``NotesError/notFound(_:)``, ``NotesError/wrongLockState(_:)`` for a locked note.
    func openNote(_ id: String) async throws -> OpenedNote

    /// Creates an unlocked note (its folder, by name, created when missing).
    /// - Parameters:
    ///   - draft: title, body, folder, pin.
    ///   - account: the owner.
    ///   - quota: the owner's quota, when it has one.
    /// - Returns: its summary.
    /// - Throws: ``NotesError/invalid(_:)``, ``NotesError/quotaExceeded(_:)``.
    func createNote(_ draft: NoteDraft, account: AccountID, quota: StorageQuota?) async throws -> NoteSummary

    /// Saves an edit: merged with what changed since `changes.base`, or kept as a conflict
    /// copy (docs/FORMAT.md, "Revisions and merges"). A locked note's body is not saved here
    /// (``replaceLockedBody(ofNote:iv:tag:ciphertext:noteProof:passphraseProof:baseRevision:quota:)``).
    /// - Parameters:
    ///   - id: the note.
    ///   - changes: title, body, pin, folder and the revision they were made from.
    ///   - editor: who saves (names a conflict copy).
    ///   - quota: the owner's quota, for an edit that grows the note.
    /// - Returns: saved, merged or conflict copy.
    /// - Throws: ``NotesError/invalid(_:)``, ``NotesError/passphraseRequired(_:)`` for a new body of a locked note,
    ///   ``NotesError/quotaExceeded(_:)``.
    func saveNote(_ id: String, _ changes: NoteChanges, by editor: AccountID, quota: StorageQuota?) async throws -> NoteSaveOutcome
}
