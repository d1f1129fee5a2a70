import Foundation
import TresorNotes
import TresorNotesDomain
import TresorProtocol
import TresorSyncClient
import TresorSyncProtocol

extension SyncAccount {
    /// How many changes pushes read and send at once.
    static let notesBatch = SyncNoteBatch.maxChanges
    /// The most bytes of changes (as JSON) one push request carries, under the relay's limit.
    static let notesRequestBytes = SyncLimits.pushRequestBytes - 64 * 1024

    /// One sync of the local account's notes with the sync account's web notes (docs/SYNC.md,
    /// "Notes"): pushes the waiting changes, a batch per request — the server merges each or keeps
    /// it as a conflict copy, and this device takes the result — then pulls the account's changes
    /// page by page.
    /// - Parameters:
    ///   - notes: the home's notes.
    ///   - account: the sync account, as server and name (another than the last starts afresh).
    ///   - client: the signed-in client of the sync account.
    ///   - server: where the account stood when the caller read it (``SyncAccountState``): with
    ///     nothing sent and the cursor at its notes counter, no page is asked for; with its notes
    ///     settings as this daemon saw them last and nothing changed here, neither the folders
    ///     nor the passphrase are. Notes locked with a passphrase imported from Apple Notes go
    ///     only when it says the server keeps such passphrases (nil: they wait).
    ///   - allowDeletions: lets a held mass deletion of notes through (``NotesStore/settleNoteDeletions(allow:)``).
    /// - Returns: what happened.
    /// - Throws: ``SyncClientError``, `NotesError`.
    func syncNotes(
        _ notes: NotesStore, account: String, client: SyncClient, server: SyncAccountState? = nil, allowDeletions: Bool = false
    ) async throws -> SyncNowNotes {
        var cursor = try notes.noteSyncCursor(account: account)
        let settingsUnchanged = server?.notesSettings != nil && server?.notesSettings == notesSettingsSeen
        let overtaken = try await syncNotesPassphrase(notes, client: client, serverUnchanged: settingsUnchanged)
        let sendsApple = server?.appleNotesPassphrases == true
        // An edit held because the note was locked elsewhere goes, locked, once a session is open.
        _ = try notes.lockNotesHeldUntilLocked()
        var (result, refusedConflicts) = try await pushNotes(notes, client: client, sendingAppleNotesLocks: sendsApple)
        // An edit just held because its note was locked elsewhere goes at once, locked, when the
        // passphrase's session is open here.
        if result.heldUntilLocked != nil, try notes.lockNotesHeldUntilLocked() > 0 {
            refusedConflicts = try await pushAgain(notes, client: client, sendingAppleNotesLocks: sendsApple, into: &result)
        }
        if overtaken { result.passphraseOvertaken = true }
        // Up to date with the server's counter and nothing sent: no page to ask for.
        if result.sent > 0 || server.map({ $0.notes > cursor }) ?? true {
            result.applied += try await Self.pullNotes(notes, client: client, after: &cursor)
        }
        // A held edit whose note the pull found unlocked there again goes now, and is merged.
        if let held = result.heldUntilLocked, try notes.notesHeldUntilLocked() < held.count {
            let sentBefore = result.sent
            refusedConflicts = try await pushAgain(notes, client: client, sendingAppleNotesLocks: sendsApple, into: &result)
            if result.sent > sentBefore { result.applied += try await Self.pullNotes(notes, client: client, after: &cursor) }
        }
        // What this device's attachments changed on the server made revisions of their notes:
        // taken now, a later change here is made from them (not from the one before, which a
        // locked note's change would turn into a conflict copy).
        if try await syncAttachments(notes, client: client) {
            result.applied += try await Self.pullNotes(notes, client: client, after: &cursor)
            if refusedConflicts > 0 {
                try await pushRefusedAgain(notes, client: client, sendingAppleNotesLocks: sendsApple, into: &result, after: &cursor)
            }
        }
        // Every page is in: the deletions for good they brought are judged together.
        let deletions = try notes.settleNoteDeletions(allow: allowDeletions)
        result.applied += deletions.applied
        result.heldDeletions = deletions.held
        try await syncFolders(notes, client: client, serverUnchanged: settingsUnchanged)
        notesSettingsSeen = server?.notesSettings
        return result
    }

    /// Pushes the waiting changes again in this sync: what it sent adds to `result`, what still
    /// waits replaces its count.
    /// - Returns: how many changes were refused as `conflict`.
    private func pushAgain(
        _ notes: NotesStore, client: SyncClient, sendingAppleNotesLocks: Bool, into result: inout SyncNowNotes
    ) async throws -> Int {
        let (again, refusedConflicts) = try await pushNotes(notes, client: client, sendingAppleNotesLocks: sendingAppleNotesLocks)
        result.sent += again.sent
        result.conflictCopies += again.conflictCopies
        (result.waiting, result.heldUntilLocked) = (again.waiting, again.heldUntilLocked)
        if let copies = again.unlockedCopiesOfLockedNotes { result.unlockedCopiesOfLockedNotes = (result.unlockedCopiesOfLockedNotes ?? []) + copies }
        return refusedConflicts
    }

    /// A lock removed here was refused while the server held an attachment of the note only
    /// sealed; the attachments' step just sent their unlocked copies: the waiting changes go
    /// again, and what they changed on the server is pulled.
    private func pushRefusedAgain(
        _ notes: NotesStore, client: SyncClient, sendingAppleNotesLocks: Bool, into result: inout SyncNowNotes, after cursor: inout UInt64
    ) async throws {
        let sentBefore = result.sent
        _ = try await pushAgain(notes, client: client, sendingAppleNotesLocks: sendingAppleNotesLocks, into: &result)
        guard result.sent > sentBefore else { return }
        result.applied += try await Self.pullNotes(notes, client: client, after: &cursor)
        // An attachment added here since the lock's removal was refused while the note was
        // locked there: it goes now.
        if try await syncAttachments(notes, client: client) { result.applied += try await Self.pullNotes(notes, client: client, after: &cursor) }
    }

    /// Pushes the waiting changes of the local notes, a batch per request, and takes each
    /// answer; a change the server refuses for this note alone stays waiting.
    /// - Parameters:
    ///   - notes: the home's notes.
    ///   - client: the signed-in client of the sync account.
    ///   - sendingAppleNotesLocks: whether the server keeps passphrases imported from Apple
    ///     Notes; if not, a note locked with one stays waiting (an older server would refuse
    ///     the whole batch for its missing verifier).
    /// - Returns: what was sent, and how many changes were refused as `conflict` (a lock
    ///   removed here while the server held an attachment of the note only sealed, say).
    func pushNotes(_ notes: NotesStore, client: SyncClient, sendingAppleNotesLocks: Bool) async throws -> (
        result: SyncNowNotes, refusedConflicts: Int
    ) {
        var result = SyncNowNotes(sent: 0, applied: 0, conflictCopies: 0, waiting: 0)
        var refusedConflicts = 0
        var after: String?
        while true {
            let batch = try notes.pendingNoteSyncs(after: after, limit: Self.notesBatch)
            guard let last = batch.last else { break }
            after = last.localID
            var outgoing: [(pending: PendingNoteSync, change: SyncNoteChange, bytes: Int)] = []
            for pending in batch {
                // A locked note that cannot travel (an Apple Notes one of a shape Tresor's records do
                // not take, or to a server that does not keep Apple passphrases) stays waiting.
                guard !pending.isLocked || pending.lockedRecord.map({ $0.passphraseSource != .appleNotes || sendingAppleNotesLocks }) == true
                else {
                    result.waiting += 1
                    continue
                }
                // Its text stays here, not on the server unlocked (``NotesStore/holdUntilLocked(_:)``).
                if pending.heldUntilLocked {
                    result.waiting += 1
                    result.heldUntilLocked = (result.heldUntilLocked ?? []) + [pending.localID]
                    continue
                }
                guard let change = Self.change(pending) else {
                    // Made and deleted for good here before it ever went: nothing to tell.
                    try notes.recordNoteSynced(pending, result: nil)
                    continue
                }
                let bytes = try SyncJSON.encoder.encode(change).count
                // Larger than any request the relay takes: it stays waiting (the status counts it).
                guard bytes <= Self.notesRequestBytes else {
                    result.waiting += 1
                    continue
                }
                outgoing.append((pending, change, bytes))
            }
            for request in Self.requests(outgoing.map(\.bytes)) {
                let sent = Array(outgoing[request])
                let answers = try await client.pushNotes(sent.map(\.change))
                for (change, answer) in zip(sent, answers) {
                    guard let applied = answer.result else {
                        guard let status = answer.status, let refusal = answer.refusal, Self.refusesOneNote(status: status, code: refusal.code)
                        else {
                            throw SyncClientError.refused(
                                status: answer.status ?? 500, code: answer.refusal?.code ?? .internal, message: answer.refusal?.message ?? "")
                        }
                        // This note's change stays waiting; the others go (the status counts it).
                        result.waiting += 1
                        if refusal.code == .conflict { refusedConflicts += 1 }
                        continue
                    }
                    if applied.outcome == .lockedSince {
                        try notes.holdUntilLocked(change.pending)
                        result.waiting += 1
                        result.heldUntilLocked = (result.heldUntilLocked ?? []) + [change.pending.localID]
                        continue
                    }
                    try notes.recordNoteSynced(change.pending, result: try applied.note.map(Self.state))
                    result.sent += 1
                    if applied.outcome == .conflictCopy { result.conflictCopies += 1 }
                    // An unlocked edit kept beside a note locked elsewhere meanwhile: its text stays readable.
                    if applied.outcome == .conflictCopy, change.change.locked == nil, applied.note?.locked != nil, let copy = applied.conflictCopyID {
                        result.unlockedCopiesOfLockedNotes = (result.unlockedCopiesOfLockedNotes ?? []) + [copy]
                    }
                }
            }
        }
        return (result, refusedConflicts)
    }

    /// Pulls the account's notes changed after `cursor`, page by page, each page applied with
    /// its cursor in one transaction.
    /// - Returns: how many notes were applied.
    static func pullNotes(_ notes: NotesStore, client: SyncClient, after cursor: inout UInt64) async throws -> Int {
        var applied = 0
        while true {
            // The largest page the server gives: a first sync takes the account's notes in few requests.
            let page = try await client.notesPage(after: cursor, limit: SyncLimits.notesPageEntries)
            let changes = try page.entries.map { entry -> (serverID: String, state: SyncedNoteState?) in
                (entry.noteID, try entry.note.map(Self.state))
            }
            applied += try notes.applySyncedNotes(changes, cursor: page.cursor)
            cursor = page.cursor
            guard page.more, !page.entries.isEmpty else { break }
        }
        return applied
    }

    /// The folders (docs/SYNC.md, "Notes"), after the notes, which make the folders they are in:
    /// those made and deleted here since this device last had the account's go, and this
    /// device mirrors the account's.
    /// - Parameter serverUnchanged: whether the server's folders are those this device agreed
    ///   with at its last sync: then only a change here is sent.
    func syncFolders(_ notes: NotesStore, client: SyncClient, serverUnchanged: Bool = false) async throws {
        let (local, agreed) = try notes.folderNamesForSync()
        let changes = SyncFolderChanges(created: local.subtracting(agreed).sorted(), deleted: agreed.subtracting(local).sorted())
        if serverUnchanged && changes.created.isEmpty && changes.deleted.isEmpty { return }
        // Past the most one request names, the rest go at the next sync.
        let sent = SyncFolderChanges(
            created: Array(changes.created.prefix(SyncFolderChanges.maxNames)),
            deleted: Array(changes.deleted.prefix(max(0, SyncFolderChanges.maxNames - changes.created.count))))
        // An older server (nil) carries folders only as its notes' folder names, as before.
        guard let server = try await client.syncFolders(sent) else { return }
        try notes.applySyncedFolders(server.names, agreed: agreed, unsentDeletions: Set(changes.deleted).subtracting(sent.deleted))
    }

    /// The notes passphrase (docs/SYNC.md, "Notes"): this device's current generation and hint
    /// go when they changed since it last agreed with the server — made current there unless
    /// another device's change came first — and the account's current one on the server becomes
    /// this device's.
    /// - Parameter serverUnchanged: whether the server's passphrase is the one this device agreed
    ///   with at its last sync: then only a change here is sent.
    /// - Returns: whether the change sent was overtaken by another device's (``SyncNowNotes/passphraseOvertaken``).
    @discardableResult
    func syncNotesPassphrase(_ notes: NotesStore, client: SyncClient, serverUnchanged: Bool = false) async throws -> Bool {
        let (current, agreed) = try notes.passphraseForSync()
        let server: SyncPassphraseState?
        var sent: Data?
        if let current, current.salt != agreed?.salt || current.hint != agreed?.hint {
            server = try await client.pushNotesPassphrase(SyncPassphraseChange(passphrase: SyncPassphrase(current), base: agreed?.salt))
            sent = current.salt
        } else {
            guard !serverUnchanged else { return false }
            server = try await client.notesPassphrase()
        }
        // An older server (nil) keeps each device's own generations, as before.
        guard let current = server?.current else { return false }
        try notes.applySyncedPassphrase(try current.synced())
        // The server keeps the change made first from the passphrase both devices had: this
        // device's, made from the same one, was overtaken, and the user must hear of it — the
        // passphrase they just set is no longer the current one.
        return sent != nil && sent != current.salt
    }

    /// The requests a run of changes of `sizes` bytes goes in: consecutive ranges of at most
    /// ``notesBatch`` changes and ``notesRequestBytes`` bytes (one change at least).
    static func requests(_ sizes: [Int]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = 0, bytes = 0
        for (index, size) in sizes.enumerated() {
            if index > start && (index - start == notesBatch || bytes + size > notesRequestBytes) {
                ranges.append(start..<index)
                start = index
                bytes = 0
            }
            bytes += size
        }
        if start < sizes.count { ranges.append(start..<sizes.count) }
        return ranges
    }

    /// Whether the server refused one note's change (bad or too large, or a locked note), not
    /// this device: the sync goes on with the other notes.
    static func refusesOneNote(status: Int, code: SyncErrorBody.Code) -> Bool {
        [.invalid, .tooLarge, .conflict, .notFound].contains(code) && (400..<500).contains(status)
    }

    /// The change to send for `pending`; nil for a note made and deleted for good here that
    /// the server never had.
    static func change(_ pending: PendingNoteSync) -> SyncNoteChange? {
        let base = pending.base.map {
            SyncNoteBase(
                revision: $0.revision, title: $0.content.title, body: $0.content.body, folder: $0.content.folder, isPinned: $0.content.isPinned,
                lockedDigest: pending.baseLockedDigest)
        }
        guard let current = pending.current else {
            guard let base else { return nil }
            return SyncNoteChange(
                localID: pending.localID, noteID: pending.serverID, base: base, title: base.title, body: base.body, folder: base.folder,
                isPinned: base.isPinned, state: .deletedForGood)
        }
        var change = SyncNoteChange(
            localID: pending.localID, noteID: pending.serverID, base: base, title: current.title, body: current.body, folder: current.folder,
            isPinned: current.isPinned, state: pending.inRecentlyDeleted ? .recentlyDeleted : .present,
            locked: pending.lockedRecord.map(SyncLockedNote.init), created: pending.created, modified: pending.modified)
        if pending.madeUnlocked && !pending.inRecentlyDeleted { change.refuseIfLockedSince = true }
        return change
    }

    /// A server's note as the notes store applies it.
    /// - Throws: `NotesError.invalid` for a locked record of the wrong shape.
    static func state(_ note: SyncNote) throws -> SyncedNoteState {
        SyncedNoteState(
            serverID: note.id, revision: note.revision,
            content: NoteSyncContent(title: note.title, body: note.body ?? "", folder: note.folder, isPinned: note.isPinned),
            created: note.created, modified: note.modified, deleted: note.deleted, locked: try note.locked.map { try $0.record() },
            attachments: syncedAttachments(note.attachments),
            sharing: note.sharing.map { SyncedNoteSharing(owner: $0.owner, participants: $0.participants, isOwner: $0.isOwner) })
    }
}
