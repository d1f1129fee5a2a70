/// What an account may do with a note it can see. Every route set that serves notes (the
/// daemon's socket API, the web server's `/api`) asks its store for the access
/// (`FoldersAndNotesStore.access(toNote:for:includingDeleted:)`) and checks the operation with
/// these rules, so the two cannot let a participant do different things.
public enum NoteAccess: Sendable, Equatable {
    /// Everything: edit, delete, lock, share.
    case owner
    /// A shared note's participant: read and edit title and body, leave.
    case participant

    /// Refuses a participant what only the owner may do: delete, restore, lock, re-wrap, share,
    /// attach and detach.
    /// - Throws: `NotesError.forbidden` for a participant.
    public func requireOwner() throws {
        guard self == .owner else { throw NotesError.forbidden("only the note's owner may do this") }
    }

    /// Refuses a participant an edit that pins the note or moves it between folders: a
    /// participant edits the title and the body; the pin and the folder are the owner's.
    /// - Parameters:
    ///   - pinning: whether the edit sets the pin.
    ///   - movingFolder: whether the edit moves the note into, out of or between folders.
    /// - Throws: `NotesError.forbidden` for a participant's pin or move.
    public func checkEdit(pinning: Bool, movingFolder: Bool) throws {
        guard self == .owner || !(pinning || movingFolder) else {
            throw NotesError.forbidden("only the owner pins a shared note or moves it between folders")
        }
    }
}
