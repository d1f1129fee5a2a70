import Foundation
import Hummingbird
import NIOCore
import TresorNotes
import TresorProtocol

/// A note's attachments: upload raw bytes (≤ 32 MiB), download, remove. A locked note's
/// attachment downloads as its sealed chunks, one after another, for the browser to open;
/// uploading to a locked note is refused (the server would have to seal it under the note
/// key, which it must not hold).
struct WebAttachmentRoutes {
    let services: WebServices

    func register(on router: Router<WebRequestContext>) {
        let services = self.services
        router.post("/api/notes/:id/attachments") { request, context -> Response in
            let id = try context.parameters.require("id")
            _ = try context.requireSession()
            guard let kindName = request.uri.queryParameters.get("kind"), let kind = AttachmentKind(rawValue: kindName) else {
                throw APIError(.param, "kind must be one of \(AttachmentKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard let name = request.uri.queryParameters.get("name") else { throw APIError(.param, "name is missing") }
            let data = try await WebCoding.body(request, limit: WebLimits.attachmentBytes)
            // Attachments are the owner's: a participant edits the title and body only.
            let info = try await services.performOnNote("attach", context, id: id, ownerOnly: true) { store, account, _ in
                guard try !store.summary(ofNote: id).isLocked else {
                    throw APIError(.wrongLockState, "attachments are added to unlocked notes in the web client")
                }
                return try services.withinQuota(store, account: account, adding: data.count) {
                    try store.addAttachment(to: id, kind: kind, name: name, data: data)
                }
            }
            return try WebCoding.response(WebAttachment(info), status: .created)
        }
        router.get("/api/notes/:id/attachments/:aid") { _, context -> Response in
            let id = try context.parameters.require("id"), attachmentID = try context.parameters.require("aid")
            let data = try await services.performOnNote("attachment", context, id: id) { store, _, _ -> Data in
                if try store.summary(ofNote: id).isLocked {
                    return try store.sealedChunks(ofAttachment: attachmentID, note: id).reduce(into: Data()) { $0.append($1) }
                }
                return try store.attachment(attachmentID, of: id).1
            }
            // Always opaque bytes: the browser makes a blob of them; nothing is rendered from here.
            return Response(
                status: .ok,
                headers: [.contentType: "application/octet-stream", .contentDisposition: "attachment"],
                body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        router.delete("/api/notes/:id/attachments/:aid") { _, context -> Response in
            let id = try context.parameters.require("id"), attachmentID = try context.parameters.require("aid")
            try await services.performOnNote("detach", context, id: id, ownerOnly: true) { store, _, _ in
                try store.removeAttachment(attachmentID, of: id)
            }
            return Response(status: .noContent)
        }
    }
}
