import Foundation
import Testing
import TresorAppleNotes
import TresorNotesDomain

@testable import TresorNotes

/// The full locked note from the issue (Apple Notes, passphrase "password", 20,000 rounds).
let appleVector = AppleLockedNote(
    salt: hex("1165106b6b288bda1e6ecb18e65c7876"), iterations: 20_000,
    wrappedKey: hex("98c0e56b43b507e60c5465ec5e1bb0c74b756f7d4f4a9bff"),
    iv: hex("151f64de7be34d15dacdaea9b33471f9"), tag: hex("806bf2bbd3bf83cf1240b03e7c4d6ab1"),
    ciphertext: hex(
        """
        131b03571fc9ec47ef58e58e21fce5c10aa73a62b9e58a743bcdcc3aff1ea8ab9964f4535b8597735f3da5f6ae63b9370625a20d633e9cf2986d4d118989124f0ddfee956e47cb5cbc3617c520b075620b37ae4056f3a1af83351fda634dfb446055c75f7143a5600149db333893c0ecb0ef3944e2a64542e9a4375bf152689858fed8b21aded0eab0afb11190
        """),
    hint: "the obvious one")

func hex(_ text: String) -> Data {
    let digits = Array(text.filter(\.isHexDigit))
    return Data(stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! })
}

@Suite("Importing notes")
struct ImportTests {
    /// A note from the other store's Recently Deleted lands in Recently Deleted — out of the
    /// lists and search, its 30 days from the import — and restores like any deleted note.
    @Test func aNoteFromRecentlyDeletedGoesToRecentlyDeleted() throws {
        let home = try NotesHome()
        let long = Date(timeIntervalSinceReferenceDate: 600_000_000)
        let report = try home.notes.importNotes([
            NoteImport(title: "Binned", folder: nil, created: long, modified: long, content: .text("Binned\nbinnedword"), inRecentlyDeleted: true),
            NoteImport(title: "Binned lock", folder: nil, created: long, modified: long, content: .appleLocked(appleVector), inRecentlyDeleted: true),
            NoteImport(title: "Kept", folder: "Imported", created: long, modified: long, content: .text("Kept\nkeptword"), isPinned: true),
        ])
        #expect(report == ImportReport(imported: 3, locked: 1, recentlyDeleted: 2))
        #expect(try home.notes.notes().map(\.title) == ["Kept"] && home.notes.notes().first?.isPinned == true)
        #expect(try home.notes.search("binnedword").isEmpty && home.notes.search("keptword").map(\.title) == ["Kept"])
        let binned = try home.notes.recentlyDeleted()
        #expect(Set(binned.map(\.title)) == ["Binned", "Binned lock"])
        for note in binned {
            let deleted = try #require(note.deleted)
            #expect(deleted == home.clock.now, "its 30 days start at the import, not at the note's dates")
        }
        #expect(try home.notes.deleteExpiredNotes() == 0)

        let restored = try home.notes.restoreNote(try #require(binned.first { $0.title == "Binned" }).id)
        #expect(try restored.deleted == nil && home.notes.search("binnedword").map(\.title) == ["Binned"])
        #expect(
            try home.notes.importNotes([
                NoteImport(title: "Binned", folder: nil, created: long, modified: long, content: .text("Binned\nbinnedword"), inRecentlyDeleted: true)
            ]).alreadyImported == 1)
    }

    /// What an older `tresor` sends (no `inRecentlyDeleted`) is a note outside Recently Deleted.
    @Test func aRecordWithoutThePlaceIsALiveNote() throws {
        let record = try JSONDecoder().decode(NoteImport.self, from: Data(#"{"title": "t", "content": {"text": {"_0": "x"}}}"#.utf8))
        #expect(record == NoteImport(title: "t", folder: nil, created: nil, modified: nil, content: .text("x")))
    }

    @Test func anAppleLockedNoteImportsStillLockedAndOpensWithItsApplePassphrase() throws {
        let home = try NotesHome()
        let created = Date(timeIntervalSinceReferenceDate: 700_000_000)
        let report = try home.notes.importNotes([
            NoteImport(title: "Encrypted title", folder: "Imported", created: created, modified: created, content: .appleLocked(appleVector)),
            NoteImport(title: "Plain", folder: "Imported", created: created, modified: nil, content: .text("Plain\n\nimported text")),
        ])
        #expect(report == ImportReport(imported: 2, locked: 1))
        let notes = try home.notes.notes(folder: "Imported")
        let locked = try #require(notes.first { $0.isLocked })
        #expect(locked.created == created && locked.lock?.source == .appleNotes && locked.lock?.isCurrent == false)

        let asked = #expect(throws: NotesError.self) { try home.notes.openNote(locked.id) }
        guard case .passphraseRequired(let info) = asked else { Issue.record("\(String(describing: asked))"); return }
        #expect(info.hint == "the obvious one")
        #expect(info.explanation.contains("imported from Apple Notes"))
        #expect(throws: NotesError.self) { try home.notes.openNote(locked.id, passphrase: passphrase("hashcat")) }
        #expect(
            try home.notes.openNote(locked.id, passphrase: passphrase("password")).body == "# Encrypted title\n\nEncrypted body",
            "Apple's Title style kept")
        #expect(try home.notes.search("imported").map(\.title) == ["Plain"])
        // The browser receives it as an Apple body, spelled as docs/WEB.md, "Shapes" has it; the
        // server's store reads its column's spelling to the same value.
        let record = try home.notes.lockedRecord(ofNote: locked.id)
        #expect(record.bodyFormat == .appleNotes && LockedBodyFormat(stored: "apple-notes") == .appleNotes)
        #expect(String(decoding: try JSONEncoder().encode(record.bodyFormat), as: UTF8.self) == #""appleNotes""#)

        // Re-wrapped under the current passphrase it opens with that one, still Apple-bodied.
        try home.notes.setPassphrase(passphrase("mine now"))
        try home.notes.rewrap(locked.id)
        home.notes.lockNow()
        #expect(
            try home.notes.openNote(locked.id, passphrase: passphrase("mine now")).body == "# Encrypted title\n\nEncrypted body",
            "Apple's Title style kept")
    }

    @Test func importingTwiceAddsNothingAndBadRecordsAreRefusedAlone() throws {
        let home = try NotesHome()
        var shortKey = appleVector
        shortKey.wrappedKey = shortKey.wrappedKey.prefix(16)
        var hostileRounds = appleVector
        hostileRounds.iterations = Int.max
        let batch = [
            NoteImport(title: "Good", folder: nil, created: nil, modified: nil, content: .appleLocked(appleVector)),
            NoteImport(title: "Short key", folder: nil, created: nil, modified: nil, content: .appleLocked(shortKey)),
            NoteImport(title: "Rounds", folder: nil, created: nil, modified: nil, content: .appleLocked(hostileRounds)),
        ]
        let first = try home.notes.importNotes(batch)
        #expect(first.imported == 1 && first.refused.count == 2)
        #expect(first.refused[0].contains("wrapped key is 16 bytes"))
        let second = try home.notes.importNotes(batch)
        #expect(second.imported == 0 && second.alreadyImported == 1)
        #expect(try home.notes.notes().count == 1)
    }

    /// A locked note may declare at most `LockedNoteCrypto.maximumIterations` rounds: each
    /// attempt to open it runs them all, so the bound is what such a note can cost the daemon.
    @Test(arguments: [(LockedNoteCrypto.maximumIterations, true), (LockedNoteCrypto.maximumIterations + 1, false)])
    func theRoundsAnImportedNoteDeclaresStopAtTheLimit(rounds: Int, imported: Bool) throws {
        let home = try NotesHome()
        var declared = appleVector
        declared.iterations = rounds
        let report = try home.notes.importNotes([
            NoteImport(title: "Rounds", folder: nil, created: nil, modified: nil, content: .appleLocked(declared))
        ])
        #expect(report.imported == (imported ? 1 : 0))
        #expect(report.refused.count == (imported ? 0 : 1))
        if !imported {
            #expect(report.refused.first?.contains("iteration count \(rounds) is outside 1…\(LockedNoteCrypto.maximumIterations)") == true)
        }
        #expect(try home.notes.notes().count == report.imported)
    }

    @Test func importedNotesSharingASaltShareOneSession() throws {
        let home = try NotesHome()
        _ = try home.notes.importNotes([
            NoteImport(title: "One", folder: nil, created: nil, modified: nil, content: .appleLocked(appleVector)),
            NoteImport(title: "Two", folder: nil, created: Date(timeIntervalSince1970: 5), modified: nil, content: .appleLocked(appleVector)),
        ])
        let ids = try home.notes.notes().map(\.id)
        _ = try home.notes.openNote(ids[0], passphrase: passphrase("password"))
        #expect(try home.notes.openNote(ids[1]).body.hasPrefix("# Encrypted title"))
    }
}
