import Crypto
import Foundation
import GRDB
import TresorCrypto
import TresorKeybag
import TresorNotesDomain

// The account passphrase and secure sessions (docs/API.md, "The passphrase", "Locked notes and
// secure sessions").
extension NotesStore {
    /// Sets the account's first passphrase (generation 1) and opens its session.
    public func setPassphrase(_ passphrase: Passphrase, hint: String? = nil, account: AccountID = .local) throws {
        try validateHint(hint, for: passphrase)
        let sealing = try sealing()
        let account0 = try pool.read { db in try AccountRow.fetch(account, db) }
        guard account0.currentPassphraseID == nil else { throw NotesError.passphraseAlreadySet }
        try newGeneration(passphrase, hint: hint, account: account, sealing, requireNone: true)
    }

    /// Resets a forgotten passphrase: a new generation for notes locked from now on. Notes
    /// locked before keep opening with the passphrase they were locked with. The caller must
    /// have checked the account password (for the local account: the keybag passcode).
    public func resetPassphrase(to passphrase: Passphrase, hint: String? = nil, account: AccountID = .local) throws {
        try validateHint(hint, for: passphrase)
        try newGeneration(passphrase, hint: hint, account: account, try sealing(), requireNone: false)
    }

    /// Changes the passphrase: `current` must be typed (an open session or the keychain is
    /// not accepted). Every note locked with it has its note key re-wrapped under the new one —
    /// no content is re-encrypted — in one transaction, so a crash leaves every note opening
    /// with either the old or the new passphrase. Each note's revision counts up and it is
    /// announced as changed. `progress` is called with (done, total).
    public func changePassphrase(
        from current: Passphrase, to new: Passphrase, hint: String?? = nil, account: AccountID = .local,
        progress: ((Int, Int) -> Void)? = nil
    ) throws {
        if let hint { try validateHint(hint, for: new) }
        let sealing = try sealing()
        let record = try currentPassphrase(account)
        let oldKey = try checkedKey(for: record, passphrase: current, sealing, opensSession: false)
        // A hint kept is shown for the new passphrase: it must not give that one away either.
        if case .none = hint, let kept = try self.hint(of: record, sealing) {
            do {
                try validateHint(kept, for: new)
            } catch NotesError.invalid(_) {
                throw NotesError.invalid("the hint kept from the old passphrase contains the new one: give another hint, or none")
            }
        }
        let salt = SecureRandom.bytes(count: LockedNoteCrypto.saltByteCount)
        let iterations = minimumIterations
        let newKey = try LockedNoteCrypto.passphraseKey(new, salt: salt, iterations: iterations)
        defer { changeProgress.withLock { $0 = nil } }
        let rewrapped = try pool.write { db -> [String] in
            let notes = try Row.fetchAll(db, sql: "SELECT id, crypto_wrapped_key FROM notes WHERE passphrase_id = ?", arguments: [record.id])
            changeProgress.withLock { $0 = (0, notes.count) }
            // A new wrapping is what another device must fetch to open the note: the revision counts up.
            let update = try db.makeStatement(
                sql: """
                    UPDATE notes SET crypto_salt = ?, crypto_iterations = ?, crypto_wrapped_key = ?, revision = revision + 1 WHERE id = ?
                    """)
            for (done, note) in notes.enumerated() {
                let id: String = note["id"]
                guard let noteKey = LockedNoteCrypto.unwrap(note["crypto_wrapped_key"], with: oldKey) else {
                    throw NotesError.damaged("the wrapped key of note \(id)")
                }
                try update.execute(arguments: [salt, iterations, try LockedNoteCrypto.wrap(noteKey, with: newKey), id])
                if done % 64 == 63 || done == notes.count - 1 {
                    changeProgress.withLock { $0 = (done + 1, notes.count) }
                    progress?(done + 1, notes.count)
                }
            }
            let material = try PassphraseMaterial(salt: salt, iterations: iterations, key: newKey)
            try updateGeneration(record.id, to: material, hint: hint, db, sealing)
            return notes.map { $0["id"] }
        }
        sessions.withLock { $0.open(record.id, key: newKey, now: now) }
        for id in rewrapped { announce(.changed, note: id) }
    }

    /// Where a passphrase change stands, while one runs: (notes re-wrapped, notes in all).
    public var passphraseChangeProgress: (done: Int, total: Int)? { changeProgress.withLock { $0 } }

    /// The account's hint for its current passphrase.
    public func passphraseHint(account: AccountID = .local) throws -> String? {
        try hint(of: currentPassphrase(account), try sealing())
    }

    /// Replaces the hint. A new hint needs the current passphrase typed — only with it can the
    /// store check that the hint does not give it away; removing the hint needs the passphrase or
    /// its open session.
    public func setPassphraseHint(_ hint: String?, passphrase: Passphrase? = nil, account: AccountID = .local) throws {
        try validateHint(hint, for: passphrase)
        let sealing = try sealing()
        let record = try currentPassphrase(account)
        if hint != nil, passphrase == nil {
            throw NotesError.passphraseRequired(try pool.read { db in try lockInfo(record, db, sealing) })
        }
        _ = try passphraseKey(for: record, passphrase: passphrase, sealing)
        try pool.write { db in
            try db.execute(
                sql: "UPDATE passphrases SET sealed_hint = ? WHERE id = ?",
                arguments: [
                    try hint.map { try sealing.sealText($0, table: "passphrases", id: "\(record.id)", column: "hint") }, record.id,
                ])
        }
    }

    /// The passphrase state of `account`.
    public func passphraseStatus(account: AccountID = .local) throws -> PassphraseStatus {
        let now = now, timeout = settings.sessionIdleTimeout
        return try pool.read { db in
            let row = try AccountRow.fetch(account, db)
            let current = try row.currentPassphraseID.map { try PassphraseRow.fetch($0, db) }
            return PassphraseStatus(
                isSet: current != nil, generation: current?.generation, setOn: current?.created,
                hasHint: current?.sealedHint != nil, failedAttempts: row.failedEntries,
                retryAfterSeconds: GuessingDelay.remaining(afterFailures: row.failedEntries, lastFailure: row.lastFailure, now: now),
                keychainUnlock: row.keychainUnlock,
                sessionOpen: current.map { id in sessions.withLock { $0.isOpen(id.id, now: now, timeout: timeout) } } ?? false)
        }
    }

    // MARK: Secure sessions

    /// Lock Now: ends every secure session and drops its key. Returns how many were open.
    @discardableResult
    public func lockNow() -> Int { sessions.withLock { $0.endAll() } }

    /// Ends the sessions idle for longer than the timeout. The daemon calls this periodically
    /// so keys leave memory on time even when nothing else happens.
    @discardableResult
    public func expireIdleSessions() -> Int {
        let now = now, timeout = settings.sessionIdleTimeout
        return sessions.withLock { $0.expire(now: now, timeout: timeout) }
    }

    /// How many secure sessions are open.
    public var openSessionCount: Int { sessions.withLock { $0.count } }

    // MARK: Unlock through the keychain (docs/API.md)

    /// Records whether the account's passphrase key may be kept in the keychain. The daemon
    /// stores and reads the key itself (``currentSessionKey(account:)``, ``openSession(with:account:)``).
    public func setKeychainUnlock(_ enabled: Bool, account: AccountID = .local) throws {
        try pool.write { db in
            _ = try AccountRow.fetch(account, db)
            try db.execute(sql: "UPDATE accounts SET keychain_unlock = ? WHERE id = ?", arguments: [enabled, account.rawValue])
        }
    }

    /// The current passphrase's key, if its session is open: what the keychain keeps.
    public func currentSessionKey(account: AccountID = .local) throws -> SymmetricKey? {
        let record = try currentPassphrase(account)
        let now = now, timeout = settings.sessionIdleTimeout
        return sessions.withLock { $0.key(for: record.id, now: now, timeout: timeout) }
    }

    /// Opens the current passphrase's session with a key kept in the keychain. Returns false
    /// (and opens nothing) when the key is not the current passphrase's — after a change
    /// made elsewhere, for example.
    @discardableResult
    public func openSession(with key: SymmetricKey, account: AccountID = .local) throws -> Bool {
        let record = try currentPassphrase(account)
        guard let verifier = record.verifier, LockedNoteCrypto.unwrap(verifier, with: key) != nil else { return false }
        try recordProofIfNeeded(of: record, key: key)
        let now = now
        sessions.withLock { $0.open(record.id, key: key, now: now) }
        return true
    }

    // MARK: Helpers

    func currentPassphrase(_ account: AccountID) throws -> PassphraseRow {
        try pool.read { db in
            guard let id = try AccountRow.fetch(account, db).currentPassphraseID else { throw NotesError.noPassphrase }
            return try PassphraseRow.fetch(id, db)
        }
    }

    private func newGeneration(_ passphrase: Passphrase, hint: String?, account: AccountID, _ sealing: ContentSealing, requireNone: Bool) throws {
        let salt = SecureRandom.bytes(count: LockedNoteCrypto.saltByteCount)
        let key = try LockedNoteCrypto.passphraseKey(passphrase, salt: salt, iterations: minimumIterations)
        let material = try PassphraseMaterial(salt: salt, iterations: minimumIterations, key: key)
        let id = try insertGeneration(material, hint: hint, account: account, sealing, requireNone: requireNone)
        let opened = self.now
        sessions.withLock { $0.open(id, key: key, now: opened) }
    }

    /// Gives generation `id` its new salt, rounds, verifier and proof hash once its notes' keys
    /// are re-wrapped (a change), and its new hint when one is given (`.some(nil)` removes it).
    func updateGeneration(_ id: Int64, to material: PassphraseMaterial, hint: String??, _ db: Database, _ sealing: ContentSealing) throws {
        var assignments = "salt = ?, iterations = ?, verifier = ?, proof_hash = ?, created = ?"
        var arguments: StatementArguments = [
            material.salt, material.iterations, material.verifier, material.proofHash, now.timeIntervalSince1970,
        ]
        if let hint {
            assignments += ", sealed_hint = ?"
            arguments += [try hint.map { try sealing.sealText($0, table: "passphrases", id: "\(id)", column: "hint") }]
        }
        try db.execute(sql: "UPDATE passphrases SET \(assignments) WHERE id = ?", arguments: arguments + [id])
    }

    /// Writes a new passphrase generation (the next number of the account's) and makes it the
    /// current one, clearing the wrong-entry count. Returns its id.
    func insertGeneration(
        _ material: PassphraseMaterial, hint: String?, account: AccountID, _ sealing: ContentSealing, requireNone: Bool
    ) throws -> Int64 {
        try pool.write { db -> Int64 in
            let row = try AccountRow.fetch(account, db)
            if requireNone && row.currentPassphraseID != nil { throw NotesError.passphraseAlreadySet }
            let generation =
                (try Int.fetchOne(
                    db,
                    sql: """
                        SELECT MAX(generation) FROM passphrases WHERE account_id = ? AND source = ?
                        """, arguments: [account.rawValue, LockInfo.Source.tresor.rawValue]) ?? 0) + 1
            try db.execute(
                sql: """
                    INSERT INTO passphrases (account_id, source, generation, salt, iterations, verifier, proof_hash, created)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    account.rawValue, LockInfo.Source.tresor.rawValue, generation, material.salt, material.iterations,
                    material.verifier, material.proofHash, now.timeIntervalSince1970,
                ])
            let id = db.lastInsertedRowID
            if let hint {
                try db.execute(
                    sql: "UPDATE passphrases SET sealed_hint = ? WHERE id = ?",
                    arguments: [try sealing.sealText(hint, table: "passphrases", id: "\(id)", column: "hint"), id])
            }
            try db.execute(sql: "UPDATE accounts SET current_passphrase_id = ? WHERE id = ?", arguments: [id, account.rawValue])
            try AccountRow.clearWrongEntries(account, db)
            return id
        }
    }

    func validateHint(_ hint: String?, for passphrase: Passphrase? = nil) throws {
        guard let hint else { return }
        try NoteRules.validate(hint, limit: NoteLimits.hintBytes, what: "hint", allowEmpty: false)
        // The hint is shown to whoever types wrong passphrases: it must not give the passphrase
        // away, in any letter case. Letters are folded byte by byte (ASCII), so that no copy of
        // the passphrase is made as a `String`; the folded copy is zeroed.
        guard let passphrase else { return }
        let folded = { (byte: UInt8) -> UInt8 in (0x41...0x5A).contains(byte) ? byte + 0x20 : byte }
        let foldedHint = hint.utf8.map(folded)
        let found = passphrase.text.withUnsafeBytes { text in
            var foldedPassphrase = text.map(folded)
            defer { foldedPassphrase.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
            return foldedHint.firstRange(of: foldedPassphrase) != nil
        }
        if found { throw NotesError.invalid("the hint must not contain the passphrase") }
    }
}
