/// Everything read from one NoteStore.sqlite: its accounts, folders and notes, plus the notes
/// that could not be read and why.
public struct AppleNotesLibrary: Sendable, Equatable {
    /// The accounts ("iCloud", "On My Mac"…), by ascending `Z_PK`.
    public var accounts: [AppleAccount]
    /// The folders, by ascending `Z_PK`.
    public var folders: [AppleFolder]
    /// The notes that were read, by ascending `Z_PK`.
    public var notes: [AppleNote]
    /// The notes that could not be read (damaged body, invalid crypto fields…), by ascending `Z_PK`.
    public var skipped: [AppleSkippedNote]
    /// True when a non-empty `-wal` file lies beside the database. The reader opens the
    /// database immutable, so that nothing is ever written beside the user's file, and
    /// therefore does not see changes still in the write-ahead log (Notes' latest edits).
    /// Quitting Notes before copying its database usually folds them in.
    public var unreadWriteAheadLog: Bool

    /// A library from its parts.
    public init(
        accounts: [AppleAccount] = [], folders: [AppleFolder] = [], notes: [AppleNote] = [],
        skipped: [AppleSkippedNote] = [], unreadWriteAheadLog: Bool = false
    ) {
        self.accounts = accounts
        self.folders = folders
        self.notes = notes
        self.skipped = skipped
        self.unreadWriteAheadLog = unreadWriteAheadLog
    }
}

/// A note the reader found but could not read; the other notes are read regardless.
public struct AppleSkippedNote: Sendable, Equatable {
    /// The note's `Z_PK` in ZICCLOUDSYNCINGOBJECT.
    public var id: Int64
    /// What was wrong. Never contains note content.
    public var error: AppleNotesError

    /// A skipped note from its id and error.
    public init(id: Int64, error: AppleNotesError) {
        self.id = id
        self.error = error
    }

    /// A sentence for people, e.g. "damaged note body: truncated gzip data".
    public var reason: String { error.description }
}
