import Foundation
import Testing
import TresorCrypto
import TresorNotesDomain

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

    /// Sizes at and around the 1 MiB chunk boundary, locked and not: every byte back, the file as
    /// long as the format says (5 + per chunk 4 + 31 + the locked layer's 28 + the chunk), and
    /// each record's length prefix where the format puts it.
    @Test(arguments: [
        0, 1, AttachmentFile.chunkByteCount - 1, AttachmentFile.chunkByteCount,
        AttachmentFile.chunkByteCount + 1, 3 * AttachmentFile.chunkByteCount + 5,
    ])
    func roundTripsAcrossChunkBoundaries(size: Int) throws {
        let home = try NotesHome()
        try home.notes.setPassphrase(passphrase("pp"))
        let plain = try home.notes.createNote(NoteDraft(title: "Plain", body: ""))
        let locked = try home.notes.createNote(NoteDraft(title: "Locked", body: ""))
        try home.notes.lockNote(locked.id)
        var bytes = Data(count: size)
        for index in stride(from: 0, to: size, by: 997) { bytes[index] = UInt8(truncatingIfNeeded: index / 997 + 1) }
        if size > 0 { bytes[size - 1] = 0x5A }
        let chunks = max(1, (size + AttachmentFile.chunkByteCount - 1) / AttachmentFile.chunkByteCount)
        for (note, innerOverhead) in [(plain, 0), (locked, 28)] {
            let info = try home.notes.addAttachment(to: note.id, kind: .image, name: "b.png", data: bytes)
            #expect(try home.notes.attachment(info.id, of: note.id).1 == bytes)
            let file = try Data(contentsOf: try attachmentFile(home, info.id))
            #expect(file.count == 5 + chunks * (4 + 31 + innerOverhead) + size)
            #expect(file.prefix(5) == Data("TRNA".utf8) + [1])
            var offset = 5
            for chunk in 0..<chunks {
                let length = file[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
                let plainCount = min(AttachmentFile.chunkByteCount, size - chunk * AttachmentFile.chunkByteCount)
                #expect(length == 31 + innerOverhead + plainCount)
                #expect(file[offset + 4..<offset + 7] == Data([1, 2, 12]), "envelope header: AES-256-GCM under the content key")
                offset += 4 + length
            }
            #expect(offset == file.count)
        }
        let folder = home.paths.attachmentsFolder.path
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).count == 2, "one file per attachment, nothing else")
    }

    /// The format does not depend on how the writer assembles it: a file built record by record
    /// from the documented layout (as the first writer did, joining IV ‖ ciphertext ‖ tag and the
    /// envelope in memory) opens, and a file written now takes apart by that same layout.
    @Test func theFileLayoutIsTheDocumentedOne() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-attach-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let sealing = ContentSealing(classKey: SecureRandom.key(bitCount: 256))
        let noteKey = LockedNoteCrypto.newNoteKey()
        let id = UUID().uuidString.lowercased()
        let data = Data((0..<(2 * AttachmentFile.chunkByteCount + 77)).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let chunks = stride(from: 0, to: data.count, by: AttachmentFile.chunkByteCount).map {
            data[$0..<min($0 + AttachmentFile.chunkByteCount, data.count)]
        }
        func column(_ index: Int) -> String { "chunk/\(index)/\(index == chunks.count - 1 ? "final" : "more")" }

        var handMade = Data("TRNA".utf8) + [1]
        for (index, chunk) in chunks.enumerated() {
            let aad = LockedNoteCrypto.chunkAssociatedData(attachmentID: id, index: UInt64(index), isFinal: index == chunks.count - 1)
            let parts = try AESGCM.seal(chunk, using: noteKey, authenticating: aad)
            let record = try sealing.seal(parts.iv + parts.ciphertext + parts.tag, table: "attachments", id: id, column: column(index))
            withUnsafeBytes(of: UInt32(record.count).bigEndian) { handMade.append(contentsOf: $0) }
            handMade.append(record)
        }
        try handMade.write(to: folder.appendingPathComponent("old"))
        #expect(try AttachmentFile.read("old", attachmentID: id, byteCount: data.count, in: folder, sealing: sealing, noteKey: noteKey) == data)

        let writer = try AttachmentFile.Writer(attachmentID: id, in: folder, sealing: sealing, noteKey: noteKey)
        try writer.append(data)
        let name = try writer.finish()
        let written = try Data(contentsOf: folder.appendingPathComponent(name))
        #expect(written.count == handMade.count)
        #expect(written.prefix(5) == Data("TRNA".utf8) + [1])
        var offset = 5, opened = Data()
        for index in chunks.indices {
            let length = written[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let inner = try sealing.open(Data(written[offset + 4..<offset + 4 + length]), table: "attachments", id: id, column: column(index))
            let aad = LockedNoteCrypto.chunkAssociatedData(attachmentID: id, index: UInt64(index), isFinal: index == chunks.count - 1)
            let parts = AESGCM.Sealed(iv: inner.prefix(12), ciphertext: inner.dropFirst(12).dropLast(16), tag: inner.suffix(16))
            opened.append(try AESGCM.open(parts, using: noteKey, authenticating: aad))
            offset += 4 + length
        }
        #expect(offset == written.count)
        #expect(opened == data)
    }

    /// From its second chunk on a writer seals and writes on a thread of its own: bytes arriving
    /// in odd sizes still make the same file, and a writer abandoned or simply dropped halfway
    /// leaves no file at once (not when its thread gets round to it).
    @Test func aWriterWithItsOwnThreadWritesInOrderAndLeavesNothingWhenDropped() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-attach-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let sealing = ContentSealing(classKey: SecureRandom.key(bitCount: 256))
        let id = UUID().uuidString.lowercased()
        let data = Data((0..<(5 * AttachmentFile.chunkByteCount + 333)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) })
        func files() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: folder.path) }

        for noteKey in [nil, LockedNoteCrypto.newNoteKey()] {
            let writer = try AttachmentFile.Writer(attachmentID: id, in: folder, sealing: sealing, noteKey: noteKey)
            var offset = 0, size = 1
            while offset < data.count {
                let end = min(offset + size, data.count)
                try writer.append(data[offset..<end])
                offset = end
                size = size * 3 + 4099
            }
            let name = try writer.finish()
            #expect(try AttachmentFile.read(name, attachmentID: id, byteCount: data.count, in: folder, sealing: sealing, noteKey: noteKey) == data)
            try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }

        let abandoned = try AttachmentFile.Writer(attachmentID: id, in: folder, sealing: sealing, noteKey: nil)
        try abandoned.append(data)
        abandoned.abandon()
        #expect(try files().isEmpty, "an abandoned writer's file")
        do {
            let dropped = try AttachmentFile.Writer(attachmentID: id, in: folder, sealing: sealing, noteKey: nil)
            try dropped.append(data)
            #expect(try files().count == 1)
        }
        #expect(try files().isEmpty, "a dropped writer's file")
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

        // Two whole records swapped: each is intact, but sealed for another position.
        let swapped = try home.notes.addAttachment(to: note.id, kind: .image, name: "swapped", data: data)
        let swappedURL = try attachmentFile(home, swapped.id)
        let original = try Data(contentsOf: swappedURL)
        func recordEnd(_ start: Int) -> Int { start + 4 + original[start..<start + 4].reduce(0) { $0 << 8 | Int($1) } }
        let first = 5..<recordEnd(5), second = first.upperBound..<recordEnd(first.upperBound)
        #expect(first.count == second.count)
        try (original.prefix(5) + original[second] + original[first] + original[second.upperBound...]).write(to: swappedURL)

        for attachment in [flipped, cut, dropped, swapped] {
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
