import Foundation
import Synchronization
import TresorCrypto
import TresorKeychain
import TresorProtocol
import TresorSystem

/// A restore's keychain items, staged on a thread of their own in the order they came, while the
/// restore goes on with the records after them (docs/ARCHITECTURE.md, TresorBackup). Each item is
/// decided and sealed anew under the home's keys — the bulk of a restore's per-item work — and
/// only the keychains' journals take its statements, so the notes staged meanwhile on the
/// restore's thread never wait on it.
///
/// Items are handed over in batches (one thread hand-over per batch, not per item) of at most
/// ``batchItems`` items or ``batchBytes`` of records. The thread may fall up to ``waitingBytes`` of
/// records behind — every item of a typical keychain —, so the restore's thread goes on to the
/// notes and attachments while the items are sealed; memory stays bounded whatever the backup.
final class RestoreItems {
    /// One item record of the backup.
    enum Job {
        case item(BackedUpItem, keychain: String)
        case deviceBound(DeviceBoundItemRecord)
    }

    static let batchItems = 64
    static let batchBytes = 64 << 10
    static let waitingBytes = 8 << 20

    private let stager: Stager
    private let worker: OrderedWorker<[Job]>.Owner
    private var batch: [Job] = []
    private var batchRecordBytes = 0

    /// Starts the thread.
    /// - Parameters:
    ///   - target: the home restored into.
    ///   - staging: its staging area (its journals take the statements).
    ///   - onConflict: what to do with an item whose primary key another item holds.
    ///   - sameHome: whether the backup is of this home (device-bound items are restored only then).
    init(target: RestoreTarget, staging: RestoreStaging, onConflict: ConflictPolicy, sameHome: Bool) {
        let stager = Stager(target: target, staging: staging, onConflict: onConflict, sameHome: sameHome)
        self.stager = stager
        worker = OrderedWorker<[Job]>.Owner(
            OrderedWorker(name: "tresor-items", depth: .max, costLimit: Self.waitingBytes) { jobs in
                try stager.stage(jobs)
            })
    }

    /// Queues an item; a full batch goes to the thread.
    /// - Parameters:
    ///   - job: the item.
    ///   - recordBytes: the size of its record in the backup.
    /// - Throws: what staging an earlier item threw.
    func add(_ job: Job, recordBytes: Int) throws {
        batch.append(job)
        batchRecordBytes += recordBytes
        if batch.count >= Self.batchItems || batchRecordBytes >= Self.batchBytes { try flush() }
    }

    /// Hands the items queued so far to the thread (before a record of another kind).
    /// - Throws: what staging an earlier item threw.
    func flush() throws {
        guard !batch.isEmpty else { return }
        try worker.worker.submit(batch, cost: batchRecordBytes)
        batch = []
        batchRecordBytes = 0
    }

    /// Stages what is queued and waits for the thread.
    /// - Returns: each item's report entry, in the order the items came.
    /// - Throws: what staging an item threw.
    func finish() throws -> [BackupReportEntry] {
        try flush()
        try worker.worker.finish()
        return stager.entries
    }

    /// How many items the thread has staged so far (for the progress line).
    var staged: Int { stager.staged.load(ordering: .relaxed) }

    /// Stops the thread after its current item, dropping what waits, and waits for it (a
    /// failed restore: its staging area is removed next).
    func stop() {
        worker.worker.stop()
    }

    /// The work of the thread; its state is touched by that thread only until ``finish()``
    /// returned (which waits for the thread).
    private final class Stager: @unchecked Sendable {
        let target: RestoreTarget
        let staging: RestoreStaging
        let onConflict: ConflictPolicy
        let sameHome: Bool
        private var keychains: [String: KeychainRestore?] = [:]
        private var databasePaths: [String: String] = [:]
        private(set) var entries: [BackupReportEntry] = []
        let staged = Atomic<Int>(0)

        init(target: RestoreTarget, staging: RestoreStaging, onConflict: ConflictPolicy, sameHome: Bool) {
            self.target = target
            self.staging = staging
            self.onConflict = onConflict
            self.sameHome = sameHome
        }

        /// Stages a batch: each run of items of one keychain together (one read transaction of
        /// it), the report's entries in the batch's order.
        func stage(_ jobs: [Job]) throws {
            var run: [BackedUpItem] = []
            var runKeychain = ""
            func stageRun() throws {
                guard !run.isEmpty else { return }
                defer { run = [] }
                guard let restore = try keychainRestore(runKeychain) else {
                    for item in run { add(item.id, keychain: runKeychain, description: ItemDescription.of(item), (.skipped, .keychainMissing, nil)) }
                    return
                }
                for (item, decided) in zip(run, try restore.stage(run)) {
                    let outcome = try staging.stageDecision(for: databasePath(runKeychain)) { try decided.get() }
                    add(item.id, keychain: runKeychain, description: ItemDescription.of(item), outcome)
                }
            }
            for job in jobs {
                let item: BackedUpItem, keychain: String
                switch job {
                case .item(let backedUp, let name):
                    (item, keychain) = (backedUp, name)
                case .deviceBound(let record):
                    guard let opened = opened(record) else {
                        try stageRun()
                        add(record.id, keychain: record.keychain, description: Self.description(of: record), reasonNotOpened(record))
                        continue
                    }
                    (item, keychain) = (opened, record.keychain)
                }
                if keychain != runKeychain {
                    try stageRun()
                    runKeychain = keychain
                }
                run.append(item)
            }
            try stageRun()
        }

        /// A device-bound item opened with this home's device key; nil when it is not this
        /// home's (``reasonNotOpened(_:)`` says why).
        private func opened(_ record: DeviceBoundItemRecord) -> BackedUpItem? {
            guard sameHome else { return nil }
            let associatedData = DeviceBoundItemRecord.associatedData(
                keychain: record.keychain, itemClass: record.itemClass, id: record.id, protectionClass: record.protectionClass)
            guard let json = try? Envelope.open(record.sealed, using: target.keybag.backupDeviceItemsKey, authenticating: associatedData),
                let item = try? BackupFormat.decoder.decode(BackedUpItem.self, from: json),
                item.itemClass == record.itemClass, item.id == record.id, item.protectionClass == record.protectionClass
            else { return nil }
            return item
        }

        private func reasonNotOpened(_ record: DeviceBoundItemRecord) -> (BackupOutcome, BackupReason?, String?) {
            sameHome
                ? (.skipped, .invalid, "the device-bound item does not open with this home's device key")
                : (.skipped, .deviceBoundToAnotherHome, nil)
        }

        private static func description(of record: DeviceBoundItemRecord) -> String {
            "\(record.itemClass.rawValue) item \(record.id) (\(record.protectionClass.rawValue))"
        }

        private func add(_ id: String, keychain: String, description: String, _ outcome: (BackupOutcome, BackupReason?, String?)) {
            staged.add(1, ordering: .relaxed)
            entries.append(
                BackupReportEntry(
                    kind: .item, id: id, keychain: keychain, description: description, outcome: outcome.0, reason: outcome.1, detail: outcome.2))
        }

        /// A keychain's database, relative to the home: asked of the target once per keychain
        /// (it builds URLs, which touch the file system).
        private func databasePath(_ keychain: String) -> String {
            if let known = databasePaths[keychain] { return known }
            let path = target.databasePath(keychain)
            databasePaths[keychain] = path
            return path
        }

        private func keychainRestore(_ name: String) throws -> KeychainRestore? {
            if let known = keychains[name] { return known }
            let restore = try target.keychain(name).map { KeychainRestore(keychain: $0, onConflict: onConflict) }
            keychains[name] = restore
            return restore
        }
    }
}
