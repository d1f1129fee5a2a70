// Fuzzes AppleNoteStore.read (TresorAppleNotes): a NoteStore.sqlite from a hostile source.
// SQLite itself, opened read-only and immutable with a hardened configuration; the schema
// lookup (tables, views, generated columns, PRAGMA table_xinfo); the typed reading of every
// row; the crypto-field checks of locked notes; the bodies of unlocked notes.
//
// Input: the file, written as NoteStore.sqlite into a folder of its own.
//
// Properties besides "never crash": every error is an AppleNotesError; nothing is written
// beside the file and the file is unchanged; in a library, ids are unique and ascending, every
// folder and account reference names one of the library, every locked note has the shapes the
// reader promises, every text is within the inflate bound.
import Foundation
import FuzzSupport
import TresorAppleNotes

let limits = AppleNotesLimits(maxNotes: 10_000, maxNoteDataBytes: 1 << 20, maxDecompressedBytes: 1 << 20)

let folder = makeScratchFolder("notestore")
let file = folder.appendingPathComponent("NoteStore.sqlite")

func isAscending(_ ids: [Int64]) -> Bool { zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 } }

func check(_ library: AppleNotesLibrary) {
    guard isAscending(library.accounts.map(\.id)), isAscending(library.folders.map(\.id)),
        isAscending(library.notes.map(\.id)), isAscending(library.skipped.map(\.id))
    else { fuzzFailure("ids are not unique and ascending") }
    guard Set(library.notes.map(\.id)).isDisjoint(with: library.skipped.map(\.id)) else {
        fuzzFailure("a note is both read and skipped")
    }
    let accounts = Set(library.accounts.map(\.id))
    let folders = Set(library.folders.map(\.id))
    for folder in library.folders where folder.accountID.map({ !accounts.contains($0) }) ?? false {
        fuzzFailure("folder \(folder.id) names account \(folder.accountID!), which is not in the library")
    }
    for note in library.notes {
        if let folder = note.folderID, !folders.contains(folder) {
            fuzzFailure("note \(note.id) names folder \(folder), which is not in the library")
        }
        if let account = note.accountID, !accounts.contains(account) {
            fuzzFailure("note \(note.id) names account \(account), which is not in the library")
        }
        switch note.content {
        case .text(let text):
            guard text.utf8.count <= limits.maxDecompressedBytes else { fuzzFailure("note \(note.id) is over the inflate bound") }
        case .locked(let locked):
            guard !locked.salt.isEmpty, (1...limits.maxIterationCount).contains(locked.iterations),
                locked.wrappedKey.count == 24, locked.iv.count >= 12, locked.tag.count == 16,
                !locked.ciphertext.isEmpty, locked.ciphertext.count <= limits.maxNoteDataBytes
            else { fuzzFailure("locked note \(note.id) has fields of the wrong shape") }
        }
        for date in [note.created, note.modified].compactMap({ $0 }) where !date.timeIntervalSinceReferenceDate.isFinite {
            fuzzFailure("note \(note.id) has a non-finite date")
        }
    }
}

fuzz { data in
    writeFile(data, to: file)
    do {
        check(try AppleNoteStore.read(at: file, limits: limits))
    } catch is AppleNotesError {
        // A clear refusal is a fine outcome for a hostile file.
    } catch {
        fuzzFailure("AppleNoteStore.read threw something other than an AppleNotesError: \(error)")
    }
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    guard names == ["NoteStore.sqlite"] else { fuzzFailure("reading left files beside the database: \(names)") }
    guard (try? Data(contentsOf: file)) == data else { fuzzFailure("reading changed the database file") }
}
