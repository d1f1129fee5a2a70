import Foundation
import GRDB
import TresorCrypto
import TresorNotesDomain

/// A row of `accounts`.
struct AccountRow {
    var id: String
    var name: String
    var currentPassphraseID: Int64?
    var keychainUnlock: Bool
    var failedEntries: Int
    var lastFailure: Date?

    init(row: Row) {
        id = row["id"]
        name = row["name"]
        currentPassphraseID = row["current_passphrase_id"]
        keychainUnlock = row["keychain_unlock"]
        failedEntries = row["failed_passphrase_entries"]
        lastFailure = (row["last_passphrase_failure"] as Double?).map(Date.init(timeIntervalSince1970:))
    }

    static func fetch(_ id: AccountID, _ db: Database) throws -> AccountRow {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM accounts WHERE id = ?", arguments: [id.rawValue]) else {
            throw NotesError.notFound("account \(id)")
        }
        return AccountRow(row: row)
    }

    /// Counts a wrong passphrase entry (typed in the CLI, or a wrong proof from a web client) and
    /// returns the account as it now is.
    static func countWrongEntry(_ id: AccountID, at date: Date, _ db: Database) throws -> AccountRow {
        try db.execute(
            sql: """
                UPDATE accounts SET failed_passphrase_entries = failed_passphrase_entries + 1, last_passphrase_failure = ? WHERE id = ?
                """, arguments: [date.timeIntervalSince1970, id.rawValue])
        return try fetch(id, db)
    }

    /// Gives back one entry counted in advance (``NotesStore`` reserves an attempt before the
    /// key derivation) when the attempt never got to check the passphrase.
    static func releaseReservedEntry(_ id: AccountID, _ db: Database) throws {
        try db.execute(
            sql: "UPDATE accounts SET failed_passphrase_entries = MAX(0, failed_passphrase_entries - 1) WHERE id = ?",
            arguments: [id.rawValue])
    }

    /// Clears the wrong-entry count: after a right entry, or a passphrase changed.
    static func clearWrongEntries(_ id: AccountID, _ db: Database) throws {
        try db.execute(
            sql: "UPDATE accounts SET failed_passphrase_entries = 0, last_passphrase_failure = NULL WHERE id = ?",
            arguments: [id.rawValue])
    }
}

/// A row of `passphrases`: one passphrase generation, or one imported Apple passphrase.
struct PassphraseRow {
    var id: Int64
    var accountID: String
    var source: LockInfo.Source
    var generation: Int?
    var salt: Data
    var iterations: Int
    /// A random key wrapped under the passphrase key, to check a passphrase without a note.
    var verifier: Data?
    /// SHA-256 of the passphrase proof; nil until recorded (rows from before proofs, imports).
    var proofHash: Data?
    var sealedHint: Data?
    var created: Date

    init(row: Row) {
        id = row["id"]
        accountID = row["account_id"]
        source = LockInfo.Source(rawValue: row["source"]) ?? .tresor
        generation = row["generation"]
        salt = row["salt"]
        iterations = row["iterations"]
        verifier = row["verifier"]
        proofHash = row["proof_hash"]
        sealedHint = row["sealed_hint"]
        created = Date(timeIntervalSince1970: row["created"])
    }

    static func fetch(_ id: Int64, _ db: Database) throws -> PassphraseRow {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM passphrases WHERE id = ?", arguments: [id]) else {
            throw NotesError.damaged("passphrase record \(id)")
        }
        return PassphraseRow(row: row)
    }
}

/// How a locked body's plaintext is encoded.
enum BodyFormat: String {
    /// UTF-8 text (notes locked in Tresor or in the web client).
    case text
    /// Apple Notes' gzipped protobuf (notes imported still locked).
    case appleNotes = "apple-notes"
}

/// A row of `notes`.
struct NoteRow {
    var id: String
    var accountID: String
    var folderID: String?
    var created: Date
    var modified: Date
    var isPinned: Bool
    var sealedTitle: Data
    var sealedBody: Data?
    var passphraseID: Int64?
    var salt: Data?
    var iterations: Int?
    var wrappedKey: Data?
    var iv: Data?
    var tag: Data?
    var sealedCiphertext: Data?
    var bodyFormat: BodyFormat
    /// A shared note's record key, sealed under the content key (see `ContentSealing.noteLayer`).
    var sealedRecordKey: Data?
    /// SHA-256 of the note proof; nil until recorded (notes locked before proofs, imports).
    var noteProofHash: Data?
    /// Counted up on every change (trigger `notes_revision`): what a save names as its base.
    var revision: Int64 = 1
    /// When the note was moved to Recently Deleted; nil for a note that is not there.
    var deleted: Date?

    var isLocked: Bool { passphraseID != nil }
    var isDeleted: Bool { deleted != nil }

    init(row: Row) {
        id = row["id"]
        accountID = row["account_id"]
        folderID = row["folder_id"]
        created = Date(timeIntervalSince1970: row["created"])
        modified = Date(timeIntervalSince1970: row["modified"])
        isPinned = row["pinned"]
        sealedTitle = row["sealed_title"]
        sealedBody = row["sealed_body"]
        passphraseID = row["passphrase_id"]
        salt = row["crypto_salt"]
        iterations = row["crypto_iterations"]
        wrappedKey = row["crypto_wrapped_key"]
        iv = row["crypto_iv"]
        tag = row["crypto_tag"]
        sealedCiphertext = row["sealed_ciphertext"]
        bodyFormat = BodyFormat(rawValue: row["body_format"]) ?? .text
        sealedRecordKey = row["sealed_record_key"]
        noteProofHash = row["note_proof_hash"]
        revision = row["revision"]
        deleted = (row["deleted"] as Double?).map(Date.init(timeIntervalSince1970:))
    }

    static func fetch(_ id: String, _ db: Database) throws -> NoteRow {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM notes WHERE id = ?", arguments: [id]) else {
            throw NotesError.notFound("note \(id.prefix(64))")
        }
        return NoteRow(row: row)
    }
}

/// A row of `attachments`.
struct AttachmentRow {
    var id: String
    var noteID: String
    var kind: AttachmentKind
    var sealedName: Data
    var byteCount: Int
    var created: Date
    var file: String
    var isLocked: Bool
    /// Left out of backups (docs/FORMAT.md, "Backups").
    var isExcludedFromBackup: Bool

    init(row: Row) throws {
        id = row["id"]
        noteID = row["note_id"]
        guard let kind = AttachmentKind(rawValue: row["kind"]) else { throw NotesError.damaged("attachment \(row["id"] as String)") }
        self.kind = kind
        sealedName = row["sealed_name"]
        byteCount = row["byte_count"]
        created = Date(timeIntervalSince1970: row["created"])
        file = row["file"]
        isLocked = row["is_locked"]
        isExcludedFromBackup = row["exclude_from_backup"] ?? false
    }

    static func fetchAll(note noteID: String, _ db: Database) throws -> [AttachmentRow] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM attachments WHERE note_id = ? ORDER BY created, id"), arguments: [noteID])
            .map(AttachmentRow.init)
    }
}
