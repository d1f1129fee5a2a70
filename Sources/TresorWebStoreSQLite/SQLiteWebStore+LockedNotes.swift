import Foundation
import TresorNotes
import TresorNotesDomain

extension SQLiteWebStore: LockedNoteStore {
    public func passphraseStatus(account: AccountID) async throws -> PassphraseStatus {
        try await run { try $0.passphraseStatus(account: account) }
    }

    public func passphraseHint(account: AccountID) async throws -> String? {
        try await run { try $0.passphraseHint(account: account) }
    }

    public func passphraseRecord(account: AccountID) async throws -> PassphraseRecord? {
        try await run { try $0.passphraseRecord(account: account) }
    }

    public func setPassphrase(_ material: PassphraseMaterial, hint: String?, account: AccountID) async throws {
        try await run { try $0.setPassphrase(material, hint: hint, account: account) }
    }

    public func resetPassphrase(to material: PassphraseMaterial, hint: String?, account: AccountID) async throws {
        try await run { try $0.resetPassphrase(to: material, hint: hint, account: account) }
    }

    public func changePassphrase(
        proof: PassphraseProof, to material: PassphraseMaterial, hint: String??, rewrappedKeys: [String: Data], account: AccountID
    ) async throws {
        try await run { store in
            // Every note named must be the account's own (locked notes are never shared).
            for id in rewrappedKeys.keys where try store.access(toNote: id, for: account) != .owner {
                throw NotesError.notFound("note \(id.prefix(64))")
            }
            try store.changePassphrase(proof: proof, to: material, hint: hint, rewrappedKeys: rewrappedKeys, account: account)
        }
    }

    public func enterPassphrase(_ proof: PassphraseProof, establish: Bool, account: AccountID) async throws -> PassphraseEntryOutcome {
        try await run { try $0.enterPassphrase(proof, establish: establish, account: account) }
    }

    public func wrappedKey(ofNote id: String, proof: PassphraseProof, account: AccountID) async throws -> Data {
        try await run { try $0.wrappedKey(ofNote: id, proof: proof, account: account) }
    }

    public func lockedRecord(ofNote id: String) async throws -> LockedNoteRecord {
        try await run { try $0.lockedRecord(ofNote: id) }
    }

    public func lockNote(_ id: String, sealedBy client: ClientLockedNote, proof: Data, quota: StorageQuota?) async throws {
        try await run { store in
            try self.within(quota, account: try self.owner(of: id, store), store) { try store.lockNote(id, sealedBy: client, proof: proof) }
        }
    }

    public func replaceLockedBody(
        ofNote id: String, iv: Data, tag: Data, ciphertext: Data, noteProof: Data, passphraseProof: PassphraseProof?,
        baseRevision: Int64?, quota: StorageQuota?
    ) async throws -> NoteSummary {
        try await run { store in
            try self.within(quota, account: try self.owner(of: id, store), store) {
                try store.replaceLockedBody(
                    ofNote: id, iv: iv, tag: tag, ciphertext: ciphertext, noteProof: noteProof, passphraseProof: passphraseProof,
                    baseRevision: baseRevision)
            }
        }
    }

    public func saveLockedConflictCopy(
        ofNote id: String, iv: Data, tag: Data, ciphertext: Data, noteProof: Data, passphraseProof: PassphraseProof?,
        by editor: AccountID, quota: StorageQuota?
    ) async throws -> NoteSummary {
        try await run { store in
            try self.within(quota, account: try self.owner(of: id, store), store) {
                try store.saveLockedConflictCopy(
                    ofNote: id, iv: iv, tag: tag, ciphertext: ciphertext, noteProof: noteProof, passphraseProof: passphraseProof, by: editor)
            }
        }
    }

    public func rewrap(
        _ id: String, proof: PassphraseProof, wrappedKey: Data, noteProof: Data, earlierProof: PassphraseProof?, quota: StorageQuota?
    ) async throws {
        try await run { store in
            try self.within(quota, account: try self.owner(of: id, store), store) {
                try store.rewrap(id, proof: proof, wrappedKey: wrappedKey, noteProof: noteProof, earlierProof: earlierProof)
            }
        }
    }
}
