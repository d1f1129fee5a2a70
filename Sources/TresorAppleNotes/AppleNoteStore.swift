import Foundation

/// Apple Notes' database, NoteStore.sqlite (in
/// `~/Library/Group Containers/group.com.apple.notes/` on a Mac), read from possibly hostile input.
public enum AppleNoteStore {
    /// Reads a NoteStore.sqlite: its accounts, folders and notes (unlocked notes as text,
    /// locked notes still encrypted, with their crypto fields).
    ///
    /// The file is opened read-only and immutable: nothing is written to it and no `-wal` or
    /// `-shm` file is created beside it. A note that cannot be read (damaged body, wrong
    /// column types, invalid crypto fields, over a limit) lands in
    /// ``AppleNotesLibrary/skipped`` with the reason, and the others are read regardless.
    ///
    /// - Throws: ``AppleNotesError``: ``AppleNotesError/notANoteStore(_:)`` for a file that is
    ///   not SQLite (or empty), ``AppleNotesError/missingTable(_:)`` and
    ///   ``AppleNotesError/missingColumn(_:)`` for a database without what every NoteStore
    ///   has, ``AppleNotesError/damagedDatabase(_:)`` when SQLite fails reading the tables,
    ///   ``AppleNotesError/tooLarge(_:)`` past ``AppleNotesLimits/maxNotes``.
    public static func read(at url: URL, limits: AppleNotesLimits = .default) throws -> AppleNotesLibrary {
        var library = try NoteStoreConnection.read(url) { db throws(AppleNotesError) in
            try NoteStoreReader(db: db, schema: NoteStoreSchema(db), limits: limits).read()
        }
        library.unreadWriteAheadLog = NoteStoreConnection.hasUnreadWriteAheadLog(url)
        return library
    }
}
