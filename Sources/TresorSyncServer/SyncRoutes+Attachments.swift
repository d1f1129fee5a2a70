import Foundation
import Hummingbird
import NIOCore
import TresorNotesDomain
import TresorSyncProtocol

/// Attachments sync (docs/SYNC.md, "Attachments"): a device sends an attachment of one of its
/// account's notes by its id, streamed, through the web store's own upload (its chunks, size
/// limit and the account's quota; a locked note's as its sealed chunks), reads one streamed,
/// leaves one out of backups or puts it back in, and removes one. Each is the account's own: another account's note or attachment is `notFound`.
extension SyncRoutes {
    func registerAttachments<Context: SyncRequestContext>(on router: Router<Context>) {
        router.put("/v1/sync/notes/:note/attachments/:id") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let (noteID, id) = try Self.attachmentPath(context)
                return try await asDevice(caller) { try await putAttachment(request, noteID: noteID, id: id, caller: caller) }
            }
        }
        router.get("/v1/sync/notes/:note/attachments/:id") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let (noteID, id) = try Self.attachmentPath(context)
                // A note shared with the account: its attachments are the owner's, and open on the device too.
                if try await !sharesNote(noteID, with: caller.account) { _ = try await ownNoteOrRefuse(noteID, of: caller.account) }
                let reader = try await relay.accounts.readAttachment(id, of: noteID)
                return Response(
                    status: .ok, headers: [.contentType: "application/octet-stream", .cacheControl: "no-store"],
                    body: ResponseBody(contentLength: reader.byteCount) { writer in
                        while let piece = try await reader.next() { try await writer.write(ByteBuffer(bytes: piece)) }
                        try await writer.finish(nil)
                    })
            }
        }
        router.patch("/v1/sync/notes/:note/attachments/:id") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let (noteID, id) = try Self.attachmentPath(context)
                let change = try await decode(SyncAttachmentBackupChange.self, request)
                let note = try await ownNoteOrRefuse(noteID, of: caller.account)
                let (info, after) = try await asDevice(caller) {
                    let info = try await relay.accounts.setExcludedFromBackup(id, of: noteID, excluded: change.excludedFromBackup)
                    // Read after the change's commit: a change made between shows as a larger step.
                    return (info, try await relay.accounts.summary(ofNote: noteID).revision)
                }
                let attachment = Self.syncAttachment(
                    info, isSealed: try await sealedAttachmentIDs(ofNote: noteID, isLocked: note.isLocked).contains(id))
                let step = after == note.revision ? nil : SyncNoteRevisionStep(revisionBefore: note.revision, revision: after)
                return try reply(SyncAttachmentChanged(attachment: attachment, step: step))
            }
        }
        router.delete("/v1/sync/notes/:note/attachments/:id") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let (noteID, id) = try Self.attachmentPath(context)
                let removal = try await asDevice(caller) { () -> SyncNoteRevisionStep? in
                    let before = try await ownNoteOrRefuse(noteID, of: caller.account).revision
                    do {
                        try await relay.accounts.removeAttachment(id, of: noteID, by: .syncDevice)
                    } catch NotesError.notFound {
                        // Removed already (a retry, or another device): the removal holds.
                        return nil
                    }
                    // Read after the removal's commit: a change made between shows as a larger step.
                    return SyncNoteRevisionStep(revisionBefore: before, revision: try await relay.accounts.summary(ofNote: noteID).revision)
                }
                return try removal.map { try reply($0) } ?? Response(status: .noContent)
            }
        }
    }

    /// Stores the attachment in `request`'s body under `id` — or finds it stored already, for a
    /// retry whose answer was lost — and answers it (`201`, or `200` when it was there).
    func putAttachment(_ request: Request, noteID: String, id: String, caller: SyncCaller) async throws -> Response {
        guard let kindName = Self.header(SyncAttachment.kindHeader, of: request),
            let kind = AttachmentKind(rawValue: kindName)
        else { throw SyncRefusal(.invalid, "\(SyncAttachment.kindHeader) must be one of \(AttachmentKind.allCases.map(\.rawValue))") }
        guard let nameValue = Self.header(SyncAttachment.nameHeader, of: request),
            let name = SyncAttachment.name(headerValue: nameValue)
        else { throw SyncRefusal(.invalid, "\(SyncAttachment.nameHeader) must be the percent-encoded name") }
        let limit = relay.attachmentBytes
        guard let length = request.headers[.contentLength].flatMap(Int.init) else {
            throw SyncRefusal(.invalid, "send the attachment's length (Content-Length)")
        }
        guard length <= limit else { throw SyncRefusal(.tooLarge, "an attachment is at most \(limit) bytes") }
        let note = try await ownNoteOrRefuse(noteID, of: caller.account)
        let sealed = Self.header(SyncAttachment.sealedHeader, of: request) == "true"
        let excluded = Self.header(SyncAttachment.excludedFromBackupHeader, of: request) == "true"
        let created = try Self.header(SyncAttachment.createdHeader, of: request).map {
            guard let date = SyncAttachment.created(headerValue: $0) else {
                throw SyncRefusal(.invalid, "\(SyncAttachment.createdHeader) must be a date in ISO 8601")
            }
            return date
        }
        guard !sealed || kind.isLockable else { throw SyncRefusal(.invalid, "a locked note takes no \(kind.rawValue) attachment") }
        // A lock removed on the device: an attachment held here sealed comes first as its
        // plaintext, the unlocked copy the lock's removal puts in place.
        if note.isLocked && !sealed, try await sealedAttachmentIDs(ofNote: noteID, isLocked: true).contains(id) {
            return try await putUnlockedCopy(request, noteID: noteID, id: id, length: length)
        }
        // A locked note's attachment comes sealed under the note key, which the server never
        // holds: it stores the chunks as they are, as the web client's.
        guard sealed == note.isLocked else {
            throw SyncRefusal(.conflict, note.isLocked ? "the note is locked here: send its sealed chunks" : "the note is not locked here")
        }
        if let stored = try await relay.accounts.listedAttachments(ofNote: noteID).first(where: { $0.id == id }) {
            let storedSealed = try await sealedAttachmentIDs(ofNote: noteID, isLocked: note.isLocked).contains(id)
            if storedSealed == sealed {
                // A retry whose answer was lost: the flag may not have been set yet.
                let info = try await flagged(stored, of: noteID, excluded: excluded)
                return try reply(SyncAttachmentChanged(attachment: Self.syncAttachment(info, isSealed: sealed), step: nil))
            }
            // Sent before the note's lock (or its removal) travelled: the device sends it anew as
            // the note is now, and this replaces what no browser or device could open any more.
            try await relay.accounts.removeAttachment(id, of: noteID, by: .syncDevice)
        }
        let writer =
            sealed
            ? try await lockedNotes().beginSyncedLockedAttachment(
                to: noteID, kind: kind, name: name, id: id, created: created, excludedFromBackup: excluded)
            : try await relay.accounts.beginAttachment(to: noteID, kind: kind, name: name, id: id, created: created, excludedFromBackup: excluded)
        let info = try await receive(request, into: writer, length: length) { count in
            relay.accountQuotaBytes.map { StorageQuota(limitBytes: $0, addingBytes: count) }
        }
        let attachment = Self.syncAttachment(info, isSealed: sealed)
        // Read after the upload's commit: a change made between shows as a larger step.
        let after = try await relay.accounts.summary(ofNote: noteID).revision
        return try reply(
            SyncAttachmentChanged(attachment: attachment, step: SyncNoteRevisionStep(revisionBefore: note.revision, revision: after)),
            status: .created)
    }

    /// Attachment `info` of note `noteID` with its excluded-from-backup flag as the device sent it.
    func flagged(_ info: AttachmentInfo, of noteID: String, excluded: Bool) async throws -> AttachmentInfo {
        guard (info.excludedFromBackup ?? false) != excluded else { return info }
        return try await relay.accounts.setExcludedFromBackup(info.id, of: noteID, excluded: excluded)
    }

    /// Stores the plaintext in `request`'s body as the unlocked copy of attachment `id` of locked
    /// note `noteID` — or finds it whole already, for a retry whose answer was lost — and answers
    /// it (`201`, or `200` when it was there).
    func putUnlockedCopy(_ request: Request, noteID: String, id: String, length: Int) async throws -> Response {
        guard let writer = try await lockedNotes().beginUnlockedCopy(ofAttachment: id, note: noteID) else {
            guard let stored = try await relay.accounts.listedAttachments(ofNote: noteID).first(where: { $0.id == id }) else {
                throw SyncRefusal(.notFound, "no such attachment of this note")
            }
            return try reply(Self.syncAttachment(stored, isSealed: false))
        }
        let info = try await receive(request, into: writer, length: length) { _ in nil }
        return try reply(Self.syncAttachment(info, isSealed: false), status: .created)
    }

    /// Streams `request`'s body — exactly `length` bytes — into `writer` and finishes it under the
    /// quota `quota` gives for that many bytes; anything that fails abandons what was written.
    private func receive(
        _ request: Request, into writer: any AttachmentWriter, length: Int, quota: (Int) -> StorageQuota?
    ) async throws -> AttachmentInfo {
        do {
            let count = try await writer.append(
                streaming: request.body.map(\.readableBytesView), limit: length,
                tooLarge: { SyncRefusal(.tooLarge, "the body is longer than its Content-Length") })
            guard count == length else { throw SyncRefusal(.invalid, "the body is shorter than its Content-Length") }
            return try await writer.finish(quota: quota(count))
        } catch {
            await writer.abandon()
            throw error
        }
    }

    /// The first value of header `name` in `request`.
    static func header(_ name: String, of request: Request) -> String? {
        request.headers.first { $0.name.canonicalName == name.lowercased() }?.value
    }

    /// The ids of note `id`'s attachments stored sealed under the note key; a store that keeps
    /// no locked notes of devices has them sealed as its notes are.
    func sealedAttachmentIDs(ofNote id: String, isLocked: Bool) async throws -> Set<String> {
        guard let store = relay.accounts as? any LockedNoteSyncStore else {
            return isLocked ? Set(try await relay.accounts.listedAttachments(ofNote: id).map(\.id)) : []
        }
        return try await store.sealedAttachmentIDs(ofNote: id)
    }

    static func syncAttachment(_ info: AttachmentInfo, isSealed: Bool) -> SyncAttachment {
        SyncAttachment(
            id: info.id, kind: info.kind.rawValue, name: info.name, byteCount: info.byteCount, isSealed: isSealed,
            excludedFromBackup: info.excludedFromBackup ?? false, created: info.created)
    }

    /// Note `id` when `account` owns it.
    /// - Throws: ``SyncRefusal`` `notFound` for a note that is not the account's.
    func ownNoteOrRefuse(_ id: String, of account: AccountID) async throws -> NoteSummary {
        guard let note = try await ownNote(id, of: account) else { throw SyncRefusal(.notFound, "no such note of this account") }
        return note
    }

    /// The note's and the attachment's ids from the path; an attachment id is a lowercase UUID.
    static func attachmentPath(_ context: some RequestContext) throws -> (note: String, id: String) {
        let noteID = try context.parameters.require("note"), id = try context.parameters.require("id")
        guard (1...64).contains(noteID.count) else { throw SyncRefusal(.invalid, "a note id is 1 to 64 characters") }
        guard SyncAttachment.isWellFormedID(id) else { throw SyncRefusal(.invalid, "an attachment id is a lowercase UUID") }
        return (noteID, id)
    }
}
