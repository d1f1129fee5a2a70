import Foundation

/// A note as a device's sync reads it (docs/SYNC.md, "Notes"): its summary, its body (nil for a
/// locked note, whose body travels sealed) and its attachments.
public struct SyncedNoteRead: Sendable, Equatable {
    public var summary: NoteSummary
    public var body: String?
    public var attachments: [AttachmentInfo]
    /// The ids of its attachments stored sealed under the note key — as each is stored, not as
    /// the note is now: one sent before its note's lock travelled is stored as it came.
    public var sealedAttachmentIDs: Set<String>

    public init(summary: NoteSummary, body: String?, attachments: [AttachmentInfo], sealedAttachmentIDs: Set<String>) {
        self.summary = summary
        self.body = body
        self.attachments = attachments
        self.sealedAttachmentIDs = sealedAttachmentIDs
    }
}

/// Reading a page of notes for the devices' sync at once (the server's store): a page of a
/// first sync holds hundreds of notes, read in a few queries rather than several per note.
public protocol SyncedNotesReader: Sendable {
    /// The notes `ids`, each as a device's sync reads it; a note that does not exist is left out.
    /// - Parameter ids: note ids.
    /// - Returns: the notes found, by id.
    /// - Throws: ``NotesError/unavailable(_:)``, ``NotesError/damaged(_:)``.
    func syncedNotes(_ ids: [String]) async throws -> [String: SyncedNoteRead]
}
