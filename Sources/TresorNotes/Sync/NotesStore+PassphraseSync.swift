import Foundation
import GRDB
import TresorNotesDomain

// The local account's notes passphrase and the sync account's travel together (docs/SYNC.md,
// "Notes"): which generation is current, and its hint. `sync_passphrase` keeps, sealed, the
// account's current generation as this device last agreed it with the server: a local current
// generation or hint that differs from it is this device's change to send.

extension NotesStore {
    /// The local account's current passphrase generation as it travels, and the one this device
    /// last agreed with the server.
    /// - Returns: `current` nil while none is set, or for a passphrase imported from Apple Notes
    ///   (it has no verifier to travel with); `agreed` nil before the first agreement.
    /// - Throws: ``NotesError/contentUnavailable`` while the keybag was never unlocked.
    public func passphraseForSync() throws -> (current: SyncedPassphrase?, agreed: SyncedPassphrase?) {
        let sealing = try sealing()
        return try pool.read { db in
            var current: SyncedPassphrase?
            if let id = try AccountRow.fetch(.local, db).currentPassphraseID {
                let row = try PassphraseRow.fetch(id, db)
                if row.source == .tresor, let verifier = row.verifier {
                    current = try SyncedPassphrase(
                        salt: row.salt, iterations: row.iterations, verifier: verifier, proofHash: row.proofHash, hint: try hint(of: row, sealing))
                }
            }
            return (current, try agreedPassphrase(db, sealing))
        }
    }

    /// Makes the sync account's current passphrase generation the local account's current one —
    /// recorded by its salt when this device does not have it, its hint as the server has it —
    /// and records it as agreed, in one transaction. Nothing is written when all is so already.
    /// - Parameter passphrase: the account's current generation on the server.
    /// - Throws: ``NotesError/contentUnavailable``.
    public func applySyncedPassphrase(_ passphrase: SyncedPassphrase) throws {
        let sealing = try sealing()
        try pool.write { db in
            if try agreedPassphrase(db, sealing) == passphrase, let id = try AccountRow.fetch(.local, db).currentPassphraseID,
                try PassphraseRow.fetch(id, db).salt == passphrase.salt
            {
                return
            }
            let id = try syncedPassphraseID(passphrase, db)
            let row = try PassphraseRow.fetch(id, db)
            if try hint(of: row, sealing) != passphrase.hint {
                try db.execute(
                    sql: "UPDATE passphrases SET sealed_hint = ? WHERE id = ?",
                    arguments: [try passphrase.hint.map { try sealing.sealText($0, table: "passphrases", id: "\(id)", column: "hint") }, id])
            }
            try db.execute(sql: "UPDATE accounts SET current_passphrase_id = ? WHERE id = 'local'", arguments: [id])
            let agreed = try sealing.seal(try JSONEncoder().encode(passphrase), table: "sync_passphrase", id: "1", column: "agreed")
            try db.execute(sql: "INSERT OR REPLACE INTO sync_passphrase (id, sealed_agreed) VALUES (1, ?)", arguments: [agreed])
        }
    }

    /// The local account's generation of `passphrase`'s salt; else recorded as the local
    /// account's next generation (current when it has none).
    func syncedPassphraseID(_ passphrase: SyncedPassphrase, _ db: Database) throws -> Int64 {
        if let known = try Int64.fetchOne(
            db, sql: "SELECT id FROM passphrases WHERE account_id = 'local' AND source = ? AND salt = ? ORDER BY id LIMIT 1",
            arguments: [LockInfo.Source.tresor.rawValue, passphrase.salt])
        {
            return known
        }
        let generation =
            (try Int.fetchOne(
                db, sql: "SELECT MAX(generation) FROM passphrases WHERE account_id = 'local' AND source = ?",
                arguments: [LockInfo.Source.tresor.rawValue]) ?? 0) + 1
        try db.execute(
            sql: """
                INSERT INTO passphrases (account_id, source, generation, salt, iterations, verifier, proof_hash, created)
                VALUES ('local', ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                LockInfo.Source.tresor.rawValue, generation, passphrase.salt, passphrase.iterations, passphrase.verifier, passphrase.proofHash,
                now.timeIntervalSince1970,
            ])
        let id = db.lastInsertedRowID
        try db.execute(sql: "UPDATE accounts SET current_passphrase_id = ? WHERE id = 'local' AND current_passphrase_id IS NULL", arguments: [id])
        return id
    }

    private func agreedPassphrase(_ db: Database, _ sealing: ContentSealing) throws -> SyncedPassphrase? {
        guard let sealed = try Data.fetchOne(db, sql: "SELECT sealed_agreed FROM sync_passphrase WHERE id = 1") else { return nil }
        guard
            let agreed = try? JSONDecoder().decode(
                SyncedPassphrase.self, from: try sealing.open(sealed, table: "sync_passphrase", id: "1", column: "agreed"))
        else { throw NotesError.damaged("the sync's agreed passphrase") }
        return agreed
    }
}
