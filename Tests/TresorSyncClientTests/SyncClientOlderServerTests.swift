import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TresorSyncClient
import TresorSyncProtocol
import TresorTestSupport

/// A server older than the notes passphrase and folders routes (docs/SYNC.md, "Notes"): it
/// answers them `404` without the relay's error body, and the client says it does not know them
/// (nil) instead of failing the notes sync; a relay's own `404` refusal stays an error.
@Suite("Sync client: an older server")
struct SyncClientOlderServerTests {
    @Test func routesAnOlderServerLacksAnswerNilAndARelaysRefusalStaysAnError() async throws {
        let router = Router()
        router.post("/v1/sync/challenges") { _, _ in
            try Self.json(SyncChallenge(challengeID: "challenge", nonce: Data(repeating: 1, count: 32), expires: Date().addingTimeInterval(60)))
        }
        router.post("/v1/sync/sessions") { _, _ in
            try Self.json(SyncSession(token: "token", deviceID: "device", state: .trusted, expires: Date().addingTimeInterval(3600)))
        }
        // A relay that knows the route but refuses: its error body.
        router.post("/v1/sync/folders") { _, _ in
            try Self.json(SyncErrorBody(code: .notFound, message: "no such account"), status: .notFound)
        }
        let application = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await application.test(.live) { client in
            let device = TestCredential(account: "ada")
            let sync = device.client(try SyncServerURL("http://127.0.0.1:\(try #require(client.port))"))
            #expect(try await sync.notesPassphrase() == nil)
            let change = SyncPassphraseChange(
                passphrase: SyncPassphrase(salt: Data(count: 16), iterations: 1, verifier: Data(count: 24), proofHash: nil, hint: nil), base: nil)
            #expect(try await sync.pushNotesPassphrase(change) == nil)
            await #expect(throws: SyncClientError.refused(status: 404, code: .notFound, message: "no such account")) {
                try await sync.syncFolders(SyncFolderChanges(created: ["Home"], deleted: []))
            }
        }
    }

    /// A server that has the attachment routes but keeps no excluded-from-backup flag (no
    /// `PATCH`): the client says so (nil), and the flag's change waits (docs/SYNC.md,
    /// "Attachments"); a relay's refusal of it stays an error.
    @Test func anAttachmentsFlagChangeToAServerWithoutItAnswersNil() async throws {
        let router = Router()
        router.post("/v1/sync/challenges") { _, _ in
            try Self.json(SyncChallenge(challengeID: "challenge", nonce: Data(repeating: 1, count: 32), expires: Date().addingTimeInterval(60)))
        }
        router.post("/v1/sync/sessions") { _, _ in
            try Self.json(SyncSession(token: "token", deviceID: "device", state: .trusted, expires: Date().addingTimeInterval(3600)))
        }
        router.get("/v1/sync/notes/:note/attachments/:id") { _, _ in Response(status: .ok) }
        router.delete("/v1/sync/notes/:note/attachments/:id") { _, _ in Response(status: .noContent) }
        router.patch("/v1/sync/notes/refused/attachments/:id") { _, _ in
            try Self.json(SyncErrorBody(code: .notFound, message: "no such note of this account"), status: .notFound)
        }
        let application = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await application.test(.live) { client in
            let device = TestCredential(account: "ada")
            let sync = device.client(try SyncServerURL("http://127.0.0.1:\(try #require(client.port))"))
            let id = UUID().uuidString.lowercased()
            #expect(try await sync.setExcludedFromBackup(true, attachment: id, ofNote: "note") == nil)
            await #expect(throws: SyncClientError.refused(status: 404, code: .notFound, message: "no such note of this account")) {
                try await sync.setExcludedFromBackup(true, attachment: id, ofNote: "refused")
            }
        }
    }

    /// An older server's attachment and locked record lack the excluded-from-backup flag and the
    /// passphrase hint: they decode without them (nil, so a device keeps its own); a field a
    /// newer server adds is passed over.
    @Test func anOlderServersAttachmentAndLockedRecordDecodeWithoutTheNewFields() throws {
        let attachment = try SyncJSON.decoder.decode(
            SyncAttachment.self, from: Data(#"{"id":"a","kind":"file","name":"n","byteCount":1,"isSealed":false}"#.utf8))
        #expect(attachment.excludedFromBackup == nil)
        let newer = try SyncJSON.decoder.decode(
            SyncAttachment.self, from: Data(#"{"id":"a","kind":"file","name":"n","byteCount":1,"excludedFromBackup":true,"later":[1]}"#.utf8))
        #expect(newer.excludedFromBackup == true)
        let record = SyncLockedNote(
            passphraseSalt: Data(count: 16), passphraseIterations: 1, passphraseVerifier: Data(count: 24), passphraseProofHash: nil,
            wrappedKey: Data(count: 24), iv: Data(count: 12), tag: Data(count: 16), ciphertext: Data([1]), bodyFormat: "text", noteProofHash: nil)
        let encoded = try SyncJSON.encoder.encode(record)
        #expect(!String(decoding: encoded, as: UTF8.self).contains("passphraseHint"), "no hint, no key: an older reader sees what it knows")
        #expect(try SyncJSON.decoder.decode(SyncLockedNote.self, from: encoded).passphraseHint == nil)
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(data: try SyncJSON.encoder.encode(value))))
    }
}
