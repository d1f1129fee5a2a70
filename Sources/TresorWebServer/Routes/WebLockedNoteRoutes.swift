import Foundation
import Hummingbird
import TresorNotesDomain
import TresorProtocol

/// Locking in the browser (docs/WEB.md, "Locked notes in the browser"): the browser sends
/// the note key wrapped under its passphrase key and the body and attachment chunks sealed
/// under the note key; the server stores them under the keybag layer and, in the same
/// transaction, drops the plaintext. Only the note's owner locks (a shared note cannot be).
/// Every change to a locked note, and reading its wrapped key, carries a proof of the key it
/// needs (docs/SECURITY.md, "Locked-note integrity on the web"); the store checks it.
struct WebLockedNoteRoutes {
    let services: WebServices
    typealias ProofBody = WebPassphraseRoutes.ProofBody

    struct LockRequest: Decodable {
        struct SealedAttachment: Decodable {
            var id: String
            var chunks: [Data]
        }
        /// Proves the current passphrase, under which `wrappedKey` is wrapped.
        var passphraseProof: ProofBody
        var wrappedKey: Data
        /// SHA-256 of the new note key's proof.
        var noteProofHash: Data
        var iv: Data
        var tag: Data
        var ciphertext: Data
        var attachments: [SealedAttachment]?
    }

    struct LockedBodyRequest: Decodable {
        var iv: Data
        var tag: Data
        var ciphertext: Data
        var noteProof: Data
        /// Needed only for a note with no note proof recorded yet: proves its passphrase.
        var passphraseProof: ProofBody?
        /// The revision the edit was made from: an older one than the stored is `409 conflict`
        /// with the stored `revision` (the browser merges and saves again).
        var baseRevision: Int64?
        /// Keep this body as a conflict copy of the note instead (the browser's merge found
        /// both versions changing the same lines).
        var asConflictCopy: Bool?
    }

    struct RewrapRequest: Decodable {
        /// Proves the current passphrase, under which `wrappedKey` is wrapped.
        var passphraseProof: ProofBody
        var wrappedKey: Data
        var noteProof: Data
        /// Needed only for a note with no note proof recorded yet: proves the note's passphrase.
        var earlierPassphraseProof: ProofBody?
    }

    /// `POST /api/notes/{id}/wrapped-key`.
    struct WrappedKeyAnswer: Encodable {
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
                passphraseID: body.passphraseProof.passphraseID, wrappedKey: body.wrappedKey, noteProofHash: body.noteProofHash,
                iv: body.iv, tag: body.tag, ciphertext: body.ciphertext, attachmentChunks: chunks)
            // The sealed note replaces the plain one, and its attachments are sealed again: room
            // for all of it, as for any other write.
            let bytes = body.ciphertext.count + body.wrappedKey.count + chunks.values.joined().reduce(0) { $0 + $1.count }
            let note = try await services.performOnNote("lock", context, id: id, ownerOnly: true) { store, account, _ in
                try await store.lockNote(id, sealedBy: sealed, proof: body.passphraseProof.proof, quota: services.quota(for: account, adding: bytes))
                return WebNoteSummary(try await store.summary(ofNote: id), for: account, folders: try await store.folders(account: account.id))
            }
            return try WebCoding.response(note)
        }
        router.put("/api/notes/:id/locked-body") { request, context -> Response in
            let id = try context.parameters.require("id")
            _ = try context.requireSession()
            let body = try await WebCoding.decodeWithoutSecret(LockedBodyRequest.self, request)
            let answer = try await services.performOnNote("save locked", context, id: id, ownerOnly: true) { store, account, _ in
                let quota = services.quota(for: account, adding: body.ciphertext.count)
                let outcome: NoteSaveOutcome
                if body.asConflictCopy == true {
                    let copy = try await store.saveLockedConflictCopy(
                        ofNote: id, iv: body.iv, tag: body.tag, ciphertext: body.ciphertext, noteProof: body.noteProof,
                        passphraseProof: body.passphraseProof?.proofOfKey, by: account.id, quota: quota)
                    outcome = NoteSaveOutcome(kind: .conflictCopy, note: try await store.summary(ofNote: id), conflictCopy: copy)
                } else {
                    let note = try await store.replaceLockedBody(
                        ofNote: id, iv: body.iv, tag: body.tag, ciphertext: body.ciphertext, noteProof: body.noteProof,
                        passphraseProof: body.passphraseProof?.proofOfKey, baseRevision: body.baseRevision, quota: quota)
                    outcome = NoteSaveOutcome(kind: .saved, note: note)
                }
                return WebSaveAnswer(outcome, for: account, folders: try await store.folders(account: account.id))
            }
            return try WebCoding.response(answer)
        }
        router.post("/api/notes/:id/rewrap") { request, context -> Response in
            let id = try context.parameters.require("id")
            _ = try context.requireSession()
            let body = try await WebCoding.decodeWithoutSecret(RewrapRequest.self, request)
            let note = try await services.performOnNote("rewrap", context, id: id, ownerOnly: true) { store, account, _ in
                try await store.rewrap(
                    id, proof: body.passphraseProof.proofOfKey, wrappedKey: body.wrappedKey, noteProof: body.noteProof,
                    earlierProof: body.earlierPassphraseProof?.proofOfKey, quota: services.quota(for: account, adding: body.wrappedKey.count))
                return WebNoteSummary(try await store.summary(ofNote: id), for: account, folders: try await store.folders(account: account.id))
            }
            return try WebCoding.response(note)
        }
        // The wrapped note key allows guessing the passphrase offline: only for a proof of it.
        router.post("/api/notes/:id/wrapped-key") { request, context -> Response in
            let id = try context.parameters.require("id")
            _ = try context.requireSession()
            let body = try await WebCoding.decodeWithoutSecret(ProofBody.self, request)
            let answer = try await services.performOnNote("wrapped key", context, id: id, ownerOnly: true) { store, account, _ in
                WrappedKeyAnswer(
                    passphraseID: body.passphraseID,
                    wrappedKey: try await store.wrappedKey(ofNote: id, proof: body.proofOfKey, account: account.id))
            }
            return try WebCoding.response(answer)
        }
    }
}
