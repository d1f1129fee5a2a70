import Foundation
import NIOCore
import TresorSyncProtocol

// Attachments sync (docs/SYNC.md, "Attachments"): an attachment of one of the account's notes,
// sent and read by its id with its bytes streamed — never the whole attachment in memory.
extension SyncClient {
    /// Sends an attachment of note `noteID` (`PUT /v1/sync/notes/{note}/attachments/{id}`), its
    /// bytes streamed as `pieces` gives them. The server stores it under its id — or finds it
    /// stored already, for a retry whose answer was lost.
    /// - Parameters:
    ///   - attachment: its id, kind, name and size.
    ///   - noteID: the server's id of its note.
    ///   - length: the bytes of its body: its size, or for a locked note's (`isSealed`) its
    ///     sealed chunks' size.
    ///   - pieces: makes the reader of its bytes: each call the next piece, nil after the last.
    ///     Called again when the request is sent again after signing in anew.
    /// - Returns: the attachment as the server holds it, and the revision step of its note the
    ///   upload made (nil when it was stored already, or from an older server).
    /// - Throws: ``SyncClientError``; `refused` with `tooLarge` over the size limit or the
    ///   account's quota, `notFound` for a note the account does not own, `conflict` for a
    ///   locked note or an id another attachment has.
    public func sendAttachment(
        _ attachment: SyncAttachment, ofNote noteID: String, length: Int, pieces: @escaping @Sendable () throws -> @Sendable () async throws -> Data?
    ) async throws -> SyncAttachmentChanged {
        var request = SyncHTTPRequest(
            method: "PUT", url: server.url(try Self.attachmentPath(noteID, attachment.id)),
            headers: [
                ("Accept", "application/json"), ("Content-Type", "application/octet-stream"), (SyncAttachment.kindHeader, attachment.kind),
                (SyncAttachment.nameHeader, SyncAttachment.headerValue(name: attachment.name)),
                (SyncAttachment.sealedHeader, attachment.isSealed == true ? "true" : "false"),
                (SyncAttachment.excludedFromBackupHeader, attachment.excludedFromBackup == true ? "true" : "false"),
            ] + (attachment.created.map { [(SyncAttachment.createdHeader, SyncAttachment.headerValue(created: $0))] } ?? []))
        var response = try await http.send(
            try await authorized(request), streaming: AttachmentPieces(read: try pieces()), length: length, limit: Self.answerLimit)
        if response.status == 401 {
            try await signIn()
            request = try await authorized(request)
            response = try await http.send(
                request, streaming: AttachmentPieces(read: try pieces()), length: length, limit: Self.answerLimit)
        }
        if response.status == 413, (try? SyncJSON.decoder.decode(SyncErrorBody.self, from: response.body)) == nil {
            // A proxy's refusal (its own page, not the relay's JSON): this attachment is too
            // large for it; the others may go.
            throw SyncClientError.refused(status: 413, code: .tooLarge, message: "a proxy in front of the server refused a body that large")
        }
        guard (200..<300).contains(response.status) else { throw Self.attachmentRefusal(response) }
        guard let stored = try? SyncJSON.decoder.decode(SyncAttachmentChanged.self, from: response.body) else {
            throw SyncClientError.garbage(
                "PUT of an attachment answered \(response.status) with \(response.body.count) bytes that are not an attachment")
        }
        return stored
    }

    /// Reads an attachment of note `noteID` (`GET /v1/sync/notes/{note}/attachments/{id}`),
    /// handing its bytes to `take` as they arrive.
    /// - Parameters:
    ///   - id: the attachment.
    ///   - noteID: the server's id of its note.
    ///   - take: takes each piece as it arrives.
    /// - Returns: how many bytes were handed over.
    /// - Throws: ``SyncClientError``, and what `take` throws.
    @discardableResult
    public func readAttachment(_ id: String, ofNote noteID: String, into take: @Sendable (Data) async throws -> Void) async throws -> Int {
        let request = SyncHTTPRequest(method: "GET", url: server.url(try Self.attachmentPath(noteID, id)))
        var (status, body) = try await http.open(try await authorized(request), for: Self.attachmentSeconds)
        if status == 401 {
            try await signIn()
            (status, body) = try await http.open(try await authorized(request), for: Self.attachmentSeconds)
        }
        guard status == 200 else {
            let answer = try await body.collect(upTo: Self.answerLimit)
            throw Self.attachmentRefusal(SyncHTTPResponse(status: status, body: Data(answer.readableBytesView)))
        }
        var count = 0
        var pieces = body.makeAsyncIterator()
        while true {
            let piece: ByteBuffer?
            do {
                piece = try await pieces.next()
            } catch {
                throw SyncHTTP.failure(error)
            }
            guard let piece else { break }
            count += piece.readableBytes
            try await take(Data(piece.readableBytesView))
        }
        return count
    }

    /// Removes an attachment of note `noteID` (`DELETE /v1/sync/notes/{note}/attachments/{id}`);
    /// one removed already is no error.
    /// - Parameters:
    ///   - id: the attachment.
    ///   - noteID: the server's id of its note.
    /// - Returns: the note's revisions before and after the removal; nil when it was removed
    ///   already, or from a server that does not say them.
    /// - Throws: ``SyncClientError``.
    @discardableResult
    public func removeAttachment(_ id: String, ofNote noteID: String) async throws -> SyncNoteRevisionStep? {
        let response = try await exchange("DELETE", try Self.attachmentPath(noteID, id), query: [], body: Optional<Data>.none, signedIn: true)
        guard (200..<300).contains(response.status) else { throw Self.attachmentRefusal(response) }
        guard response.status == 200 else { return nil }
        guard let removal = try? SyncJSON.decoder.decode(SyncNoteRevisionStep.self, from: response.body) else {
            throw SyncClientError.garbage("DELETE of an attachment answered 200 with \(response.body.count) bytes that are not a removal")
        }
        return removal
    }

    /// Leaves an attachment of note `noteID` out of backups, or puts it back in (`PATCH
    /// /v1/sync/notes/{note}/attachments/{id}`).
    /// - Parameters:
    ///   - excluded: whether backups leave it out.
    ///   - id: the attachment.
    ///   - noteID: the server's id of its note.
    /// - Returns: the attachment as the server holds it, and the revision step the change made
    ///   of its note; nil from a server that does not keep the flag (an older Tresor: `404` or
    ///   `405` without the relay's error body).
    /// - Throws: ``SyncClientError``; `refused` with `notFound` for an attachment or note gone.
    public func setExcludedFromBackup(_ excluded: Bool, attachment id: String, ofNote noteID: String) async throws
        -> SyncAttachmentChanged?
    {
        let response = try await exchange(
            "PATCH", try Self.attachmentPath(noteID, id), query: [], body: SyncAttachmentBackupChange(excludedFromBackup: excluded), signedIn: true)
        if [404, 405].contains(response.status), (try? SyncJSON.decoder.decode(SyncErrorBody.self, from: response.body)) == nil { return nil }
        guard (200..<300).contains(response.status) else { throw Self.refusal(response) }
        guard let stored = try? SyncJSON.decoder.decode(SyncAttachmentChanged.self, from: response.body) else {
            throw SyncClientError.garbage(
                "PATCH of an attachment answered \(response.status) with \(response.body.count) bytes that are not an attachment")
        }
        return stored
    }

    /// A refused attachment request's error: ``SyncClientError/attachmentsUnsupported`` for a
    /// `404` without the relay's error body — a server without the attachment routes (an older
    /// Tresor) — else the relay's refusal.
    static func attachmentRefusal(_ response: SyncHTTPResponse) -> SyncClientError {
        guard response.status == 404, (try? SyncJSON.decoder.decode(SyncErrorBody.self, from: response.body)) == nil else {
            return refusal(response)
        }
        return .attachmentsUnsupported
    }

    /// The longest an attachment's download may take in all (between bytes, the timeout holds).
    static let attachmentSeconds: TimeInterval = 3600

    static func attachmentPath(_ noteID: String, _ id: String) throws -> String {
        "/v1/sync/notes/\(try pathComponent(noteID))/attachments/\(try pathComponent(id))"
    }
}

/// An attachment's bytes as a request body: each piece read when the connection asks for it.
struct AttachmentPieces: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let read: @Sendable () async throws -> Data?

    struct AsyncIterator: AsyncIteratorProtocol {
        let read: @Sendable () async throws -> Data?

        mutating func next() async throws -> ByteBuffer? {
            try await read().map { ByteBuffer(bytes: $0) }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(read: read) }
}
