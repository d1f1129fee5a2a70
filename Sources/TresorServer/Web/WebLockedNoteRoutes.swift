import Foundation
import Hummingbird
import TresorNotes
import TresorProtocol

/// Locking in the browser (docs/WEB.md, "Locked notes in the browser"): the browser sends
/// the note key wrapped under its passphrase key and the body and attachment chunks sealed
/// under the note key; the server stores them under the keybag layer and, in the same
/// transaction, drops the plaintext. Only the note's owner locks (a shared note cannot be).
struct WebLockedNoteRoutes {
    let services: WebServices

    struct LockRequest: Decodable {
        struct SealedAttachment: Decodable {
            var id: String
            var chunks: [Data]
        }
        var passphraseID: Int64
        var wrappedKey: Data
        var iv: Data
        var tag: Data
        var ciphertext: Data
        var attachments: [SealedAttachment]?
    }

    struct LockedBodyRequest: Decodable {
        var iv: Data
        var tag: Data
        var ciphertext: Data
    }

    struct RewrapRequest: Decodable {
        var passphraseID: Int64
        var wrappedKey: Data
    }

    func register(on router: Router<WebRequestContext>) {
        let services = self.services
        router.post("/api/notes/:id/lock") { request, context -> Response in
            let id = try context.parameters.require("id")
            _ = try context.requireSession()
            let body = try await WebCoding.decodeWithoutSecret(LockRequest.self, request, limit: WebLimits.lockBytes)
            var chunks: [String: [Data]] = [:]
            for attachment in body.attachments ?? [] {
                guard chunks.updateValue(attachment.chunks, forKey: attachment.id) == nil else {
                    throw APIError(.param, "an attachment appears twice")
                }
            }
            let sealed = ClientLockedNote(
                passphraseID: body.passphraseID, wrappedKey: body.wrappedKey, iv: body.iv, tag: body.tag, ciphertext: body.ciphertext,
                attachmentChunks: chunks)
            let note = try await services.performOnNote("lock", context, id: id, ownerOnly: true) { store, account, _ in
                try store.lockNote(id, sealedBy: sealed)
                return WebNoteSummary(try store.summary(ofNote: id), for: account, folders: try store.folders(account: account.id))
            }
            return try WebCoding.response(note)
        }
        router.put("/api/notes/:id/locked-body") { request, context -> Response in
            let id = try context.parameters.require("id")
            _ = try context.requireSession()
            let body = try await WebCoding.decodeWithoutSecret(LockedBodyRequest.self, request)
            let note = try await services.performOnNote("save locked", context, id: id, ownerOnly: true) { store, account, _ in
                try store.replaceLockedBody(ofNote: id, iv: body.iv, tag: body.tag, ciphertext: body.ciphertext)
                return WebNoteSummary(try store.summary(ofNote: id), for: account, folders: try store.folders(account: account.id))
            }
            return try WebCoding.response(note)
        }
        router.post("/api/notes/:id/rewrap") { request, context -> Response in
            let id = try context.parameters.require("id")
            _ = try context.requireSession()
            let body = try await WebCoding.decodeWithoutSecret(RewrapRequest.self, request)
            let note = try await services.performOnNote("rewrap", context, id: id, ownerOnly: true) { store, account, _ in
                try store.rewrap(id, to: body.passphraseID, wrappedKey: body.wrappedKey)
                return WebNoteSummary(try store.summary(ofNote: id), for: account, folders: try store.folders(account: account.id))
            }
            return try WebCoding.response(note)
        }
    }
}
