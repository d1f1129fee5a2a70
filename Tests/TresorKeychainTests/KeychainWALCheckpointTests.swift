import Foundation
import GRDB
import Synchronization
import Testing
import TresorKeybag
import TresorStorage

@testable import TresorKeychain

/// An update or a delete returns before its truncating checkpoint runs; the old row's
/// ciphertext still leaves the WAL within ``DeferredCheckpoint/bound`` of the write, or as soon
/// as ``KeychainStore/completePendingCheckpoint()`` returns (the daemon's lock), whichever comes
/// first — and, while a reader holds a snapshot from before the write, once it ends
/// (docs/SECURITY.md, "The home at rest").
@Suite struct KeychainWALCheckpointTests {
    var walFile: (KeychainHome) -> URL { { URL(fileURLWithPath: $0.keychainFile.path + "-wal") } }

    /// Whether the WAL file holds `bytes`.
    func walHolds(_ home: KeychainHome, _ bytes: Data) -> Bool {
        guard let wal = try? Data(contentsOf: walFile(home)) else { return false }
        return wal.firstRange(of: bytes) != nil
    }

    /// How long until `done` holds, polled every 10 ms up to `limit`; nil if it still does not then.
    func timeUntil(limit: Duration, _ done: () -> Bool) -> Duration? {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < limit {
            if done() { return ContinuousClock.now - start }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return done() ? ContinuousClock.now - start : nil
    }

    /// How long until the WAL no longer holds `bytes`, polled every 10 ms up to `limit`;
    /// nil if it still does then.
    func timeUntilGone(_ home: KeychainHome, _ bytes: Data, limit: Duration) -> Duration? {
        timeUntil(limit: limit) { !walHolds(home, bytes) }
    }

    /// An item whose label is a marker, and its row as stored: its sealed attributes are in the
    /// WAL (an add does not checkpoint).
    func markedItem(_ home: KeychainHome) throws -> (id: String, row: KeychainHome.RawRow) {
        var attributes = genericPassword(service: "s", account: "ada")
        attributes.label = "marker-\(UUID().uuidString)"
        let id = try home.keychain.add(.genericPassword, attributes: attributes, secret: secret("old secret"), caller: Callers.appA).id
        let row = try home.rawRow(.genericPassword, id: id)
        #expect(walHolds(home, row.metadata) && walHolds(home, row.secret), "the new row is in the WAL")
        return (id, row)
    }

    func updateMarker(_ home: KeychainHome, _ id: String) throws {
        var changes = ItemAttributes()
        changes.label = "renamed"
        try home.keychain.update(ItemQuery(.genericPassword, id: id), changes: changes, secret: secret("new secret"), caller: Callers.appA)
    }

    @Test func anUpdatesOldCiphertextLeavesTheWALWithinTheBound() throws {
        let home = try KeychainHome()
        let (id, old) = try markedItem(home)
        try updateMarker(home, id)
        let elapsed = timeUntilGone(home, old.metadata, limit: DeferredCheckpoint.bound)
        #expect(elapsed != nil, "the old attributes' ciphertext is still in the WAL after \(DeferredCheckpoint.bound)")
        #expect(!walHolds(home, old.secret) && home.files(containing: old.secret).isEmpty && home.files(containing: old.metadata).isEmpty)
        // The WAL is truncated before the checkpoint's call returns and clears the flag.
        let start = ContinuousClock.now
        while home.keychain.hasPendingCheckpoint, ContinuousClock.now - start < DeferredCheckpoint.bound { Thread.sleep(forTimeInterval: 0.01) }
        #expect(!home.keychain.hasPendingCheckpoint)
    }

    @Test func aDeletedRowLeavesTheWALWithinTheBound() throws {
        let home = try KeychainHome()
        let (id, old) = try markedItem(home)
        #expect(try home.keychain.delete(ItemQuery(.genericPassword, id: id), caller: Callers.appA) == 1)
        #expect(timeUntilGone(home, old.secret, limit: DeferredCheckpoint.bound) != nil)
        #expect(home.files(containing: old.secret).isEmpty && home.files(containing: old.metadata).isEmpty)
    }

    /// What the daemon does before it answers a lock: the old ciphertext is gone when it returns.
    @Test func completingThePendingCheckpointClearsTheWALAtOnce() throws {
        let home = try KeychainHome()
        let (id, old) = try markedItem(home)
        try updateMarker(home, id)
        #expect(home.keychain.completePendingCheckpoint())
        #expect(!walHolds(home, old.metadata) && !walHolds(home, old.secret))
        #expect(home.files(containing: old.metadata).isEmpty)
    }

    /// Many updates in a row share checkpoints: each returns without one, and the last one's
    /// old ciphertext is gone within the bound all the same. A checkpoint that ran between two of
    /// them copied an older row into the database file, and the next one overwrites it: so the
    /// wait is for every old row to leave every file, not only the WAL.
    @Test func updatesInARowShareACheckpoint() throws {
        let home = try KeychainHome()
        let (id, first) = try markedItem(home)
        var rows = [first]
        for index in 0..<20 {
            var changes = ItemAttributes()
            changes.label = "label-\(index)"
            try home.keychain.update(ItemQuery(.genericPassword, id: id), changes: changes, secret: secret("s\(index)"), caller: Callers.appA)
            rows.append(try home.rawRow(.genericPassword, id: id))
        }
        let old = rows.dropLast()
        _ = timeUntil(limit: DeferredCheckpoint.bound) { old.allSatisfy { home.files(containing: $0.metadata).isEmpty } }
        for (index, row) in old.enumerated() {
            #expect(home.files(containing: row.metadata).isEmpty, "row \(index)'s old ciphertext is still on disk after \(DeferredCheckpoint.bound)")
        }
    }

    /// A reader holding a snapshot from before the update keeps the WAL from being truncated —
    /// it still reads the old row — however long it holds it; the checkpoint is retried, and
    /// the old ciphertext is gone within the bound of the reader's end.
    @Test func aLongReaderHoldsTheOldCiphertextUntilItEnds() throws {
        let home = try KeychainHome()
        let (id, old) = try markedItem(home)
        let reader = try SealedDatabase.openReader(at: home.keychainFile)
        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), ended = DispatchSemaphore(value: 0)
        let stillOld = Mutex<Data?>(nil)
        Thread.detachNewThread {
            // One read transaction: the snapshot is taken at its first statement and held to its end.
            try? reader.read { db in
                _ = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM genp")
                holding.signal()
                release.wait()
                let metadata = try Data.fetchOne(db, sql: "SELECT metadata FROM genp WHERE id = ?", arguments: [Int64(id)!])
                stillOld.withLock { $0 = metadata }
            }
            ended.signal()
        }
        holding.wait()
        try updateMarker(home, id)
        Thread.sleep(forTimeInterval: 1.5)
        #expect(walHolds(home, old.metadata), "the reader's snapshot holds the old row")
        #expect(home.keychain.hasPendingCheckpoint)
        release.signal()
        ended.wait()
        #expect(stillOld.withLock { $0 } == old.metadata, "the reader read the old row to its end")
        #expect(timeUntilGone(home, old.metadata, limit: DeferredCheckpoint.bound) != nil, "gone within the bound of the reader's end")
        #expect(home.files(containing: old.secret).isEmpty)
        try reader.close()
    }
}
