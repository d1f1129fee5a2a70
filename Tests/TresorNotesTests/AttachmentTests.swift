import Foundation
import Testing
@testable import TresorNotes

@Suite("Attachments: kinds, chunks, tampering, truncation")
struct AttachmentTests {
    func attachmentFile(_ home: NotesHome, _ id: String) throws -> URL {
        let file = try home.notes.pool.read { db in try String.fetchOne(db, sql: "SELECT file FROM attachments WHERE id = ?", arguments: [id])! }
        return home.paths.attachmentsFolder.appendingPathComponent(file)
    }

    @Test func lockingRefusesUnlockableKindsNamingTheAttachment() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "Trip", body: "itinerary"))
        try home.notes.addAttachment(to: note.id, kind: .image, name: "map.png", data: Data([1, 2, 3]))
        try home.notes.addAttachment(to: note.id, kind: .pdf, name: "tickets.pdf", data: Data([4, 5, 6]))
        try home.notes.setPassphrase(passphrase("pp"))
        #expect(throws: NotesError.attachmentNotLockable(name: "tickets.pdf", kind: .pdf)) { try home.notes.lockNote(note.id) }
        #expect(try !home.notes.summary(ofNote: note.id).isLocked)
        #expect(try home.notes.openNote(note.id).body == "itinerary")

        let locked = try home.notes.createNote(NoteDraft(title: "Locked", body: "x"))
        try home.notes.lockNote(locked.id)
        #expect(throws: NotesError.attachmentNotLockable(name: "song.mp3", kind: .audio)) {
            try home.notes.addAttachment(to: locked.id, kind: .audio, name: "song.mp3", data: Data([9]))
        }
        for kind in AttachmentKind.lockable {
            try home.notes.addAttachment(to: locked.id, kind: kind, name: "a \(kind.rawValue)", data: Data(kind.rawValue.utf8))
        }
        #expect(try home.notes.openNote(locked.id).attachments.count == AttachmentKind.lockable.count)
    }

    @Test func largeAttachmentsRoundTripInChunksLockedAndUnlocked() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "Scan", body: ""))
        var bytes = Data(count: 3 * AttachmentFile.chunkByteCount + 12_345)
        for index in stride(from: 0, to: bytes.count, by: 4096) { bytes[index] = UInt8(truncatingIfNeeded: index / 4096) }
        let info = try home.notes.addAttachment(to: note.id, kind: .image, name: "scan.png", data: bytes)
        #expect(try home.notes.attachment(info.id, of: note.id).1 == bytes)
        try home.notes.setPassphrase(passphrase("pp"))
        try home.notes.lockNote(note.id)
        #expect(try home.notes.attachment(info.id, of: note.id).1 == bytes)
        home.notes.lockNow()
        #expect(throws: NotesError.self) { try home.notes.attachment(info.id, of: note.id) }
        #expect(try home.notes.attachment(info.id, of: note.id, passphrase: passphrase("pp")).1 == bytes)
        // Empty attachments are one (final) empty chunk.
        let empty = try home.notes.addAttachment(to: note.id, kind: .drawing, name: "blank", data: Data())
        #expect(try home.notes.attachment(empty.id, of: note.id).1 == Data())
    }

    @Test func aTamperedOrTruncatedAttachmentIsAClearErrorAndNothingElseIsLost() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "T", body: "kept body"))
        let other = try home.notes.createNote(NoteDraft(title: "Other", body: "other body"))
        let data = Data(repeating: 0xAB, count: 2 * AttachmentFile.chunkByteCount + 10)
        try home.notes.setPassphrase(passphrase("pp"))
        let flipped = try home.notes.addAttachment(to: note.id, kind: .image, name: "flipped", data: data)
        let cut = try home.notes.addAttachment(to: note.id, kind: .image, name: "cut", data: data)
        let dropped = try home.notes.addAttachment(to: note.id, kind: .image, name: "dropped", data: data)
        let kept = try home.notes.addAttachment(to: other.id, kind: .image, name: "kept", data: data)
        try home.notes.lockNote(note.id)

        var bytes = try Data(contentsOf: try attachmentFile(home, flipped.id))
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: try attachmentFile(home, flipped.id))
        // Cut in the middle of a chunk.
        let cutURL = try attachmentFile(home, cut.id)
        try Data(contentsOf: cutURL).prefix(AttachmentFile.chunkByteCount + 500).write(to: cutURL)
        // Cut exactly after the first two whole chunks: every remaining chunk is intact, but
        // the last one was not sealed as final.
        let droppedURL = try attachmentFile(home, dropped.id)
        let whole = try Data(contentsOf: droppedURL)
        var offset = 5
        for _ in 0..<2 {
            let length = whole[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            offset += 4 + length
        }
        try whole.prefix(offset).write(to: droppedURL)

        for attachment in [flipped, cut, dropped] {
            #expect(throws: NotesError.self) { try home.notes.attachment(attachment.id, of: note.id) }
        }
        #expect(try home.notes.openNote(note.id).body == "kept body")
        #expect(try home.notes.attachment(kept.id, of: other.id).1 == data)
        // Removing the lock must not half-happen either.
        #expect(throws: NotesError.self) { try home.notes.removeLock(note.id) }
        #expect(try home.notes.summary(ofNote: note.id).isLocked)
    }

    @Test func filesNoRowNamesAreRemovedAtStart() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "T", body: ""))
        let info = try home.notes.addAttachment(to: note.id, kind: .file, name: "f", data: Data([1]))
        let stray = home.paths.attachmentsFolder.appendingPathComponent("interrupted-write")
        try Data([1, 2, 3]).write(to: stray)
        try home.restart()
        try home.unlock()
        #expect(!FileManager.default.fileExists(atPath: stray.path))
        #expect(try home.notes.attachment(info.id, of: note.id).1 == Data([1]))
    }
}
