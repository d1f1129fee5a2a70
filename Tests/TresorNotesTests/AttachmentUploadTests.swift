import Foundation
import Testing
import TresorNotesDomain

@testable import TresorNotes

/// Attachments added piece by piece as their bytes arrive (`NotesStore.beginAttachment`, what
/// the daemon's upload route uses): the same file as one append whatever the pieces, checks before
/// any byte, and nothing left behind by an upload that does not finish.
@Suite("Attachment uploads: piece by piece, refusals, nothing left behind")
struct AttachmentUploadTests {
    static let chunk = AttachmentFile.chunkByteCount

    func files(_ home: NotesHome) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: home.paths.attachmentsFolder.path).sorted()
    }

    func content(_ size: Int) -> Data {
        var bytes = Data(count: size)
        for index in stride(from: 0, to: size, by: 991) { bytes[index] = UInt8(truncatingIfNeeded: index / 991 + 1) }
        if size > 0 { bytes[size - 1] = 0xA5 }
        return bytes
    }

    /// Pieces of every awkward size — single bytes, one short of a chunk, exactly a chunk, more
    /// than two chunks at once, empty — give back every byte, locked and not, in a file exactly as
    /// long as the one a single append makes (so the chunks are cut at the same places).
    @Test(arguments: [
        [1, 1, chunk - 2, 1, chunk, 7],
        [chunk, chunk, 0, chunk],
        [2 * chunk + 3, 0, 65_536, 65_536, chunk - 131_075],
        [0],
        Array(repeating: 65_536, count: 40) + [12_345],
    ])
    func piecesOfAnySizeMakeTheSameAttachment(pieces: [Int]) throws {
        let home = try NotesHome()
        try home.notes.setPassphrase(passphrase("pp"))
        let plain = try home.notes.createNote(NoteDraft(title: "Plain", body: ""))
        let locked = try home.notes.createNote(NoteDraft(title: "Locked", body: ""))
        try home.notes.lockNote(locked.id)
        let bytes = content(pieces.reduce(0, +))
        for note in [plain, locked] {
            let upload = try home.notes.beginAttachment(to: note.id, kind: .image, name: "scan.png")
            var offset = 0
            for piece in pieces {
                try upload.append(bytes.subdata(in: offset..<offset + piece))
                offset += piece
            }
            #expect(upload.byteCount == bytes.count)
            let info = try upload.finish()
            #expect(info.byteCount == bytes.count && info.name == "scan.png" && info.kind == .image)
            #expect(try home.notes.attachment(info.id, of: note.id).1 == bytes)
            let whole = try home.notes.addAttachment(to: note.id, kind: .image, name: "whole.png", data: bytes)
            #expect(try fileSize(home, info.id) == fileSize(home, whole.id))
            #expect(throws: NotesError.self, "a finished upload takes no more bytes") { try upload.append(Data([1])) }
        }
    }

    /// An attachment added here dates its note; one fetched from the sync server does not: the
    /// note keeps the date the server gave it, and does not jump to the top of the list.
    @Test func aFetchedAttachmentLeavesItsNotesDate() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "Scans", body: ""))
        let dated = try home.notes.summary(ofNote: note.id).modified
        home.clock.advance(by: 3600)
        let fetched = try home.notes.beginSyncedAttachment(
            SyncedAttachment(id: UUID().uuidString.lowercased(), kind: .file, name: "fetched.bin", byteCount: 3), to: note.id)
        try fetched.append(Data([1, 2, 3]))
        _ = try fetched.finish()
        #expect(try home.notes.summary(ofNote: note.id).modified == dated, "fetching dated the note")
        _ = try home.notes.addAttachment(to: note.id, kind: .file, name: "added.bin", data: Data([4]))
        #expect(try home.notes.summary(ofNote: note.id).modified == dated.addingTimeInterval(3600), "adding one here dates it")
    }

    func fileSize(_ home: NotesHome, _ id: String) throws -> Int {
        let file = try home.notes.pool.read { db in try String.fetchOne(db, sql: "SELECT file FROM attachments WHERE id = ?", arguments: [id])! }
        return try Data(contentsOf: home.paths.attachmentsFolder.appendingPathComponent(file)).count
    }

    /// An upload abandoned, or dropped unfinished (a client that went away), leaves no file and
    /// no row; the note is as it was.
    @Test func anUnfinishedUploadLeavesNothing() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "Trip", body: "x"))
        try home.notes.addAttachment(to: note.id, kind: .image, name: "kept.png", data: Data([1, 2, 3]))
        let before = try files(home)

        let abandoned = try home.notes.beginAttachment(to: note.id, kind: .image, name: "a.png")
        try abandoned.append(content(2 * Self.chunk + 5))
        #expect(try files(home).count == before.count + 1, "the chunks are on disk while the upload runs")
        abandoned.abandon()
        #expect(try files(home) == before)
        #expect(throws: NotesError.self) { try abandoned.append(Data([1])) }
        #expect(throws: NotesError.self) { try abandoned.finish() }

        do {
            let dropped = try home.notes.beginAttachment(to: note.id, kind: .image, name: "d.png")
            try dropped.append(content(Self.chunk + 1))
        }
        #expect(try files(home) == before)
        #expect(try home.notes.openNote(note.id).attachments.map(\.name) == ["kept.png"])
    }

    /// More than the limit is refused as the bytes arrive, and what was written is removed.
    @Test func anUploadPastTheLimitIsRefusedAndLeavesNothing() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "Big", body: ""))
        let upload = try home.notes.beginAttachment(to: note.id, kind: .file, name: "film.mov")
        try upload.append(content(Self.chunk + 1))
        // Zero pages the limit check refuses before touching them.
        let rest = Data(count: NoteLimits.attachmentBytes - Self.chunk)
        #expect(throws: NotesError.invalid("attachment \"film.mov\" is larger than \(NoteLimits.attachmentBytes) bytes")) {
            try upload.append(rest)
        }
        #expect(try files(home).isEmpty)
        #expect(throws: NotesError.self) { try upload.finish() }
        #expect(try home.notes.openNote(note.id).attachments.isEmpty)
    }

    /// A note locked while its upload ran would get chunks sealed for the wrong state: `finish`
    /// refuses them and keeps nothing.
    @Test func aNoteLockedDuringTheUploadRefusesIt() throws {
        let home = try NotesHome()
        try home.notes.setPassphrase(passphrase("pp"))
        let note = try home.notes.createNote(NoteDraft(title: "Plans", body: "x"))
        let upload = try home.notes.beginAttachment(to: note.id, kind: .image, name: "p.png")
        try upload.append(content(Self.chunk + 9))
        try home.notes.lockNote(note.id)
        #expect(throws: NotesError.self) { try upload.finish() }
        #expect(try files(home).isEmpty)
        #expect(try home.notes.openNote(note.id).attachments.isEmpty)
    }

    /// What adding an attachment checks is checked before any byte: a name that is not one, a
    /// kind a locked note cannot hold, a locked note whose session is closed.
    @Test func refusalsComeBeforeAnyByte() throws {
        let home = try NotesHome()
        try home.notes.setPassphrase(passphrase("pp"))
        let note = try home.notes.createNote(NoteDraft(title: "Locked", body: "x"))
        try home.notes.lockNote(note.id)
        #expect(throws: NotesError.self) { try home.notes.beginAttachment(to: note.id, kind: .image, name: "../up.png") }
        #expect(throws: NotesError.attachmentNotLockable(name: "song.mp3", kind: .audio)) {
            try home.notes.beginAttachment(to: note.id, kind: .audio, name: "song.mp3")
        }
        home.notes.lockNow()
        #expect(throws: NotesError.self) { try home.notes.beginAttachment(to: note.id, kind: .image, name: "a.png") }
        #expect(throws: NotesError.self) { try home.notes.beginAttachment(to: "no-such-note", kind: .image, name: "a.png") }
        #expect(try files(home).isEmpty)
        let opened = try home.notes.beginAttachment(to: note.id, kind: .image, name: "a.png", passphrase: passphrase("pp"))
        try opened.append(Data("image".utf8))
        let info = try opened.finish()
        #expect(try home.notes.attachment(info.id, of: note.id, passphrase: passphrase("pp")).1 == Data("image".utf8))
    }
}
