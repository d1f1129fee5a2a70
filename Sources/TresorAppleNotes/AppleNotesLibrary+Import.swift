import TresorModel

extension AppleNotesLibrary {
    /// The library as Tresor imports it: every note an import record in a folder named as in
    /// Apple Notes (unlocked notes as text, locked ones with Apple's crypto fields as they are),
    /// and one line for each note that could not be read.
    public var importReading: AppleNotesReading {
        let folderTitles = Dictionary(folders.map { ($0.id, $0.title) }, uniquingKeysWith: { first, _ in first })
        let records = notes.map { note in
            let content: NoteImport.Content
            switch note.content {
            case .text(let text): content = .text(text)
            case .locked(let locked): content = .appleLocked(locked)
            }
            let folder = note.folderID.flatMap { folderTitles[$0] }.flatMap { $0.isEmpty ? nil : $0 }
            return NoteImport(title: note.title, folder: folder, created: note.created, modified: note.modified, content: content)
        }
        return AppleNotesReading(
            notes: records, unreadable: skipped.map { "note \($0.id) in the Apple database: \($0.reason)" },
            unreadWriteAheadLog: unreadWriteAheadLog)
    }
}
