import Foundation
import TresorNotes
import TresorNotesDomain
import TresorProtocol
import TresorSyncClient
import TresorSyncProtocol

extension SyncAccount {
    /// One sync of the synced notes' attachments (docs/SYNC.md, "Attachments"), after their
    /// notes went and came: applies the server's listings of pulled notes — fetches what this
    /// device lacks, streamed into the notes store chunk by chunk, and removes what the server
    /// no longer has — then sends the removals made here and the attachments the server lacks,
    /// streamed from their sealed files. An attachment the server refuses (too large, over the
    /// quota, its note gone or locked) stays waiting, and `tresor sync status` says why; the
    /// others go on. A server without the attachment routes (an older Tresor) leaves them all
    /// waiting, and the notes synced.
    /// - Parameters:
    ///   - notes: the home's notes.
    ///   - client: the signed-in client of the sync account.
    /// - Returns: whether anything was sent or removed on the server (its notes have new revisions).
    /// - Throws: ``SyncClientError``, `NotesError`.
    func syncAttachments(_ notes: NotesStore, client: SyncClient) async throws -> Bool {
        var report = AttachmentSyncReport()
        defer { lastAttachmentSync = report }
        do {
            try await syncAttachments(notes, client: client, report: &report)
        } catch SyncClientError.attachmentsUnsupported {
            report.serverTakesNone = true
        }
        return report.changedServer
    }

    private func syncAttachments(_ notes: NotesStore, client: SyncClient, report: inout AttachmentSyncReport) async throws {
        // The server's flags first: a change made here since goes below, and wins.
        try notes.applyListedBackupExclusions()
        var work = try notes.attachmentSyncWork()
        var fetched = false
        // Listings applied in full are finished together, in one transaction, also when a later
        // fetch fails; one applied and not finished is looked at again, never fetched twice.
        var finished: [String] = []
        do {
            for listing in work.listings {
                // Removals first: one may make way for the sealed copy of the same attachment.
                for id in listing.remove { try notes.removeSyncedAttachment(id, of: listing.localNoteID) }
                var complete = true
                for attachment in listing.fetch {
                    do {
                        try await Self.fetch(attachment, of: listing, notes, client)
                        fetched = true
                    } catch SyncClientError.refused(let status, let code, let message) where Self.refusesOneNote(status: status, code: code) {
                        report.refuse(attachment.id, code, message)
                        complete = false
                    } catch NotesError.invalid, NotesError.wrongLockState {
                        complete = false
                    }
                }
                if complete { finished.append(listing.localNoteID) }
            }
        } catch {
            try? notes.finishAttachmentListings(of: finished)
            throw error
        }
        try notes.finishAttachmentListings(of: finished)
        // One fetched into a note whose lock was removed here is the server's only sealed: its
        // plaintext goes in this sync, before the removal goes again.
        if fetched { work = try notes.attachmentSyncWork() }
        for entry in work.removeOnServer {
            let removal: SyncNoteRevisionStep?
            do {
                removal = try await client.removeAttachment(entry.attachmentID, ofNote: entry.serverNoteID)
            } catch SyncClientError.refused(let status, let code, let message) where Self.refusesOneNote(status: status, code: code) {
                report.refuse(entry.attachmentID, code, message)
                continue
            }
            try notes.recordAttachmentRemovalSent(
                entry.attachmentID, of: entry.localNoteID, revisions: removal.map { ($0.revisionBefore, $0.revision) })
            report.changedServer = true
        }
        for entry in work.send {
            let stored: SyncAttachmentChanged
            do {
                stored = try await Self.send(entry, notes, client)
            } catch SyncClientError.refused(let status, let code, let message) where Self.refusesOneNote(status: status, code: code) {
                report.refuse(entry.attachmentID, code, message)
                continue
            } catch NotesError.notFound {
                // Removed here while this sync ran: its removal is the next sync's.
                continue
            }
            try notes.recordAttachmentSent(
                entry.attachmentID, of: entry.localNoteID, excludedFromBackup: stored.attachment.excludedFromBackup ?? false,
                revisions: stored.step.map { ($0.revisionBefore, $0.revision) })
            report.changedServer = true
        }
        for entry in work.backupChanges {
            let stored: SyncAttachmentChanged?
            do {
                stored = try await client.setExcludedFromBackup(entry.excludedFromBackup, attachment: entry.attachmentID, ofNote: entry.serverNoteID)
            } catch SyncClientError.refused(let status, let code, let message) where Self.refusesOneNote(status: status, code: code) {
                report.refuse(entry.attachmentID, code, message)
                continue
            }
            // A server that does not keep the flag (an older Tresor): the changes wait.
            guard let stored, let excluded = stored.attachment.excludedFromBackup else { break }
            try notes.recordBackupExclusionSent(
                entry.attachmentID, of: entry.localNoteID, excluded: excluded, revisions: stored.step.map { ($0.revisionBefore, $0.revision) })
            report.changedServer = true
        }
    }

    /// What waits of the synced notes' attachments, for `tresor sync status`: counted now, with
    /// the refusals of the last sync.
    /// - Parameter notes: the home's notes.
    /// - Returns: the counts and refusals.
    /// - Throws: `NotesError` while the notes do not open.
    func attachmentsStatus(_ notes: NotesStore) throws -> SyncAttachmentsStatus {
        let work = try notes.attachmentSyncWork()
        let report = lastAttachmentSync
        return SyncAttachmentsStatus(
            toSend: work.send.count + work.removeOnServer.count + work.backupChanges.count, toFetch: work.listings.reduce(0) { $0 + $1.fetch.count },
            serverTakesNone: report.serverTakesNone, refused: report.refused)
    }

    /// Fetches one attachment into local note `listing.localNoteID`, a piece at a time as it
    /// arrives; nothing of it stays unless all of it came.
    static func fetch(_ attachment: SyncedAttachment, of listing: AttachmentSyncWork.Listing, _ notes: NotesStore, _ client: SyncClient) async throws
    {
        let upload = try notes.beginSyncedAttachment(attachment, to: listing.localNoteID)
        do {
            try await client.readAttachment(attachment.id, ofNote: listing.serverNoteID) { piece in try upload.append(piece) }
            // A locked note's comes as its sealed chunks: 28 bytes more each than their plaintext.
            let expected =
                attachment.byteCount
                + (attachment.isSealed
                    ? LockedNoteShape.chunkCount(plaintextByteCount: attachment.byteCount) * LockedNoteShape.chunkOverheadByteCount : 0)
            guard upload.byteCount == expected else {
                throw SyncClientError.garbage("attachment \(attachment.id) came with \(upload.byteCount) bytes of \(expected)")
            }
            _ = try upload.finish()
        } catch {
            upload.abandon()
            throw error
        }
    }

    /// Sends one attachment, streamed from its sealed file a chunk at a time: its plaintext, or
    /// a locked note's chunks as sealed under the note key (no key is needed to read them).
    /// - Returns: the attachment as the server holds it, and the revision step the upload made.
    static func send(_ entry: AttachmentSyncWork.Entry, _ notes: NotesStore, _ client: SyncClient) async throws -> SyncAttachmentChanged {
        guard let info = try notes.listedAttachments(ofNote: entry.localNoteID).first(where: { $0.id == entry.attachmentID }) else {
            throw NotesError.notFound("attachment \(entry.attachmentID)")
        }
        let open = { @Sendable () throws -> AttachmentChunks in
            entry.isSealed
                ? try notes.openSealedChunks(ofAttachment: entry.attachmentID, note: entry.localNoteID)
                : try notes.openAttachment(entry.attachmentID, of: entry.localNoteID).1
        }
        let attachment = SyncAttachment(
            id: info.id, kind: info.kind.rawValue, name: info.name, byteCount: info.byteCount, isSealed: entry.isSealed,
            excludedFromBackup: entry.excludedFromBackup, created: info.created)
        return try await client.sendAttachment(attachment, ofNote: entry.serverNoteID, length: try open().byteCount) {
            let chunks = try open()
            return { try chunks.next() }
        }
    }

    /// A server note's listing of attachments as the notes store records it; one of a kind
    /// this device does not know is left out (it stays on the server).
    static func syncedAttachments(_ listed: [SyncAttachment]?) -> [SyncedAttachment]? {
        listed.map { list in
            list.compactMap { attachment in
                AttachmentKind(rawValue: attachment.kind).map {
                    SyncedAttachment(
                        id: attachment.id, kind: $0, name: attachment.name, byteCount: attachment.byteCount, isSealed: attachment.isSealed ?? false,
                        excludedFromBackup: attachment.excludedFromBackup, created: attachment.created)
                }
            }
        }
    }
}

/// What the last sync of attachments could not do: the server's refusals, or no attachment
/// routes at all.
struct AttachmentSyncReport: Sendable {
    var serverTakesNone = false
    /// Something was sent or removed on the server.
    var changedServer = false
    var refused: [SyncAttachmentRefusal] = []

    mutating func refuse(_ id: String, _ code: SyncErrorBody.Code, _ message: String) {
        refused.append(SyncAttachmentRefusal(attachmentID: id, code: code.rawValue, reason: message))
    }
}
