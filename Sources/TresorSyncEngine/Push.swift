import Foundation
import TresorKeychain
import TresorSync
import TresorSyncProtocol

extension SyncEngine {
    /// Sends the outbox. Each change is sealed once — its device sequence (contiguous), base and
    /// body fixed in the database — and sent as it is until the server answers, so a push
    /// retried after a lost answer or a crash is the same push and the server stores nothing
    /// twice. An entry leaves the outbox only in the transaction that records the server's
    /// counter as its item's version. A change of an item whose class is locked waits.
    ///
    /// The outbox is read a request at a time: the entries are sealed as they are sent, read
    /// after the last one read (by the outbox's id), so a push of N changes reads each once and
    /// holds one request's worth in memory, however many wait.
    /// - Returns: how many changes the server confirmed.
    /// - Throws: ``SyncEngineError``, the transport's errors (the outbox stays as it was).
    @discardableResult
    public func push() async throws -> Int {
        var confirmed = 0
        var reading = OutboxReading()
        while true {
            let batch = try keychain.syncTransaction { transaction in
                try sealPending(transaction, &reading)
                return Self.nextBatch(try transaction.sealedOutbox(limit: SyncLimits.uploadsPerPush))
            }
            guard !batch.isEmpty else {
                // A change of a record whose earlier change was waiting for its answer was
                // passed by; those answers came: read the outbox once more from its start.
                guard reading.passedBehindSealed else { return confirmed }
                reading = OutboxReading()
                continue
            }
            let uploads = batch.map { entry in
                SyncUpload(
                    recordID: entry.recordID, deviceID: device.deviceID, deviceSequence: entry.deviceSequence!,
                    baseCounter: entry.baseCounter!, body: entry.body!)
            }
            let answer = try await transport.push(SyncPushRequest(uploads: uploads))
            guard answer.records.count == uploads.count else {
                throw SyncEngineError.unexpectedPushAnswer("\(answer.records.count) records for \(uploads.count) uploads")
            }
            for (record, upload) in zip(answer.records, uploads) where record.upload != upload {
                throw SyncEngineError.unexpectedPushAnswer("sequence \(upload.deviceSequence) came back changed")
            }
            try keychain.syncTransaction { transaction in
                for (entry, record) in zip(batch, answer.records) { try transaction.confirm(entry, counter: record.counter) }
            }
            confirmed += batch.count
        }
    }

    /// Where a push is in the outbox's entries not sealed yet.
    struct OutboxReading {
        /// The id of the last entry read.
        var lastID: Int64 = 0
        /// Whether an entry was passed by because an earlier change of its record waited.
        var passedBehindSealed = false
    }

    /// The sealed entries to send next, in device-sequence order, within a push's limits.
    static func nextBatch(_ sealed: [OutboxEntry]) -> [OutboxEntry] {
        var batch: [OutboxEntry] = [], bytes = 0
        for entry in sealed where entry.deviceSequence != nil {
            let size = entry.body?.count ?? 0
            if batch.count == SyncLimits.uploadsPerPush || (!batch.isEmpty && bytes + size > SyncLimits.pushBodyBytes) { break }
            batch.append(entry)
            bytes += size
        }
        return batch
    }

    /// Seals entries not sealed yet, after those `reading` read, until a request's worth is
    /// sealed: each as its record is now — the item, or a tombstone when the record has none
    /// here. An entry of a record with an earlier one still unanswered waits for its answer (it
    /// names that answer's counter as its base).
    private func sealPending(_ transaction: KeychainSyncTransaction, _ reading: inout OutboxReading) throws {
        var wanted = SyncLimits.uploadsPerPush - (try transaction.sealedOutboxCount(upTo: SyncLimits.uploadsPerPush))
        var sequence = try lastDeviceSequence(transaction)
        let first = sequence
        while wanted > 0 {
            let page = try transaction.unsealedOutbox(after: reading.lastID, limit: SyncLimits.uploadsPerPush)
            for (entry, behindSealed) in page {
                guard wanted > 0 else { break }
                reading.lastID = entry.id
                if behindSealed {
                    reading.passedBehindSealed = true
                    continue
                }
                guard let record = try transaction.record(entry.recordID) else { continue }
                let item: SyncedItem?
                do {
                    item = try transaction.item(of: record)
                } catch KeychainError.interactionNotAllowed(_) {
                    continue  // its class is locked: sent after the next unlock
                }
                guard let key = keys.current else { throw SyncEngineError.noCircleKey }
                let content: RecordContent
                if let item {
                    content = RecordContent(payload: try item.encoded())
                    try transaction.recordSize(of: content, for: record.recordID)
                } else {
                    content = .tombstone(paddedTo: try transaction.paddedSize(of: record.recordID))
                }
                sequence += 1
                let upload = try SealedRecord.seal(
                    content, recordID: record.recordID, deviceSequence: sequence, baseCounter: record.versionCounter, account: account,
                    key: key, device: device)
                try transaction.seal(entry, deviceSequence: sequence, baseCounter: record.versionCounter, isTombstone: item == nil, body: upload.body)
                wanted -= 1
            }
            if page.count < SyncLimits.uploadsPerPush { break }
        }
        if sequence != first { try transaction.setState(Data(String(sequence).utf8), named: StateName.deviceSequence) }
    }

    private func lastDeviceSequence(_ transaction: KeychainSyncTransaction) throws -> UInt64 {
        guard let stored = try transaction.state(named: StateName.deviceSequence) else { return 0 }
        return UInt64(String(decoding: stored, as: UTF8.self)) ?? 0
    }
}

extension KeychainSyncTransaction {
    /// Records the padded size of `content`, a version of `recordID` sent or arrived: the
    /// record's deletion is padded to it (``RecordContent/tombstone(paddedTo:)``).
    func recordSize(of content: RecordContent, for recordID: String) throws {
        guard let size = RecordPadding.paddedSize(payloadCount: content.payload.count) else { return }
        try setPaddedSize(size, of: recordID)
    }
}

/// The names of the engine's values in the keychain's `sync_state`.
enum StateName {
    static let deviceSequence = "device-sequence"
    static let progress = "progress"
    static let deletionWindow = "deletion-window"
    static let ledgerOwner = "ledger-owner"
}
