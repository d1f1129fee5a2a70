import Foundation
import TresorKeychain
import TresorSync
import TresorSyncProtocol

/// Why an arriving change waits (``KeychainSyncTransaction/hold(_:counter:recordID:reason:)``).
enum HoldReason {
    /// Its item's class is locked: applied at the next unlock.
    static let locked = "locked"
    /// Part of a mass deletion: waits for the user.
    static let deletion = "deletion"
    /// An earlier change of the same record waits: applied after it, never before.
    static let behind = "behind"
    /// Verified — a trusted device signed it, and it opened — but its payload is not a keychain
    /// item this version reads (a newer Tresor's format, a device's bug, a wrong padding): set aside, listed
    /// by `tresor sync status`, never applied; the records after it go on.
    static let unreadable = "unreadable"
}

/// What one pull brought to this device: the versions it wrote and the items that were not here
/// before it. A device catching up on the account's history — a new one above all — receives,
/// one after the other, versions and deletions that the devices holding them settled long ago;
/// of those, only what this device held before the pull is the user's to lose here. So a
/// deletion of an item the pull itself brought is not counted toward a mass deletion, and a
/// version the pull itself wrote is not kept as a conflict when a later one replaces it.
struct PullArrivals {
    /// Records whose version here was written by this pull.
    private(set) var written = Set<String>()
    /// Records whose item was not here before this pull.
    private(set) var new = Set<String>()

    /// Notes what applying `recordID` did: `wasHere` says whether its item was here before.
    mutating func note(_ recordID: String, outcome: ApplyOutcome, wasHere: Bool) {
        if case .held = outcome { return }
        written.insert(recordID)
        if !wasHere { new.insert(recordID) }
    }
}

/// What applying one change did.
enum ApplyOutcome: Equatable {
    case applied
    case conflictKept
    case held(String)
}

// The conflict rules (docs/SYNC.md, "Conflicts and deletions"). A record's version here is the
// server counter of the content held; a change of this device not yet answered counts as
// later than anything arriving (the server will order it after). Of two concurrent changes the
// one the server ordered later wins and the other is kept; a deletion never wins over a
// concurrent edit; an item added on two devices with one primary key ends as one item.
extension SyncEngine {
    func apply(
        _ records: [ReceivedRecord], served: [SyncRecord], _ transaction: KeychainSyncTransaction, holdDeletions: Bool,
        arrivals: inout PullArrivals, summary: inout PullSummary
    ) throws {
        var blocked = Set(try transaction.held().filter { $0.reason != HoldReason.unreadable }.map(\.recordID))
        var deleted = 0
        for (record, entry) in zip(records, served) where record.deviceID != device.deviceID {
            var outcome: ApplyOutcome
            // Read once: what is here decides the deletion, the apply and what the pull brought.
            let local = try transaction.record(record.recordID)
            if blocked.contains(record.recordID) {
                outcome = .held(HoldReason.behind)
            } else if isDeletion(record, local: local), !arrivals.new.contains(record.recordID) {
                outcome = holdDeletions ? .held(HoldReason.deletion) : try apply(record, local: local, transaction, arrivals: arrivals)
                if outcome == .applied { deleted += 1 }
            } else {
                outcome = try apply(record, local: local, transaction, arrivals: arrivals)
            }
            arrivals.note(record.recordID, outcome: outcome, wasHere: local?.itemID != nil)
            try count(outcome, of: entry, transaction, summary: &summary, blocked: &blocked)
        }
        try countDeletions(deleted, transaction)
    }

    /// Applies what waits, oldest first: each again by the rules, unless an earlier change of
    /// its record still waits.
    func releaseHeld(_ transaction: KeychainSyncTransaction, deletionsAllowed: Bool, summary: inout PullSummary) throws {
        var blocked = Set<String>()
        var deleted = 0
        for held in try transaction.held() where held.reason != HoldReason.unreadable {
            guard !blocked.contains(held.recordID) else { continue }
            if held.reason == HoldReason.deletion && !deletionsAllowed {
                blocked.insert(held.recordID)
                continue
            }
            let entry = try SyncJSON.decoder.decode(SyncRecord.self, from: held.record)
            let record = try ReceivedRecord.reopening(entry, list: list, keys: keys)
            let local = try transaction.record(record.recordID)
            let deletion = isDeletion(record, local: local)
            let outcome = try apply(record, local: local, transaction, arrivals: PullArrivals())
            if case .held = outcome {
                blocked.insert(held.recordID)
                continue
            }
            if deletion && outcome == .applied { deleted += 1 }
            try transaction.release(held.counter)
            try count(outcome, of: entry, transaction, summary: &summary, blocked: &blocked)
        }
        try countDeletions(deleted, transaction)
    }

    private func count(
        _ outcome: ApplyOutcome, of entry: SyncRecord, _ transaction: KeychainSyncTransaction, summary: inout PullSummary,
        blocked: inout Set<String>
    ) throws {
        switch outcome {
        case .applied: summary.applied += 1
        case .conflictKept:
            summary.applied += 1
            summary.conflictsKept += 1
        case .held(let reason):
            try transaction.hold(try SyncJSON.encoder.encode(entry), counter: entry.counter, recordID: entry.upload.recordID, reason: reason)
            // A record set aside holds nothing up: a later change of it applies as usual.
            if reason != HoldReason.unreadable { blocked.insert(entry.upload.recordID) }
        }
    }

    /// Whether `record` would delete an item here: a tombstone of a record whose item is here,
    /// made from the version held (a concurrent deletion loses to the edit).
    func isDeletion(_ record: ReceivedRecord, _ transaction: KeychainSyncTransaction) throws -> Bool {
        guard record.content.isTombstone else { return false }
        return isDeletion(record, local: try transaction.record(record.recordID))
    }

    /// ``isDeletion(_:_:)`` of `record`, given its record's state here (`local`).
    private func isDeletion(_ record: ReceivedRecord, local: SyncRecordState?) -> Bool {
        guard record.content.isTombstone, record.deviceID != device.deviceID, let local else { return false }
        return local.itemID != nil && !local.hasPendingChange && record.baseCounter >= local.versionCounter
    }

    /// Applies one verified change of another device, given its record's state here (`local`).
    /// - Parameter arrivals: what the pull applying it wrote before (none for a held change
    ///   released later).
    private func apply(
        _ record: ReceivedRecord, local: SyncRecordState?, _ transaction: KeychainSyncTransaction, arrivals: PullArrivals
    ) throws -> ApplyOutcome {
        // Opened, but not laid out as a sealing device writes: never read, set aside.
        if record.content.isBadlyPadded { return .held(HoldReason.unreadable) }
        do {
            if record.content.isTombstone {
                guard isDeletion(record, local: local) else { return .applied }  // nothing here, or an edit survives it
                try transaction.deleteItem(of: record.recordID, counter: record.counter)
                return .applied
            }
            let item: SyncedItem
            do {
                item = try SyncedItem(encoded: record.content.payload)
            } catch {
                return .held(HoldReason.unreadable)
            }
            // Every read that a locked class refuses comes before the first write.
            try transaction.requireAvailable(item.protectionClass)
            let outcome = try applyEdit(record, item: item, local: local, arrivals: arrivals, transaction)
            // The server's last version of the record, whatever became of it here: a deletion
            // made here is padded to its size.
            try transaction.recordSize(of: record.content, for: record.recordID)
            return outcome
        } catch KeychainError.interactionNotAllowed(_) {
            return .held(HoldReason.locked)
        }
    }

    private func applyEdit(
        _ record: ReceivedRecord, item: SyncedItem, local: SyncRecordState?, arrivals: PullArrivals, _ transaction: KeychainSyncTransaction
    ) throws -> ApplyOutcome {
        if let local, local.itemID != nil {
            if local.hasPendingChange || local.versionCounter > record.counter {
                // This device's version is ordered later: the arriving one is the loser, kept.
                try transaction.keepConflict(item, recordID: record.recordID, counter: record.counter)
                return .conflictKept
            }
            if record.baseCounter < local.versionCounter, !arrivals.written.contains(record.recordID),
                let current = try transaction.item(of: local), current != item
            {
                // Concurrent, and the arriving one is later: the version here is the loser.
                let outcome = try write(item, record: record, arrivals: arrivals, transaction)
                try transaction.keepConflict(current, recordID: local.recordID, counter: local.versionCounter)
                return outcome == .applied ? .conflictKept : outcome
            }
        }
        // New here, a later version, or an edit that brings a deleted item back.
        return try write(item, record: record, arrivals: arrivals, transaction)
    }

    /// Writes an arriving item; when another record's item holds its primary key (an item added
    /// on two devices), the one the server ordered later keeps it and the other is kept.
    private func write(
        _ item: SyncedItem, record: ReceivedRecord, arrivals: PullArrivals, _ transaction: KeychainSyncTransaction
    ) throws -> ApplyOutcome {
        guard case .collides(let holderID, let holder) = try transaction.write(item, recordID: record.recordID, counter: record.counter)
        else { return .applied }
        guard let holder, !holder.hasPendingChange, holder.versionCounter < record.counter else {
            try transaction.keepConflict(item, recordID: record.recordID, counter: record.counter)
            let own = try transaction.record(record.recordID)
            try transaction.setRecord(record.recordID, itemClass: item.itemClass, itemID: own?.itemID, counter: record.counter)
            return .conflictKept
        }
        // The holder's version came with this pull: it was never here to lose.
        if arrivals.written.contains(holder.recordID) {
            _ = try transaction.write(item, recordID: record.recordID, counter: record.counter, replacing: holderID)
            return .applied
        }
        let current = try transaction.item(of: holder)
        _ = try transaction.write(item, recordID: record.recordID, counter: record.counter, replacing: holderID)
        if let current, current != item { try transaction.keepConflict(current, recordID: holder.recordID, counter: holder.versionCounter) }
        return .conflictKept
    }
}
