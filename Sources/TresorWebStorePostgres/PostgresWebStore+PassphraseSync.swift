import Foundation
import PostgresNIO
import TresorNotesDomain

// The account's notes passphrase for its devices (docs/SYNC.md, "Notes"): which generation is
// current, and its hint. A device's generation is recorded by its salt and made current only
// when the account's current one is still the one the device last had.
extension PostgresWebStore {
    func syncedCurrentPassphrase(account: AccountID) async throws -> SyncedPassphrase? {
        try await db.read { [self] connection in try await currentSyncedPassphrase(account, connection) }
    }

    func storeSyncedPassphrase(_ passphrase: SyncedPassphrase, base: Data?, account: AccountID) async throws -> SyncedPassphrase? {
        try await db.transaction { [self, logger] connection in
            let state = try await lockAccount(account, connection)
            let currentSalt = try await state.currentPassphraseID.asyncMap { try await self.passphrase($0, connection).salt }
            let id = try await passphraseID(for: passphrase, account: account, connection)
            let sealedHint = try passphrase.hint.map { try sealing.sealText($0, "passphrases", "\(id)", "hint") }
            try await connection.run("UPDATE passphrases SET sealed_hint = \(sealedHint) WHERE id = \(id)", logger)
            if currentSalt == nil || currentSalt == base || currentSalt == passphrase.salt {
                try await connection.run(
                    """
                    UPDATE accounts SET current_passphrase_id = \(id), failed_passphrase_entries = 0, last_passphrase_failure = NULL
                    WHERE id = \(account.rawValue) AND current_passphrase_id IS DISTINCT FROM \(id)
                    """, logger)
            }
            try await announcePassphraseChange(account, connection)
            return try await currentSyncedPassphrase(account, connection)
        }
    }

    /// The account's current generation with its hint; nil for none.
    private func currentSyncedPassphrase(_ account: AccountID, _ connection: PostgresConnection) async throws -> SyncedPassphrase? {
        guard let id = try await accountState(account, connection).currentPassphraseID else { return nil }
        let record = try await passphrase(id, connection)
        // A current passphrase is a Tresor generation: it has its verifier.
        guard let verifier = record.verifier else { throw NotesError.damaged("passphrase record \(id)") }
        return try SyncedPassphrase(
            salt: record.salt, iterations: record.iterations, verifier: verifier, proofHash: record.proofHash, hint: try hint(of: record))
    }
}
