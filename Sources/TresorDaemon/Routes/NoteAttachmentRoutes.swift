import Foundation
import Hummingbird
import NIOCore
import NIOFoundationCompat
import TresorNotes
import TresorProtocol
import TresorSystem

/// Attachments travel as raw bytes, not Base64 JSON: `add` takes the file as its body with
/// the note, kind and name in headers; `get` answers with the bytes and the kind and name in
/// headers. Names are percent-encoded UTF-8 in headers. The `tresor` CLI, and applications with
/// their team's notes group (``NotesRouting/scope(_:)``).
struct NoteAttachmentRoutes {
    let routing: NotesRouting

    func register(on router: Router<DaemonRequestContext>) {
        let routing = self.routing
        router.post(RouterPath(Route.notesAddAttachment)) { request, context -> AttachmentInfo in
            let (store, account) = try routing.scope(context)  // refuse other clients before reading a large body
            let note = try Self.header(NotesWire.noteHeader, request)
            guard let kind = AttachmentKind(rawValue: try Self.header(NotesWire.kindHeader, request)) else {
                throw APIError(.param, "unknown attachment kind (one of \(AttachmentKind.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            guard let name = NotesWire.decodeHeader(try Self.header(NotesWire.nameHeader, request)) else {
                throw APIError(.param, "the \(NotesWire.nameHeader) header is not percent-encoded UTF-8")
            }
            let excluded = request.headers[HTTPFields.Element.Name(NotesWire.excludeFromBackupHeader)!] == "1"
            let info = try await routing.logged("attachment add", context, id: note) {
                // No passphrase here: a locked note needs its secure session open (`notes/session`).
                // Checked before the body is read, so a refusal costs the client no upload.
                let upload = try await offloaded {
                    try routing.prepare(store, for: account)
                    let begin = { @Sendable (store: NotesStore) throws -> AttachmentUpload in
                        try NotesRouting.checkAccess(store, note: note, for: account, ownerOnly: true)
                        return try store.beginAttachment(to: note, kind: kind, name: name, excludedFromBackup: excluded)
                    }
                    return try account == .local ? routing.withKeychainUnlock(store, begin) : begin(store)
                }
                return try await Self.receive(request.body, into: upload)
            }
            context.logger.info("notes: attachment added", metadata: ["id": "\(note)", "attachment": "\(info.id)", "bytes": "\(info.byteCount)"])
            return info
        }
        router.post(RouterPath(Route.notesGetAttachment)) { request, context -> Response in
            var decoded = try await request.decode(as: AttachmentRequest.self, context: context)
            let passphrase = try Passphrase.taking(&decoded.passphrase)
            let body = decoded
            let (info, chunks, first) = try await routing.perform("attachment get", context, id: body.note) { store, account in
                try NotesRouting.checkAccess(store, note: body.note, for: account)
                let (info, chunks) = try store.openAttachment(body.attachment, of: body.note, passphrase: passphrase)
                // Opened before the answer begins: a first chunk found damaged is an error answer,
                // not an answer cut short at its first byte.
                return (info, chunks, try chunks.next())
            }
            var headers: HTTPFields = [.contentType: "application/octet-stream"]
            headers[HTTPFields.Element.Name(NotesWire.nameHeader)!] = NotesWire.encodeHeader(info.name)
            headers[HTTPFields.Element.Name(NotesWire.kindHeader)!] = info.kind.rawValue
            return Response(status: .ok, headers: headers, body: Self.answer(chunks, first: first, note: body.note, context))
        }
        router.post(RouterPath(Route.notesAttachmentBackup)) { request, context -> AttachmentInfo in
            let body = try await request.decode(as: AttachmentBackupRequest.self, context: context)
            return try await routing.perform("attachment backup flag", context, id: body.note, keychainUnlock: false) { store, account in
                try NotesRouting.checkAccess(store, note: body.note, for: account, ownerOnly: true)
                return try store.setExcludedFromBackup(body.attachment, of: body.note, excluded: body.excluded)
            }
        }
        router.post(RouterPath(Route.notesRemoveAttachment)) { request, context -> NoteSummary in
            var decoded = try await request.decode(as: RemoveAttachmentRequest.self, context: context)
            let passphrase = try Passphrase.taking(&decoded.passphrase)
            let body = decoded
            return try await routing.perform("attachment remove", context, id: body.note, keychainUnlock: false) { store, account in
                try NotesRouting.checkAccess(store, note: body.note, for: account, ownerOnly: true)
                // Removing destroys content: a locked one needs the note's key, as opening it does.
                try store.requireKey(ofAttachment: body.attachment, of: body.note, passphrase: passphrase)
                try store.removeAttachment(body.attachment, of: body.note, by: .keyHolder)
                return try store.summary(ofNote: body.note)
            }
        }
    }

    /// Hands the body to `upload` as it arrives, a chunk's worth at a time, sealed and written off
    /// the event loop; the socket reads no faster than that (``SocketRequestHandler``), so the
    /// daemon holds a few MiB of an upload of any size.
    private static func receive(_ body: RequestBody, into upload: AttachmentUpload) async throws -> AttachmentInfo {
        let batchBytes = AttachmentUpload.preferredAppendBytes
        var batch = Data(capacity: batchBytes)
        do {
            for try await part in body {
                batch.append(contentsOf: part.readableBytesView)
                guard batch.count >= batchBytes else { continue }
                let full = batch
                batch = Data(capacity: batchBytes)
                try await offloaded { try upload.append(full) }
            }
            let last = batch
            return try await offloaded {
                try upload.append(last)
                return try upload.finish()
            }
        } catch is NIOTooManyBytesError {
            upload.abandon()
            throw APIError(.requestTooLarge, "the attachment is larger than \(upload.byteLimit) bytes")
        } catch {
            upload.abandon()
            throw error
        }
    }

    /// The answer's body: `first`, then each chunk opened off the event loop and written to the
    /// socket before the next is read (``SocketRequestHandler`` waits for each write), so the
    /// daemon holds a chunk or two of an attachment of any size. A chunk that fails to open once
    /// the answer has begun ends the connection, short of the declared length: the client sees
    /// a cut answer.
    private static func answer(_ chunks: AttachmentChunks, first: Data?, note: String, _ context: DaemonRequestContext) -> ResponseBody {
        ResponseBody(contentLength: chunks.byteCount) { writer in
            do {
                var next = first
                while let chunk = next {
                    try await writer.write(ByteBuffer(data: chunk))
                    next = try await offloaded { try chunks.next() }
                }
            } catch {
                context.logger.notice(
                    "notes: attachment get failed while answering",
                    metadata: ["id": "\(note.prefix(64))", "error": "\(ErrorMiddleware.apiError(for: error).code)"])
                throw error
            }
            try await writer.finish(nil)
        }
    }

    private static func header(_ name: String, _ request: Request) throws -> String {
        guard let value = request.headers[HTTPFields.Element.Name(name)!], !value.isEmpty else {
            throw APIError(.param, "the \(name) header is missing")
        }
        return value
    }
}
