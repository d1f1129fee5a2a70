import Foundation
import Hummingbird
import NIOCore
import TresorNotes
import TresorProtocol

/// Attachments travel as raw bytes, not Base64 JSON: `add` takes the file as its body with
/// the note, kind and name in headers; `get` answers with the bytes and the kind and name in
/// headers. Names are percent-encoded UTF-8 in headers. The `tresor` CLI only.
struct NoteAttachmentRoutes {
    let routing: NotesRouting

    func register(on router: Router<DaemonRequestContext>) {
        let routing = self.routing
        router.post(RouterPath(Route.notesAddAttachment)) { request, context -> AttachmentInfo in
            _ = try routing.store(context)  // refuse other clients before reading a large body
            let note = try Self.header(NotesWire.noteHeader, request)
            guard let kind = AttachmentKind(rawValue: try Self.header(NotesWire.kindHeader, request)) else {
                throw APIError(.param, "unknown attachment kind (one of \(AttachmentKind.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            guard let name = NotesWire.decodeHeader(try Self.header(NotesWire.nameHeader, request)) else {
                throw APIError(.param, "the \(NotesWire.nameHeader) header is not percent-encoded UTF-8")
            }
            let data = try await routing.collect(request, upTo: NotesWire.maximumAttachmentRequestBytes, what: "the attachment")
            // No passphrase here: a locked note needs its secure session open (`notes/session`).
            let info = try await routing.perform("attachment add", context, id: note) {
                try $0.addAttachment(to: note, kind: kind, name: name, data: data)
            }
            context.logger.info("notes: attachment added", metadata: ["id": "\(note)", "attachment": "\(info.id)", "bytes": "\(info.byteCount)"])
            return info
        }
        router.post(RouterPath(Route.notesGetAttachment)) { request, context -> Response in
            let body = try await request.decode(as: AttachmentRequest.self, context: context)
            let passphrase = try notesPassphrase(body.passphrase)
            let (info, data) = try await routing.perform("attachment get", context, id: body.note) {
                try $0.attachment(body.attachment, of: body.note, passphrase: passphrase)
            }
            var headers: HTTPFields = [.contentType: "application/octet-stream"]
            headers[HTTPFields.Element.Name(NotesWire.nameHeader)!] = NotesWire.encodeHeader(info.name)
            headers[HTTPFields.Element.Name(NotesWire.kindHeader)!] = info.kind.rawValue
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        router.post(RouterPath(Route.notesRemoveAttachment)) { request, context -> NoteSummary in
            let body = try await request.decode(as: RemoveAttachmentRequest.self, context: context)
            return try await routing.perform("attachment remove", context, id: body.note, keychainUnlock: false) { store in
                try store.removeAttachment(body.attachment, of: body.note)
                return try store.summary(ofNote: body.note)
            }
        }
    }

    private static func header(_ name: String, _ request: Request) throws -> String {
        guard let value = request.headers[HTTPFields.Element.Name(name)!], !value.isEmpty else {
            throw APIError(.param, "the \(name) header is missing")
        }
        return value
    }
}
