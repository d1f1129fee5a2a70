import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOFoundationCompat
import TresorNotesDomain
import TresorProtocol

/// A note's attachments: upload raw bytes (≤ 32 MiB), download, leave out of backups, remove. Both directions go a
/// piece at a time — the upload is handed to the store 1 MiB at a time as it arrives, the
/// download written as the store reads it — so an attachment costs the server a few MiB
/// whatever its size. A locked note's attachment downloads as its sealed chunks, one after
/// another, for the browser to open; uploading to a locked note is refused (the server would
/// have to seal it under the note key, which it must not hold).
struct WebAttachmentRoutes {
    let services: WebServices

    /// `PATCH …/attachments/{aid}`: what changes of the attachment (only its backup flag does).
    struct AttachmentChangeRequest: Decodable {
        var excludedFromBackup: Bool
    }

    /// `DELETE …/attachments/{aid}` of a locked note: the proofs its other changes carry (an
    /// unlocked note's removal has no body).
    struct AttachmentRemovalRequest: Decodable {
        var noteProof: Data?
        /// Needed only for a note with no note proof recorded yet: proves its passphrase.
        var passphraseProof: WebPassphraseRoutes.ProofBody?
    }

    /// An upload's attachment name: its `Tresor-Attachment-Name` header, else — from a client
    /// that puts it in the URL — the `name` query parameter read as a form writes it (`+` a space).
    /// - Throws: `APIError.param` when neither is there, or it is not percent-encoded UTF-8.
    static func attachmentName(of request: Request) throws -> String {
        let header = HTTPField.Name.tresorAttachmentName
        if let value = request.headers[header] {
            guard let name = value.removingPercentEncoding else { throw APIError(.param, "\(header) is not percent-encoded UTF-8") }
            return name
        }
        let pairs = (request.uri.query ?? "").split(separator: "&").map { $0.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false) }
        guard let value = pairs.first(where: { $0.first == "name" && $0.count == 2 })?.last else {
            throw APIError(.param, "name is missing: send it in the \(header) header")
        }
        guard let name = value.replacing("+", with: " ").removingPercentEncoding else { throw APIError(.param, "name is not percent-encoded UTF-8") }
        return name
    }

    func register(on router: Router<WebRequestContext>) {
        let services = self.services
        router.post("/api/notes/:id/attachments") { request, context -> Response in
            let id = try context.parameters.require("id")
            _ = try context.requireSession()
            guard let kindName = request.uri.queryParameters.get("kind"), let kind = AttachmentKind(rawValue: kindName) else {
                throw APIError(.param, "kind must be one of \(AttachmentKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let name = try Self.attachmentName(of: request)
            let limit = WebLimits.attachmentBytes
            if let length = request.headers[.contentLength].flatMap(Int.init), length > limit { throw WebCoding.tooLarge(limit) }
            // Attachments are the owner's: a participant edits the title and body only.
            let info = try await services.performOnNote("attach", context, id: id, ownerOnly: true) { store, account, _ in
                let writer = try await store.beginAttachment(to: id, kind: kind, name: name)
                do {
                    let count = try await writer.append(
                        streaming: request.body.map(\.readableBytesView), limit: limit, tooLarge: { WebCoding.tooLarge(limit) })
                    return try await writer.finish(quota: services.quota(for: account, adding: count))
                } catch {
                    await writer.abandon()
                    throw error
                }
            }
            return try WebCoding.response(info, status: .created)
        }
        router.get("/api/notes/:id/attachments/:aid") { _, context -> Response in
            let id = try context.parameters.require("id"), attachmentID = try context.parameters.require("aid")
            let reader = try await services.performOnNote("attachment", context, id: id) { store, _, _ in
                try await store.readAttachment(attachmentID, of: id)
            }
            // Always opaque bytes: the browser makes a blob of them; nothing is rendered from here.
            return Response(
                status: .ok,
                headers: [.contentType: "application/octet-stream", .contentDisposition: "attachment"],
                body: ResponseBody(contentLength: reader.byteCount) { writer in
                    while let piece = try await reader.next() { try await writer.write(ByteBuffer(data: piece)) }
                    try await writer.finish(nil)
                })
        }
        // The flag is no content: an owner changes it on a locked note too, with no secure session.
        router.patch("/api/notes/:id/attachments/:aid") { request, context -> Response in
            let id = try context.parameters.require("id"), attachmentID = try context.parameters.require("aid")
            let change = try await WebCoding.decode(AttachmentChangeRequest.self, request)
            let info = try await services.performOnNote("attachment-backup", context, id: id, ownerOnly: true) { store, _, _ in
                try await store.setExcludedFromBackup(attachmentID, of: id, excluded: change.excludedFromBackup)
            }
            return try WebCoding.response(info)
        }
        // Removing destroys content: a locked note's attachment needs a proof of its key, as its
        // other changes do.
        router.delete("/api/notes/:id/attachments/:aid") { request, context -> Response in
            let id = try context.parameters.require("id"), attachmentID = try context.parameters.require("aid")
            let body = try await WebCoding.body(request, limit: WebLimits.jsonBytes)
            let proofs = body.isEmpty ? nil : try WebCoding.decodeWithoutSecret(AttachmentRemovalRequest.self, body)
            let authority = AttachmentRemovalAuthority.browser(noteProof: proofs?.noteProof, passphraseProof: proofs?.passphraseProof?.proofOfKey)
            try await services.performOnNote("detach", context, id: id, ownerOnly: true) { store, _, _ in
                try await store.removeAttachment(attachmentID, of: id, by: authority)
            }
            return Response(status: .noContent)
        }
    }
}
