import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import TresorNotesDomain
import TresorSyncProtocol
import TresorTestSupport
import TresorWebStore
import TresorWebStorePostgres

@testable import TresorSyncServer

/// Attachments sync through the routes, on a real PostgreSQL (docs/SYNC.md, "Attachments"): a
/// device sends an attachment by its id through the web store's own upload — its chunks, limits
/// and the account's quota — reads one, removes one; nothing of another account's is reachable.
@Suite("Sync attachments", .enabled(if: TestPostgres.shouldRun))
struct SyncAttachmentsTests {
    static let logger = Logger(label: "tresor.tests.sync-attachments")

    @Test func aDeviceSendsReadsAndRemovesAnAttachmentByItsID() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        let ada = try await instance.account("ada")
        let store = instance.storage.store
        let note = try await store.createNote(NoteDraft(title: "Scans", body: "Scans"), account: ada.id, quota: nil)
        let bytes = Data((0..<(2 << 20) + 777).map { _ in UInt8.random(in: 0...255) })
        let id = UUID().uuidString.lowercased()
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            let sent = try await device.putAttachment(client, note: note.id, id: id, name: "pass port.bin", bytes)
            #expect(sent.status == .created, "\(sent.text)")
            let answer = try sent.decode(SyncAttachment.self)
            #expect(
                answer
                    == SyncAttachment(
                        id: id, kind: "file", name: "pass port.bin", byteCount: bytes.count, isSealed: false, excludedFromBackup: false,
                        created: answer.created))
            #expect(answer.created.map { abs($0.timeIntervalSinceNow) < 60 } == true, "sent without a date: dated as it arrived")
            // Stored by the web store under the device's id, in its chunks: the web client reads it.
            let reader = try await store.readAttachment(id, of: note.id)
            var stored = Data()
            while let piece = try await reader.next() { stored.append(piece) }
            #expect(stored == bytes)
            #expect(try await Self.rows("attachment_chunks", instance) == 3)
            // Sealed chunks are refused for a note the server holds unlocked: they would be
            // served as its plaintext.
            var sealedHeaders = device.attachmentHeaders(name: "sealed.png", kind: "image", length: 100)
            sealedHeaders.append(.init(name: .init(SyncAttachment.sealedHeader)!, value: "true"))
            let sealed = try await client.execute(
                uri: "/v1/sync/notes/\(note.id)/attachments/\(UUID().uuidString.lowercased())", method: .put, headers: sealedHeaders,
                body: ByteBuffer(bytes: Data(count: 100)))
            #expect(sealed.status == .conflict, "\(sealed.text)")
            #expect(try await Self.rows("attachment_uploads", instance) == 0)
            // A retry whose answer was lost finds it: nothing is stored twice.
            let again = try await device.putAttachment(client, note: note.id, id: id, name: "pass port.bin", bytes)
            #expect(again.status == .ok, "\(again.text)")
            #expect(try await store.listedAttachments(ofNote: note.id).map(\.id) == [id])
            // The note as a device pulls it lists it.
            let page = try await device.notes(client)
            #expect(
                page.entries.first?.note?.attachments == [
                    SyncAttachment(
                        id: id, kind: "file", name: "pass port.bin", byteCount: bytes.count, isSealed: false, excludedFromBackup: false,
                        created: answer.created)
                ])
            // Read back streamed, byte for byte.
            let read = try await client.execute(uri: "/v1/sync/notes/\(note.id)/attachments/\(id)", method: .get, headers: device.bearer)
            #expect(read.status == .ok && Data(buffer: read.body) == bytes)
            // Removed, answering the one revision of the note it made; a second removal (a
            // retry) is no error, and tells no revision.
            let revision = try await store.summary(ofNote: note.id).revision
            let removed = try await client.execute(uri: "/v1/sync/notes/\(note.id)/attachments/\(id)", method: .delete, headers: device.bearer)
            #expect(removed.status == .ok, "\(removed.text)")
            let removal = try SyncJSON.decoder.decode(SyncNoteRevisionStep.self, from: Data(buffer: removed.body))
            let next: Int64 = revision + 1
            #expect(removal == SyncNoteRevisionStep(revisionBefore: revision, revision: next))
            let now = try await store.summary(ofNote: note.id).revision
            #expect(now == next)
            let retried = try await client.execute(uri: "/v1/sync/notes/\(note.id)/attachments/\(id)", method: .delete, headers: device.bearer)
            #expect(retried.status == .noContent, "\(retried.text)")
            #expect(try await store.listedAttachments(ofNote: note.id).isEmpty)
            #expect(try await Self.rows("attachment_chunks", instance) == 0)
        }
        await instance.storage.close()
    }

    @Test func anAttachmentOverTheQuotaIsRefusedAndNothingIsStored() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase(), accountQuotaBytes: 2 << 20)
        let ada = try await instance.account("ada")
        let store = instance.storage.store
        let note = try await store.createNote(NoteDraft(title: "Film", body: "Film"), account: ada.id, quota: nil)
        let id = UUID().uuidString.lowercased()
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            let refused = try await device.putAttachment(client, note: note.id, id: id, name: "film.bin", Data(count: 3 << 20))
            #expect(refused.status == .contentTooLarge && refused.code == .tooLarge, "\(refused.text)")
            #expect(try await store.listedAttachments(ofNote: note.id).isEmpty)
            for table in ["attachment_chunks", "attachment_uploads", "attachments"] {
                #expect(try await Self.rows(table, instance) == 0, "\(table)")
            }
            // Within the quota it goes, under the same id.
            let fits = try await device.putAttachment(client, note: note.id, id: id, name: "film.bin", Data(count: 1 << 20))
            #expect(fits.status == .created, "\(fits.text)")
        }
        await instance.storage.close()
    }

    @Test func anUploadCutShortStartsAgainFromItsFirstChunk() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        let ada = try await instance.account("ada")
        let store = instance.storage.store
        let note = try await store.createNote(NoteDraft(title: "Cut", body: "Cut"), account: ada.id, quota: nil)
        let id = UUID().uuidString.lowercased()
        // A first upload of the id wrote two chunks, then its connection dropped.
        let cut = try await store.beginAttachment(to: note.id, kind: .file, name: "cut.bin", id: id, created: nil, excludedFromBackup: false)
        try await cut.append(Data(repeating: 0xAA, count: 2 << 20))
        #expect(try await Self.rows("attachment_chunks", instance) == 2)
        let bytes = Data((0..<(1 << 20) + 5).map { _ in UInt8.random(in: 0...255) })
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            let sent = try await device.putAttachment(client, note: note.id, id: id, name: "cut.bin", bytes)
            #expect(sent.status == .created, "\(sent.text)")
        }
        // Only the new upload's chunks are left, and the attachment is its bytes.
        #expect(try await Self.rows("attachment_chunks", instance) == 2)
        #expect(try await Self.rows("attachment_uploads", instance) == 0)
        let reader = try await store.readAttachment(id, of: note.id)
        var stored = Data()
        while let piece = try await reader.next() { stored.append(piece) }
        #expect(stored == bytes)
        await instance.storage.close()
    }

    @Test func aDeviceOfAnotherAccountReachesNothingOfIt() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        let ada = try await instance.account("ada")
        try await instance.account("bob")
        let store = instance.storage.store
        let note = try await store.createNote(NoteDraft(title: "Ada's", body: "Ada's"), account: ada.id, quota: nil)
        let id = UUID().uuidString.lowercased()
        let bytes = Data("ada's attachment".utf8)
        try await instance.application.test(.router) { client in
            var adasDevice = TestDevice(account: "ada")
            try await adasDevice.join(client)
            #expect(try await adasDevice.putAttachment(client, note: note.id, id: id, name: "a.bin", bytes).status == .created)

            var bobsDevice = TestDevice(account: "bob")
            try await bobsDevice.join(client)
            let path = "/v1/sync/notes/\(note.id)/attachments/\(id)"
            let read = try await client.execute(uri: path, method: .get, headers: bobsDevice.bearer)
            #expect(read.status == .notFound && Data(buffer: read.body) != bytes, "\(read.text)")
            let removed = try await client.execute(uri: path, method: .delete, headers: bobsDevice.bearer)
            #expect(removed.status == .notFound, "\(removed.text)")
            let written = try await bobsDevice.putAttachment(client, note: note.id, id: UUID().uuidString.lowercased(), name: "b.bin", bytes)
            #expect(written.status == .notFound, "\(written.text)")
            // Ada's attachment's id on a note of Bob's own: refused, and Ada's chunks stay.
            let bobsNote = try await store.createNote(
                NoteDraft(title: "Bob's", body: "Bob's"), account: try #require(try await store.account(named: "bob")).id, quota: nil)
            let taken = try await bobsDevice.putAttachment(client, note: bobsNote.id, id: id, name: "b.bin", Data("bob".utf8))
            #expect(taken.status == .conflict, "\(taken.text)")
            // Without a session: nothing.
            #expect(try await client.execute(uri: path, method: .get).status == .unauthorized)
        }
        let reader = try await store.readAttachment(id, of: note.id)
        #expect(try await reader.next() == bytes)
        await instance.storage.close()
    }

    /// The excluded-from-backup flag (docs/SYNC.md, "Attachments"): sent with an upload, kept by
    /// the server and listed, changed by a device (making a revision of the note, so the other
    /// devices read it) — also on a retry whose answer was lost.
    @Test func anAttachmentsExcludedFromBackupFlagIsKeptListedAndChanged() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        let ada = try await instance.account("ada")
        try await instance.account("bob")
        let store = instance.storage.store
        let note = try await store.createNote(NoteDraft(title: "Statements", body: "Statements"), account: ada.id, quota: nil)
        let id = UUID().uuidString.lowercased()
        let bytes = Data("the bank's statement".utf8)
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            var headers = device.attachmentHeaders(name: "statement.pdf", length: bytes.count)
            headers.append(.init(name: .init(SyncAttachment.excludedFromBackupHeader)!, value: "true"))
            let path = "/v1/sync/notes/\(note.id)/attachments/\(id)"
            let before = try await store.summary(ofNote: note.id).revision
            let sent = try await client.execute(uri: path, method: .put, headers: headers, body: ByteBuffer(bytes: bytes))
            #expect(try sent.status == .created && sent.decode(SyncAttachment.self).excludedFromBackup == true, "\(sent.text)")
            // One revision of the note, the device's own step: the flag came with the attachment.
            #expect(try sent.decode(SyncAttachmentChanged.self).step == SyncNoteRevisionStep(revisionBefore: before, revision: before + 1))
            #expect(try await store.listedAttachments(ofNote: note.id).first?.excludedFromBackup == true, "the web store keeps it")
            let page = try await device.notes(client)
            #expect(page.entries.first?.note?.attachments?.first?.excludedFromBackup == true)

            // Put back into backups: a revision of the note, listed so after the cursor.
            let revision = try await store.summary(ofNote: note.id).revision
            let changed = try await client.send(
                .patch, path, SyncAttachmentBackupChange(excludedFromBackup: false), headers: device.bearer)
            // Its answer says the step it made of the note, as an older device reads the attachment alone.
            let answer = try changed.decode(SyncAttachmentChanged.self)
            let after = try await store.summary(ofNote: note.id).revision
            #expect(changed.status == .ok && answer.attachment.excludedFromBackup == false, "\(changed.text)")
            #expect(after > revision && answer.step == SyncNoteRevisionStep(revisionBefore: revision, revision: after))
            #expect(try changed.decode(SyncAttachment.self) == answer.attachment)
            let next = try await device.notes(client, after: page.cursor)
            #expect(next.entries.first?.note?.attachments?.first?.excludedFromBackup == false)
            // The same change again changes nothing.
            let cursor = next.cursor
            let same = try await client.send(.patch, path, SyncAttachmentBackupChange(excludedFromBackup: false), headers: device.bearer)
            #expect(try same.status == .ok && same.decode(SyncAttachmentChanged.self).step == nil, "no step: nothing changed")
            #expect(try await device.notes(client, after: cursor).entries.isEmpty)
            // An upload retried after a lost answer sets the flag it carries.
            let retried = try await client.execute(uri: path, method: .put, headers: headers, body: ByteBuffer(bytes: bytes))
            #expect(try retried.status == .ok && retried.decode(SyncAttachment.self).excludedFromBackup == true, "\(retried.text)")
            #expect(try await store.listedAttachments(ofNote: note.id).first?.excludedFromBackup == true)

            // Another account's device, an attachment that is not there: not found, nothing changed.
            var bobsDevice = TestDevice(account: "bob")
            try await bobsDevice.join(client)
            let bobs = try await client.send(.patch, path, SyncAttachmentBackupChange(excludedFromBackup: false), headers: bobsDevice.bearer)
            #expect(bobs.status == .notFound, "\(bobs.text)")
            let missing = try await client.send(
                .patch, "/v1/sync/notes/\(note.id)/attachments/\(UUID().uuidString.lowercased())",
                SyncAttachmentBackupChange(excludedFromBackup: true),
                headers: device.bearer)
            #expect(missing.status == .notFound, "\(missing.text)")
            #expect(try await store.listedAttachments(ofNote: note.id).first?.excludedFromBackup == true)
        }
        await instance.storage.close()
    }

    /// An attachment a device added offline is dated, with its note, as the device added it —
    /// not as it arrived — under the rules of a note's own dates: never after the server's clock,
    /// never dating the note back; its removal leaves the date the note's change brought. A date
    /// that is not one is refused, storing nothing.
    @Test func anAttachmentKeepsTheDevicesDate() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        try await instance.account("ada")
        let store = instance.storage.store
        let now = Date().timeIntervalSince1970.rounded(.down)
        let ago = { @Sendable (seconds: Double) in Date(timeIntervalSince1970: now - seconds) }
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            var new = SyncNoteChange.new("Scans", "Scans\nfrom the plane")
            (new.created, new.modified) = (ago(3 * 3600), ago(2 * 3600))
            let note = try #require(try await device.send(client, new).note)

            let hourAgo = try await device.putAttachment(client, note: note.id, name: "boarding.pdf", created: ago(3600), Data([1]))
            #expect(hourAgo.status == .created, "\(hourAgo.text)")
            #expect(try hourAgo.decode(SyncAttachment.self).created == ago(3600))
            #expect(try await store.summary(ofNote: note.id).modified == ago(3600), "the note dated as the device added it")

            // Older than the note's date: the attachment keeps it, the note is not dated back.
            let older = try await device.putAttachment(client, note: note.id, name: "old.pdf", created: ago(5 * 3600), Data([2]))
            #expect(try older.decode(SyncAttachment.self).created == ago(5 * 3600))
            #expect(try await store.summary(ofNote: note.id).modified == ago(3600))

            // Removed by the device: its note's change comes first, its text unchanged but dated
            // when the attachment was removed there, and dates the note; the removal leaves that
            // date, and is still a revision of the note.
            let current = try #require(try await device.notes(client).entries.last?.note)
            var removal = SyncNoteChange.edit(current, body: current.body!, base: current.base)
            removal.modified = ago(1800)
            #expect(try await device.send(client, removal).note?.modified == ago(1800))
            let before = try await store.summary(ofNote: note.id)
            let boarding = try hourAgo.decode(SyncAttachment.self).id
            let removed = try await client.execute(
                uri: "/v1/sync/notes/\(note.id)/attachments/\(boarding)", method: .delete, headers: device.bearer)
            #expect(removed.status == .ok, "\(removed.text)")
            let after = try await store.summary(ofNote: note.id)
            #expect(after.modified == ago(1800) && after.revision > before.revision)

            // The device's clock ahead of the server's: now.
            let ahead = try await device.putAttachment(client, note: note.id, name: "ahead.pdf", created: ago(-86_400), Data([3]))
            let aheadDate = try #require(try ahead.decode(SyncAttachment.self).created)
            #expect(aheadDate <= Date() && aheadDate > ago(60))
            #expect(abs(try await store.summary(ofNote: note.id).modified.timeIntervalSince(aheadDate)) < 1)

            let listed = try await store.listedAttachments(ofNote: note.id)
            #expect(listed.map(\.name) == ["old.pdf", "ahead.pdf"], "listed in the order they were added")
            let pulled = try #require(try await device.notes(client).entries.last?.note)
            #expect(pulled.modified == aheadDate && pulled.attachments?.map(\.created) == [ago(5 * 3600), aheadDate].map(Optional.some))

            var headers = device.attachmentHeaders(name: "bad.pdf", length: 1)
            headers.append(.init(name: .init(SyncAttachment.createdHeader)!, value: "yesterday"))
            let bad = try await client.execute(
                uri: "/v1/sync/notes/\(note.id)/attachments/\(UUID().uuidString.lowercased())", method: .put, headers: headers,
                body: ByteBuffer(bytes: [4]))
            #expect(bad.status == .badRequest && bad.text.contains(SyncAttachment.createdHeader), "\(bad.text)")
            #expect(try await store.listedAttachments(ofNote: note.id).count == 2)
        }
        await instance.storage.close()
    }

    /// How many rows `table` of the server's database holds.
    static func rows(_ table: String, _ instance: SyncInstance) async throws -> Int {
        try await instance.storage.database.read { connection in try await connection.count("SELECT 1 FROM \(unescaped: table)", logger) }
    }
}

extension TestDevice {
    func attachmentHeaders(name: String, kind: String = "file", length: Int) -> HTTPFields {
        var fields = bearer
        fields[.contentType] = "application/octet-stream"
        fields.append(.init(name: .init(SyncAttachment.kindHeader)!, value: kind))
        fields.append(.init(name: .init(SyncAttachment.nameHeader)!, value: SyncAttachment.headerValue(name: name)))
        fields[.contentLength] = String(length)
        return fields
    }

    func putAttachment(
        _ client: some TestClientProtocol, note: String, id: String = UUID().uuidString.lowercased(), name: String, kind: String = "file",
        created: Date? = nil, _ bytes: Data
    ) async throws -> TestResponse {
        var headers = attachmentHeaders(name: name, kind: kind, length: bytes.count)
        if let created { headers.append(.init(name: .init(SyncAttachment.createdHeader)!, value: SyncAttachment.headerValue(created: created))) }
        return try await client.execute(
            uri: "/v1/sync/notes/\(note)/attachments/\(id)", method: .put, headers: headers, body: ByteBuffer(bytes: bytes))
    }
}
