import Foundation
import Hummingbird
import TresorNotesDomain
import TresorSyncProtocol

/// Notes sync (docs/SYNC.md, "Notes"): a device reads its account's notes changed after a
/// cursor, and sends each change of its own notes, which the server applies to the account's
/// notes through the web store's own operations — the revisions, three-way merge and conflict
/// copies the web routes use, and the same live updates to the account's open pages.
extension SyncRoutes {
    func registerNotes<Context: SyncRequestContext>(on router: Router<Context>) {
        router.get("/v1/sync/notes") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let after = try Self.number(request, "after", default: 0, range: 0...UInt64(Int64.max))
                let limit = try Self.number(
                    request, "limit", default: UInt64(SyncLimits.defaultNotesPageEntries), range: 1...UInt64(SyncLimits.notesPageEntries))
                return try reply(try await notesPage(caller.account, after: after, limit: Int(limit)))
            }
        }
        router.post("/v1/sync/notes") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let change = try await decode(SyncNoteChange.self, request, limit: SyncLimits.pushRequestBytes)
                return try reply(try await asDevice(caller) { try await applyNoteChange(change, caller: caller) })
            }
        }
        registerNoteBatch(on: router)
        registerNotePassphrase(on: router)
        registerNoteFolders(on: router)
    }

    /// The account's notes changed after `cursor`, each as it is now; no more once their bodies
    /// pass ``SyncLimits/pageBodyBytes`` (one at least).
    func notesPage(_ account: AccountID, after cursor: UInt64, limit: Int) async throws -> SyncNotesPage {
        let (changes, more) = try await relay.store.noteChanges(account: account, after: cursor, limit: limit)
        let shown = changes.filter { !$0.gone }
        let notes = try await syncNotes(shown.map(\.noteID), sharedWith: Set(shown.filter(\.sharedWith).map(\.noteID)))
        var entries: [SyncNoteEntry] = []
        var bytes = 0
        for change in changes {
            let note = change.gone ? nil : notes[change.noteID]
            let size = note?.body?.utf8.count ?? 0
            if !entries.isEmpty && bytes + size > SyncLimits.pageBodyBytes {
                return SyncNotesPage(entries: entries, cursor: entries.last!.counter, more: true)
            }
            bytes += size
            entries.append(SyncNoteEntry(counter: change.counter, noteID: change.noteID, note: note))
        }
        return SyncNotesPage(entries: entries, cursor: entries.last?.counter ?? cursor, more: more)
    }

    /// Applies a device's change to the account's notes by the notes domain's rules.
    func applyNoteChange(_ change: SyncNoteChange, caller: SyncCaller) async throws -> SyncNoteChangeResult {
        let store = relay.accounts
        guard (1...64).contains(change.localID.count) else { throw SyncRefusal(.invalid, "a local id is 1 to 64 characters") }
        if let id = change.noteID, try await sharesNote(id, with: caller.account) {
            return try await applySharedNoteChange(change, id: id, caller: caller)
        }
        // A note shared with the account once, left or unshared since: its deletion holds (a
        // leave retried after a lost answer); an edit of it becomes the account's note, below.
        if let id = change.noteID, change.state != .present, try await relay.store.wasShared(note: id, with: caller.account) {
            return SyncNoteChangeResult(outcome: .deleted, note: nil)
        }
        guard let id = change.noteID, let current = try await ownNote(id, of: caller.account) else {
            // New here, or deleted for good meanwhile: an edit outlives the deletion, as a new note.
            guard change.state != .deletedForGood else { return SyncNoteChangeResult(outcome: .deleted, note: nil) }
            // A participant's edit of a note its owner deleted or stopped sharing meanwhile: the
            // account's own note now, named as the conflict copy it is, beside the owner's.
            var title = change.title
            if let id = change.noteID, try await relay.store.wasShared(note: id, with: caller.account) {
                let editor = NoteRules.conflictCopyEditor(
                    login: try await relay.store.loginName(of: caller.account), device: caller.deviceName, isOwner: false)
                title = NoteRules.conflictCopyTitle(change.title, editorName: editor)
            }
            // A creation whose answer was lost finds the note it made (created false).
            let made = try await creations().createSyncedNote(
                NoteDraft(title: title, body: change.body, folder: change.folder, isPinned: change.isPinned),
                locked: try change.locked?.record(), inRecentlyDeleted: change.state == .recentlyDeleted,
                origin: NoteOrigin(device: caller.deviceID, localID: change.localID), edit: Self.edit(change, caller), account: caller.account,
                quota: quota(adding: change.title.utf8.count + change.body.utf8.count + (change.locked?.ciphertext.count ?? 0)))
            return SyncNoteChangeResult(outcome: .created, note: try await syncNote(made.id))
        }
        let changedSince = change.base.map { $0.revision != current.revision } ?? true
        switch change.state {
        case .recentlyDeleted, .deletedForGood:
            // An edit made meanwhile elsewhere outlives a deletion made from before it.
            if changedSince && current.deleted == nil { return SyncNoteChangeResult(outcome: .keptAfterEdit, note: try await syncNote(id)) }
            if current.deleted == nil { try await store.moveToRecentlyDeleted(id) }
            guard change.state == .deletedForGood else { return SyncNoteChangeResult(outcome: .saved, note: try await syncNote(id)) }
            try await store.deleteForGood(id)
            return SyncNoteChangeResult(outcome: .deleted, note: nil)
        case .present:
            // An edit of a note in Recently Deleted restores it, in the edit's own transaction:
            // an edit refused (over the quota) leaves it there.
            let restoring = current.deleted != nil
            if let locked = change.locked {
                let record = try locked.record()
                if let base = change.base, base.revision != current.revision, current.isLocked, let digest = base.lockedDigest,
                    digest == record.textDigest, change.title == base.title || current.title == base.title
                {
                    // The device changed no locked text (a pin, a move, a title, an attachment): only
                    // that goes, and the note keeps the newer text it has.
                    let saved = try await lockedNotes().saveSyncedNote(
                        id, Self.noteChanges(change), restoring: restoring, by: caller.account, edit: Self.edit(change, caller), quota: nil)
                    return SyncNoteChangeResult(
                        outcome: Self.outcome(saved.kind), note: try await syncNote(id), conflictCopyID: saved.conflictCopy?.id)
                }
                // No key here: a locked body changed meanwhile cannot be merged, it is kept as a conflict copy.
                // Only what changed from the base: a pin or a move made elsewhere meanwhile is not undone.
                let isPinned = change.base.map { $0.isPinned == change.isPinned ? current.isPinned : change.isPinned } ?? change.isPinned
                let folder = change.base.map { $0.folder == change.folder ? current.folder : change.folder } ?? change.folder
                let stored = try await lockedNotes().storeSyncedLockedNote(
                    id, title: change.title, folder: folder, isPinned: isPinned, record: record,
                    // A base that was locked has no body to compare (its digest says it was).
                    base: change.base.map { NoteBase(revision: $0.revision, title: $0.title, body: $0.lockedDigest == nil ? $0.body : nil) },
                    restoring: restoring,
                    account: caller.account, edit: Self.edit(change, caller),
                    quota: quota(adding: change.title.utf8.count + locked.ciphertext.count))
                return SyncNoteChangeResult(
                    outcome: stored.conflictCopyID == nil ? .saved : .conflictCopy, note: try await syncNote(id),
                    conflictCopyID: stored.conflictCopyID)
            }
            if current.isLocked {
                // An edit made from an unlocked version of a note locked elsewhere since: nothing
                // of its text is kept here unlocked; the device holds it until it locks it too.
                if change.refuseIfLockedSince == true {
                    return SyncNoteChangeResult(outcome: .lockedSince, note: try await syncNote(id))
                }
                // The lock removed on the device, with the passphrase: its body comes opened.
                let stored = try await lockedNotes().removeSyncedLock(
                    id, title: change.title, body: change.body, folder: change.folder, isPinned: change.isPinned,
                    baseRevision: change.base?.revision, restoring: restoring, account: caller.account, edit: Self.edit(change, caller),
                    quota: quota(adding: change.title.utf8.count + change.body.utf8.count))
                return SyncNoteChangeResult(
                    outcome: stored.conflictCopyID == nil ? .saved : .conflictCopy, note: try await syncNote(id),
                    conflictCopyID: stored.conflictCopyID)
            }
            // As the web's edit: one that writes a title or body needs room for them (the old
            // ones are not subtracted); a pin or a move needs none.
            let changes = Self.noteChanges(change)
            let grows = changes.title != nil || changes.body != nil
            let quota = grows ? quota(adding: (changes.title?.utf8.count ?? 0) + (changes.body?.utf8.count ?? 0)) : nil
            let saved = try await lockedNotes().saveSyncedNote(
                id, changes, restoring: restoring, by: caller.account, edit: Self.edit(change, caller), quota: quota)
            return SyncNoteChangeResult(outcome: Self.outcome(saved.kind), note: try await syncNote(id), conflictCopyID: saved.conflictCopy?.id)
        }
    }

    /// Where and when the device made `change`: a conflict copy names the device; the note keeps
    /// the device's dates.
    static func edit(_ change: SyncNoteChange, _ caller: SyncCaller) -> SyncedEdit {
        SyncedEdit(device: caller.deviceName, editedAt: change.modified, created: change.created)
    }

    /// What a device's change changes, against the version it was made from: only the fields it
    /// changed, so a pin or a move made elsewhere meanwhile is not undone.
    static func noteChanges(_ change: SyncNoteChange) -> NoteChanges {
        guard let base = change.base else {
            return NoteChanges(title: change.title, body: change.body, isPinned: change.isPinned, folder: .some(change.folder))
        }
        return NoteChanges(
            title: change.title == base.title ? nil : change.title, body: change.body == base.body ? nil : change.body,
            isPinned: change.isPinned == base.isPinned ? nil : change.isPinned,
            folder: change.folder == base.folder ? nil : .some(change.folder),
            base: NoteBase(revision: base.revision, title: base.title, body: base.body))
    }

    /// A device's change of a note another account shares with the device's account, as the
    /// web client's participant makes it: its title and body are saved as the participant's
    /// edit (its folder and pin are the owner's: ignored), a lock is refused, and a deletion
    /// is the account leaving the note — the owner keeps it.
    func applySharedNoteChange(_ change: SyncNoteChange, id: String, caller: SyncCaller) async throws -> SyncNoteChangeResult {
        switch change.state {
        case .recentlyDeleted, .deletedForGood:
            guard let name = try await relay.store.loginName(of: caller.account) else { throw SyncRefusal(.notFound, "no such account") }
            try await relay.accounts.unshare(note: id, participant: name, by: caller.account)
            return SyncNoteChangeResult(outcome: .deleted, note: nil)
        case .present:
            guard change.locked == nil else {
                throw SyncRefusal(.conflict, "note \(id) is shared: a shared note cannot be locked")
            }
            var changes = Self.noteChanges(change)
            changes.folder = nil
            changes.isPinned = nil
            // As the web client's participant: the owner's quota is the owner's to mind.
            let saved = try await lockedNotes().saveSyncedNote(
                id, changes, restoring: false, by: caller.account, edit: Self.edit(change, caller), quota: nil)
            return SyncNoteChangeResult(
                outcome: Self.outcome(saved.kind), note: try await syncNotes([id], sharedWith: [id])[id], conflictCopyID: saved.conflictCopy?.id)
        }
    }

    /// What a device is told of its edit the web store saved: as it was, merged, or kept as a conflict copy.
    static func outcome(_ kind: NoteSaveOutcome.Kind) -> SyncNoteChangeResult.Outcome {
        switch kind {
        case .saved: .saved
        case .merged: .merged
        case .conflictCopy: .conflictCopy
        }
    }

    /// Whether note `id` is another account's, shared with `account` (and not in Recently Deleted).
    func sharesNote(_ id: String, with account: AccountID) async throws -> Bool {
        do {
            return try await relay.accounts.access(toNote: id, for: account, includingDeleted: false) == .participant
        } catch NotesError.notFound, NotesError.invalid {
            return false
        }
    }

    /// Note `id` when `account` owns it (nil when it is gone or another's).
    func ownNote(_ id: String, of account: AccountID) async throws -> NoteSummary? {
        do {
            guard try await relay.accounts.access(toNote: id, for: account, includingDeleted: true) == .owner else { return nil }
            return try await relay.accounts.summary(ofNote: id)
        } catch NotesError.notFound {
            return nil
        }
    }

    /// Note `id` as a device receives it; nil when it is gone.
    func syncNote(_ id: String) async throws -> SyncNote? {
        try await syncNotes([id])[id]
    }

    /// Notes `ids` as a device receives them, read together (``SyncedNotesReader``); a note that
    /// is gone is left out. Those in `sharedWith` are another account's, shared with the
    /// device's: they come without the owner's folder and pin.
    func syncNotes(_ ids: [String], sharedWith: Set<String> = []) async throws -> [String: SyncNote] {
        guard let reader = relay.accounts as? any SyncedNotesReader else {
            throw SyncRefusal(.conflict, "this server's store reads no notes for devices")
        }
        var notes: [String: SyncNote] = [:]
        for (id, read) in try await reader.syncedNotes(ids) {
            let summary = read.summary
            let locked = try await summary.isLocked ? SyncLockedNote(lockedNotes().syncedLockedRecord(ofNote: id)) : nil
            let isShared = sharedWith.contains(id)
            notes[id] = SyncNote(
                id: id, revision: summary.revision, title: summary.title, body: read.body, folder: isShared ? nil : summary.folder,
                isPinned: isShared ? false : summary.isPinned, created: summary.created, modified: summary.modified, deleted: summary.deleted,
                isLocked: summary.isLocked, locked: locked,
                attachments: read.attachments.map { Self.syncAttachment($0, isSealed: read.sealedAttachmentIDs.contains($0.id)) },
                sharing: summary.sharing.map { SyncNoteSharing(owner: $0.owner, participants: $0.participants, isOwner: !isShared) })
        }
        return notes
    }

    /// The quota of a device's write that stores up to `bytes` more: the web account's, as a
    /// browser's write has (none when the server sets none).
    func quota(adding bytes: Int) -> StorageQuota? {
        relay.accountQuotaBytes.map { StorageQuota(limitBytes: $0, addingBytes: bytes) }
    }

    /// The server's store that creates a device's note with its origin.
    func creations() throws -> any SyncedNoteCreationStore {
        guard let store = relay.accounts as? any SyncedNoteCreationStore else {
            throw SyncRefusal(.conflict, "this server's store takes no notes of devices")
        }
        return store
    }

    /// The server's store of locked notes from devices.
    func lockedNotes() throws -> any LockedNoteSyncStore {
        guard let store = relay.accounts as? any LockedNoteSyncStore else {
            throw SyncRefusal(.conflict, "this server's store keeps no locked notes of devices")
        }
        return store
    }
}
