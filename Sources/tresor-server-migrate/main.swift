import Dispatch
import Foundation
import Logging
import Synchronization
import TresorKeybag
import TresorNotes
import TresorNotesDomain
import TresorSystem
import TresorWebStore
import TresorWebStorePostgres

// `tresor server migrate` (docs/WEB.md, "Moving a home's web accounts to a server"): moves a
// home's web accounts, with their folders, notes, shares, attachments and passphrase records,
// into a server's PostgreSQL database. A process of its own, which `tresor` executes in its
// place: `tresor` links neither SQLite nor PostgreSQL (docs/ARCHITECTURE.md).
//
//     tresor-server-migrate --from HOME --database postgres://USER@HOST:PORT/DB --server-key-file FILE
//
// The home's passcode is the first line of standard input (`tresor` asks for it, echo off, and
// hands it over through a pipe); never an argument. The database's password comes from
// `PGPASSWORD`, never from the URL on a command line. Progress goes to standard error, the report
// to standard output: ids and counts only — never a title, body, password or hint.

let tool = "tresor-server-migrate"

func fail(_ message: String, status: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("\(tool): \(message)\n".utf8))
    exit(status)
}

// MARK: Arguments

var options: [String: String] = [:]
var words = Array(CommandLine.arguments.dropFirst())
while !words.isEmpty {
    let word = words.removeFirst()
    guard ["--from", "--database", "--server-key-file"].contains(word), !words.isEmpty else {
        fail("usage: \(tool) --from HOME --database postgres://USER@HOST:PORT/DB --server-key-file FILE (the passcode on standard input)", status: 64)
    }
    options[word] = words.removeFirst()
}
guard let home = options["--from"], let databaseText = options["--database"], let keyFile = options["--server-key-file"] else {
    fail("--from, --database and --server-key-file are all needed", status: 64)
}
guard !DatabaseURL.hasPassword(databaseText) else {
    fail("the database URL carries a password, which a command line shows to every user (ps): leave it out and set PGPASSWORD", status: 64)
}
let databaseURL: DatabaseURL
let serverKey: ServerKey
do {
    databaseURL = try DatabaseURL(parsing: databaseText, environmentPassword: ProcessInfo.processInfo.environment["PGPASSWORD"])
    serverKey = try ServerKey(file: keyFile)
} catch {
    fail("\(error)", status: 64)
}

// MARK: The home

let paths = TresorPaths(home: home)
let notes: NotesStore
do {
    let keybag = try Keybag.open(paths: paths)
    if keybag.status.isPasscodeSet {
        guard isatty(0) == 0 else { fail("give the home's passcode on standard input (tresor server migrate asks for it)", status: 64) }
        guard let line = readLine(strippingNewline: true) else { fail("standard input has no line for the home's passcode", status: 64) }
        try keybag.unlock(passcode: try Passcode(line))
    }
    notes = try NotesStore.openForReading(paths: paths, keybag: keybag)
} catch let error as KeybagError {
    switch error {
    case .notInitialized: fail("\(paths.home.path) is not a Tresor home (no keybag)")
    default: fail("cannot open the home: \(error)")
    }
} catch {
    fail("cannot open the home: \(error)")
}

var logger = Logger(label: "tresor.server-migrate")
logger.logLevel = .error
let importer: ServerImport
do {
    let url = databaseURL, key = serverKey, log = logger
    importer = try blocking { try await ServerImport.open(url: url, key: key, logger: log) }
} catch {
    fail("\(error)")
}

// MARK: The migration

/// What happened to each kind of record, and the reasons of what was skipped (ids only).
struct Tally {
    var moved = 0
    var present = 0
    var skipped = 0

    mutating func count(_ outcome: ImportOutcome, _ reasons: inout [String]) {
        switch outcome {
        case .moved: moved += 1
        case .movedAsCopy(let id):
            moved += 1
            reasons.append("a note changed since an earlier run moved it (or on the server): this version is its conflict copy \(id)")
        case .alreadyPresent: present += 1
        case .skipped(let reason):
            skipped += 1
            reasons.append(reason)
        }
    }

    var text: String { "\(moved) moved, \(present) already present, \(skipped) skipped" }
}

final class Migration {
    let importer: ServerImport
    let totals: (accounts: Int, notes: Int, attachments: Int, attachmentBytes: Int)
    var accounts = Tally(), passphrases = Tally(), folders = Tally(), notes = Tally(), shares = Tally(), attachments = Tally()
    var reasons: [String] = []
    /// Home accounts moved or found the same on the server: only their records follow them.
    var movedAccounts: Set<String> = []
    /// The home's current passphrase of each account.
    var currentPassphrase: [String: Int64] = [:]
    /// The server's id of each home passphrase moved.
    var passphraseIDs: [Int64: Int64] = [:]
    var localNotes = 0
    var seenAccounts = 0, seenNotes = 0, seenAttachments = 0, attachmentBytesDone = 0
    var lastProgress = Date.distantPast
    /// The attachment being written: its record, chunks written, and plaintext waiting for a full chunk.
    var attachment: (record: ImportedAttachment, chunks: Int, pending: Data)?
    /// Pieces of an attachment already there or skipped are read and dropped.
    var droppingPieces = false

    init(importer: ServerImport, totals: (accounts: Int, notes: Int, attachments: Int, attachmentBytes: Int)) {
        self.importer = importer
        self.totals = totals
    }

    func progress(force: Bool = false) {
        let now = Date()
        guard force || now.timeIntervalSince(lastProgress) >= 0.25 else { return }
        lastProgress = now
        let mib = { (bytes: Int) in String(format: "%.1f", Double(bytes) / 1_048_576) }
        FileHandle.standardError.write(
            Data(
                // The local account, which every home has, is no web account: not counted (the report's lines).
                ("\(tool): web accounts \(seenAccounts) of \(max(0, totals.accounts - 1)), notes \(seenNotes) of \(totals.notes), "
                    + "attachments \(seenAttachments) of \(totals.attachments) (\(mib(attachmentBytesDone)) of \(mib(totals.attachmentBytes)) MiB)\n")
                    .utf8))
    }

    func handle(_ reading: NotesReading) throws {
        switch reading {
        case .account(let account):
            if account.id == AccountID.local.rawValue { return }
            seenAccounts += 1
            defer { progress() }
            guard let login = account.loginName, let salt = account.passwordSalt, let rounds = account.passwordIterations,
                let hash = account.passwordHash
            else {
                accounts.count(.skipped("account \(account.id) is not a web account (no login name and password): it stays in the home"), &reasons)
                return
            }
            let imported = ImportedAccount(
                id: account.id, loginName: login, passwordHash: PasswordHash(salt: salt, rounds: rounds, hash: hash), created: account.created)
            let outcome = try blocking { [importer] in try await importer.importAccount(imported) }
            accounts.count(outcome, &reasons)
            if outcome != .moved && outcome != .alreadyPresent { return }
            movedAccounts.insert(account.id)
            if let current = account.currentPassphrase { currentPassphrase[account.id] = current }
        case .passphrase(let passphrase):
            guard movedAccounts.contains(passphrase.account) else { return }
            guard passphrase.source == "tresor", let generation = passphrase.generation, let verifier = passphrase.verifier else {
                passphrases.count(
                    .skipped(
                        "passphrase \(passphrase.id) of account \(passphrase.account) is not a Tresor passphrase generation (Apple Notes' or incomplete): its notes stay locked in the home"
                    ), &reasons)
                return
            }
            let imported = ImportedPassphrase(
                account: passphrase.account, generation: generation, salt: passphrase.salt, iterations: passphrase.iterations,
                verifier: verifier, proofHash: passphrase.proofHash, hint: passphrase.hint, created: passphrase.created)
            let isCurrent = currentPassphrase[passphrase.account] == passphrase.id
            let (outcome, id) = try blocking { [importer] in try await importer.importPassphrase(imported, isCurrent: isCurrent) }
            passphrases.count(outcome, &reasons)
            if let id { passphraseIDs[passphrase.id] = id }
        case .folder(let folder):
            guard movedAccounts.contains(folder.account) else { return }
            let imported = ImportedFolder(id: folder.id, account: folder.account, name: folder.name, created: folder.created)
            folders.count(try blocking { [importer] in try await importer.importFolder(imported) }, &reasons)
        case .note(let note):
            seenNotes += 1
            defer { progress() }
            try handle(note)
        case .attachment(let record):
            seenAttachments += 1
            guard notesOnServer.contains(record.note) else {
                // The note stays in the home (or was reported): so does its attachment.
                attachmentBytesDone += record.byteCount
                droppingPieces = true
                return
            }
            let imported = ImportedAttachment(
                id: record.id, note: record.note, kind: record.kind, name: record.name, byteCount: record.byteCount, created: record.created,
                isLocked: record.isLocked, excludedFromBackup: record.excludedFromBackup)
            let outcome = try blocking { [importer] in try await importer.beginAttachment(imported) }
            if outcome == .moved {
                attachment = (imported, 0, Data())
                droppingPieces = false
            } else {
                attachments.count(outcome, &reasons)
                attachmentBytesDone += record.byteCount
                droppingPieces = true
            }
            progress(force: true)
        case .attachmentPiece(let piece):
            guard !droppingPieces, var current = attachment else { return }
            if current.record.isLocked {
                // One chunk sealed under the note key, as it is.
                try write(piece, index: current.chunks, of: current.record.id)
                current.chunks += 1
                attachmentBytesDone += max(0, piece.count - LockedNoteShape.chunkOverheadByteCount)
            } else {
                current.pending.append(piece)
                while current.pending.count >= LockedNoteShape.chunkByteCount {
                    try write(Data(current.pending.prefix(LockedNoteShape.chunkByteCount)), index: current.chunks, of: current.record.id)
                    current.pending = Data(current.pending.dropFirst(LockedNoteShape.chunkByteCount))
                    current.chunks += 1
                }
                attachmentBytesDone += piece.count
            }
            attachment = current
            progress()
        case .attachmentEnd:
            defer {
                attachment = nil
                droppingPieces = false
            }
            guard !droppingPieces, var current = attachment else { return }
            // As the server's own upload ends: the last partial chunk, if any (an empty
            // attachment has none; a locked one's chunks all came as pieces).
            if !current.pending.isEmpty {
                try write(current.pending, index: current.chunks, of: current.record.id)
                current.chunks += 1
            }
            let record = current.record, chunks = current.chunks
            attachments.count(try blocking { [importer] in try await importer.finishAttachment(record, chunkCount: chunks) }, &reasons)
        case .attachmentAbandoned:
            if let current = attachment, !droppingPieces {
                let id = current.record.id
                try blocking { [importer] in try await importer.abandonAttachment(id) }
                attachments.count(.skipped("attachment \(id) cannot be read in the home (damaged): not moved"), &reasons)
            }
            attachment = nil
            droppingPieces = false
        case .excludedAttachment(let record):
            // Not handed over with `includingExcluded`; counted should it ever be.
            seenAttachments += 1
            attachments.count(.skipped("attachment \(record.id) was not read"), &reasons)
        case .unreadable(let what, let id, _):
            reasons.append("\(what) \(id) cannot be read in the home (damaged): not moved")
        }
    }

    /// The notes moved or found on the server: only their attachments follow them.
    var notesOnServer: Set<String> = []

    func write(_ chunk: Data, index: Int, of id: String) throws {
        try blocking { [importer] in try await importer.writeAttachmentChunk(chunk, index: index, of: id) }
    }

    func handle(_ note: BackedUpNote) throws {
        if note.account == AccountID.local.rawValue {
            localNotes += 1
            for participant in note.participants where movedAccounts.contains(participant.account) {
                reasons.append(
                    "note \(note.id) of the local account is shared with account \(participant.account): the note and its share stay in the home")
            }
            return
        }
        guard movedAccounts.contains(note.account) else {
            notes.count(.skipped("note \(note.id): its account \(note.account) was not moved"), &reasons)
            return
        }
        let content: ImportedNote.Content
        if let locked = note.locked {
            guard let passphraseID = passphraseIDs[locked.passphrase] else {
                notes.count(.skipped("note \(note.id): the passphrase it is locked with (\(locked.passphrase)) was not moved"), &reasons)
                return
            }
            content = .locked(
                .init(
                    passphraseID: passphraseID, salt: locked.salt, iterations: locked.iterations, wrappedKey: locked.wrappedKey, iv: locked.iv,
                    tag: locked.tag, ciphertext: locked.ciphertext, bodyFormat: note.bodyFormat, noteProofHash: note.noteProofHash))
        } else {
            content = .text(note.body ?? "")
        }
        var participants: [(account: String, added: Date)] = []
        for participant in note.participants {
            if movedAccounts.contains(participant.account) {
                participants.append((participant.account, participant.added))
            } else {
                reasons.append(
                    "note \(note.id): its participant \(participant.account) is not on the server (not a moved web account): not shared with it there"
                )
            }
        }
        let imported = ImportedNote(
            id: note.id, account: note.account, folder: note.folder, created: note.created, modified: note.modified, pinned: note.pinned,
            revision: note.revision ?? 1, deleted: note.deleted, title: note.title, content: content, participants: participants)
        let outcome = try blocking { [importer] in try await importer.importNote(imported) }
        notes.count(outcome, &reasons)
        // Its shares with participants on the server go with it (a skipped note's reason is said once).
        switch outcome {
        case .moved, .movedAsCopy: shares.moved += participants.count
        case .alreadyPresent: shares.present += participants.count
        case .skipped: shares.skipped += participants.count
        }
        if outcome == .moved || outcome == .alreadyPresent { notesOnServer.insert(note.id) }
    }
}

let migration: Migration
do {
    migration = Migration(importer: importer, totals: try notes.readingTotals())
    migration.progress(force: true)
    try notes.readAllForBackup(includingExcluded: true) { try migration.handle($0) }
    migration.progress(force: true)
} catch {
    fail("the migration stopped: \(error) — run the same command again to finish it (what was moved stays, nothing is written twice)")
}
_ = try? blocking { [importer] in await importer.close() }

// MARK: The report

print("Migrated home \(paths.home.path) to \(importer.databaseName):")
print("  web accounts: \(migration.accounts.text)")
print("  passphrase records: \(migration.passphrases.text)")
print("  folders: \(migration.folders.text)")
print("  notes: \(migration.notes.text)")
print("  shares: \(migration.shares.text)")
print("  attachments: \(migration.attachments.text)")
print("  the local account (On My Computer) is not moved — a server has no local account: \(migration.localNotes) of its notes stay in the home")
if !migration.reasons.isEmpty {
    print("  not moved, or moved in part:")
    for reason in migration.reasons { print("    - \(reason)") }
}
