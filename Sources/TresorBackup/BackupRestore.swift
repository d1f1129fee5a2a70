import Foundation
import TresorCrypto
import TresorKeybag
import TresorKeychain
import TresorModel
import TresorNotes
import TresorNotesDomain
import TresorProtocol
import TresorStorage
import TresorSystem

/// The home a restore writes into: its keybag (unlocked), its keychains, its registry, its notes.
public struct RestoreTarget {
    public var home: URL
    public var keybag: Keybag
    /// The keychain of a name, nil when the home has none of that name.
    public var keychain: (String) throws -> KeychainStore?
    /// Where each keychain's database is, relative to the home.
    public var databasePath: (String) -> String
    public var applications: ApplicationRegistry
    public var notes: NotesStore

    /// - Parameters:
    ///   - home: the home's folder (the staging area is made in it).
    ///   - keybag: its login keybag (unlocked).
    ///   - keychain: the keychain of a name, nil when there is none.
    ///   - databasePath: a keychain's database, relative to the home.
    ///   - applications: the home's application registry.
    ///   - notes: the home's notes.
    public init(
        home: URL, keybag: Keybag, keychain: @escaping (String) throws -> KeychainStore?, databasePath: @escaping (String) -> String,
        applications: ApplicationRegistry, notes: NotesStore
    ) {
        self.home = home
        self.keybag = keybag
        self.keychain = keychain
        self.databasePath = databasePath
        self.applications = applications
        self.notes = notes
    }
}

/// Restores a backup into a home in two passes (docs/FORMAT.md, "Restoring"): the whole file is
/// read, checked and staged first — a wrong passphrase, a cut, reordered, changed or foreign
/// file is refused before the home changes at all — then committed, one transaction per
/// database, with the staged attachment files moved in. A crash after the commit began is
/// completed at the next start (``RestoreStaging``). Items are sealed anew under the home's
/// keys; what the home holds already is not added twice.
public enum BackupRestore {
    /// The login keychain's name.
    static let login = "login"

    /// Restores (or, with `dryRun`, says what restoring would do) the backup at `url`.
    /// - Parameters:
    ///   - url: the backup file.
    ///   - passphrase: its passphrase.
    ///   - target: the home.
    ///   - onConflict: what to do with things the home holds in another version.
    ///   - consent: the applications and accounts the user allowed it to add or restore into
    ///     (others are skipped and listed).
    ///   - genericClients: the programs that may never take another application's groups (the
    ///     daemon's table, with the names its configuration adds).
    ///   - dryRun: stage and report, but change nothing.
    ///   - everyEntry: whether the report lists every entry, or only those not restored or
    ///     already present (the counts hold everything either way).
    ///   - presence: the check the home may not be changed without (the user's passcode); it
    ///     runs on a thread of its own beside the backup passphrase's KDF, and nothing is staged
    ///     unless it passes.
    ///   - progress: told how far the restore got.
    /// - Returns: every item, application, account, note and attachment of the backup, and
    ///   what became of it.
    /// - Throws: ``BackupError`` for a file that cannot be restored (the home is then unchanged);
    ///   what `presence` throws; ``StagedStatementError/expectationFailed(_:)`` when the home
    ///   changed during the staging.
    public static func restore(
        from url: URL, passphrase: SecretText, into target: RestoreTarget, onConflict: ConflictPolicy, consent: RestoreConsent = .none,
        genericClients: GenericClients, dryRun: Bool,
        everyEntry: Bool = true, presence: @escaping @Sendable () throws -> Void, progress: BackupProgressTracker
    ) throws -> BackupReport {
        try BackupFile.read(url) { size, input in
            progress.start("restore", bytesTotal: size)
            defer { progress.finish() }
            var read = 0
            var reader = try alongside(presence) {
                try RecordStreamReader(passphrase: passphrase) { count in
                    try progress.checkCancelled()
                    let bytes = try input(count)
                    read += bytes.count
                    progress.update(bytesDone: read)
                    return bytes
                }
            }
            let staging = try RestoreStaging(home: target.home)
            var session = RestoreSession(
                target: target, staging: staging, onConflict: onConflict, consent: consent, genericClients: genericClients,
                builder: BackupReportBuilder(operation: dryRun ? "dry-run" : "restore", path: url.path, listsEverything: everyEntry))
            do {
                while let record = try reader.next() {
                    try session.stage(record, bytes: reader.recordBytes)
                    progress.update(itemsDone: session.handled)
                }
                try session.finish()
                if dryRun {
                    staging.discard()
                } else {
                    // The last moment to stop: once committing, the restore completes.
                    try progress.checkCancelled()
                    try staging.commit()
                    target.applications.forgetCache()
                    target.notes.notesRestored()
                }
            } catch {
                session.abandon()
                staging.discard()
                if let error = error as? SecureFileError { throw BackupError.io("the restore could not be staged in the home: \(error)") }
                throw error
            }
            var report = session.builder.report
            report.bytes = size
            report.created = session.manifest?.created
            report.sameHome = session.sameHome
            return report
        }
    }

    /// Reads the backup at `url` to its end and checks it, changing nothing.
    /// - Parameters:
    ///   - url: the backup file.
    ///   - passphrase: its passphrase.
    ///   - progress: told how far the check got.
    /// - Returns: the backup's counts, and what it left out.
    /// - Throws: ``BackupError`` for a file that is not a whole, unchanged backup.
    public static func verify(from url: URL, passphrase: SecretText, progress: BackupProgressTracker) throws -> BackupReport {
        try BackupFile.read(url) { size, input in
            progress.start("verify", bytesTotal: size)
            defer { progress.finish() }
            var read = 0
            var reader = try RecordStreamReader(passphrase: passphrase) { count in
                try progress.checkCancelled()
                let bytes = try input(count)
                read += bytes.count
                progress.update(bytesDone: read)
                return bytes
            }
            var builder = BackupReportBuilder(operation: "verify", path: url.path, listsEverything: false)
            var created: Date?
            while let record = try reader.next() {
                switch record {
                case .manifest(let manifest): created = manifest.created
                case .item: builder.count(.item, .backedUp)
                case .deviceBoundItem: builder.count(.item, .backedUp)
                case .application: builder.count(.application, .backedUp)
                case .account: builder.count(.account, .backedUp)
                case .passphrase: builder.count(.passphrase, .backedUp)
                case .folder: builder.count(.folder, .backedUp)
                case .note: builder.count(.note, .backedUp)
                case .attachment: builder.count(.attachment, .backedUp)
                case .leftOut(let leftOut): builder.add(leftOut.entry)
                case .piece, .attachmentEnd, .trailer: break
                }
                progress.update(itemsDone: builder.handled)
            }
            builder.report.bytes = size
            builder.report.created = created
            return builder.report
        }
    }
}

/// One restore being staged: the record in hand, the stores' stagers, the report.
private struct RestoreSession {
    let target: RestoreTarget
    let staging: RestoreStaging
    let onConflict: ConflictPolicy
    let consent: RestoreConsent
    let genericClients: GenericClients
    var builder: BackupReportBuilder
    private(set) var manifest: BackupManifest?
    /// The applications that came one after another, decided together once the last came
    /// (``flushApplications()``): one may take another's groups.
    private var pendingApplications: [Application] = []
    /// The applications and web accounts (login name, or id) the backup holds, and the
    /// accounts' ids: what the user's consent may name.
    private var applicationsHeld: [String] = []
    private var accountsHeld: [String] = []
    private var accountIDsHeld: Set<String> = []
    private(set) var sameHome = false
    /// The items, staged on a thread of their own; made at the first item.
    private var items: RestoreItems?
    /// Where the items' report entries go: where the first item came.
    private var itemEntriesIndex = 0
    private var notes: NotesRestore?
    /// Each backup account's current passphrase (a backup id).
    private var currentPassphrases: [String: Int64] = [:]
    /// The attachment whose pieces are arriving: staged, or dropped (its outcome is known).
    private var attachment: (record: BackedUpAttachment, dropped: BackupOutcome?)?
    /// Notes that came one after another, staged together on two threads (``flushNotes()``)
    /// before any other record.
    private var pendingNotes: [BackedUpNote] = []
    private var pendingNoteBytes = 0
    static let noteBatch = 64
    static let noteBatchBytes = 1 << 20
    /// The attachment staged last, held back one record: a left-out record for it may follow.
    private var finishedAttachment: (record: BackedUpAttachment, statements: [StagedStatement], file: String, replacedFile: String?)?

    init(
        target: RestoreTarget, staging: RestoreStaging, onConflict: ConflictPolicy, consent: RestoreConsent, genericClients: GenericClients,
        builder: BackupReportBuilder
    ) {
        self.target = target
        self.staging = staging
        self.onConflict = onConflict
        self.consent = consent
        self.genericClients = genericClients
        self.builder = builder
    }

    /// Stages one record.
    /// - Parameters:
    ///   - record: the record.
    ///   - bytes: its size in the backup.
    mutating func stage(_ record: BackupRecord, bytes: Int) throws {
        if case .leftOut(let leftOut) = record, leftOut.kind == .attachment, let finished = finishedAttachment, finished.record.id == leftOut.id {
            // The backup could not read all of it: what it wrote of it is dropped.
            unlink(staging.attachments.appendingPathComponent(finished.file).path)
            finishedAttachment = nil
        } else {
            try flushFinishedAttachment()
        }
        switch record {
        case .item, .deviceBoundItem: break
        default: try items?.flush()
        }
        if case .note = record {} else { try flushNotes() }
        if case .application = record {} else { try flushApplications() }
        switch record {
        case .manifest(let manifest):
            self.manifest = manifest
            sameHome = ConstantTime.equals(manifest.deviceID, target.keybag.backupDeviceID)
        case .application(let application):
            pendingApplications.append(application)
            applicationsHeld.append(application.applicationID)
        case .item(let record):
            try itemStager().add(.item(record.item, keychain: record.keychain), recordBytes: bytes)
        case .deviceBoundItem(let record):
            try itemStager().add(.deviceBound(record), recordBytes: bytes)
        case .account(let account):
            if let current = account.currentPassphrase { currentPassphrases[account.id] = current }
            try stageAccount(account)
        case .passphrase(let passphrase):
            let outcome = try staging.stageDecision(for: "notes.db") {
                try notesRestore().stage(passphrase, isCurrent: currentPassphrases[passphrase.account] == passphrase.id)
            }
            builder.count(.passphrase, outcome.0)
        case .folder(let folder):
            let outcome = try staging.stageDecision(for: "notes.db") { try notesRestore().stage(folder) }
            builder.count(.folder, outcome.0)
        case .note(let note):
            pendingNotes.append(note)
            pendingNoteBytes += bytes
            if pendingNotes.count >= Self.noteBatch || pendingNoteBytes >= Self.noteBatchBytes { try flushNotes() }
        case .attachment(let record):
            let dropped: BackupOutcome?
            do {
                dropped = try notesRestore().beginAttachment(record)
            } catch let error as NotesError {
                add(.attachment, record.id, description: record.name, (.skipped, .invalid, error.description))
                attachment = (record, .skipped)
                return
            } catch let skip as RestoreSkip {
                add(.attachment, record.id, description: record.name, (.skipped, skip.reason, nil))
                attachment = (record, .skipped)
                return
            }
            attachment = (record, dropped)
            if let dropped {
                let reason: BackupReason? = dropped == .skipped ? .dependsOnSkipped : nil
                add(.attachment, record.id, description: record.name, (dropped, reason, nil))
            }
        case .piece(let bytes):
            guard let current = attachment else { throw BackupError.damaged("attachment bytes outside an attachment") }
            guard current.dropped == nil else { return }
            do {
                try notesRestore().appendPiece(bytes)
            } catch let error as NotesError {
                notes?.abandonAttachment()
                attachment = (current.record, .skipped)
                add(.attachment, current.record.id, description: current.record.name, (.skipped, .invalid, error.description))
            }
        case .attachmentEnd:
            guard let current = attachment else { throw BackupError.damaged("an attachment end outside an attachment") }
            attachment = nil
            guard current.dropped == nil else { return }
            do {
                let (_, statements, file, replacedFile) = try notesRestore().finishAttachment()
                finishedAttachment = (current.record, statements, file, replacedFile)
            } catch let error as NotesError {
                add(.attachment, current.record.id, description: current.record.name, (.skipped, .invalid, error.description))
            }
        case .leftOut(let leftOut):
            var entry = leftOut.entry
            entry.outcome = .skipped
            builder.add(entry)
        case .trailer:
            break
        }
    }

    /// Stages an account with the user's consent where it needs one. A web account is a login to
    /// the web client: added only with consent, even from the home's own backup. Any other
    /// account but the local one — an application team's notes (`team:ID`, read by its
    /// applications), or one the home holds already — takes a handed backup's records only with
    /// consent to it, by login name or id; the home's own backup (its device id) restores into its
    /// own accounts unasked. The local account is the restoring user's own.
    private mutating func stageAccount(_ account: BackedUpAccount) throws {
        accountsHeld.append(account.loginName ?? account.id)
        accountIDsHeld.insert(account.id)
        let allowed = consent.allows(webAccount: account.loginName ?? account.id, id: account.id)
        let mayAdd = allowed || sameHome && account.loginName == nil
        let mayJoin = allowed || sameHome
        let held = try notesRestore().holdsAccount(account.id)
        var outcome = try staging.stageDecision(for: "notes.db") { try notesRestore().stage(account, mayAdd: mayAdd, mayJoin: mayJoin) }
        if !allowed && outcome.0 == .skipped && outcome.1 == .dependsOnSkipped {
            outcome.1 = .needsConsent
            outcome.2 = Self.consentDetail(of: account, held: held)
        }
        add(.account, account.id, description: Self.description(of: account), outcome)
    }

    /// What the report says of an account: its login name, or its kind and id.
    static func description(of account: BackedUpAccount) -> String {
        if let login = account.loginName { return "web account \(login)" }
        if account.id.hasPrefix("team:") { return "\(account.id) (the notes of team \(account.id.dropFirst(5))'s applications)" }
        return account.name
    }

    /// What allowing the account would do, for the report and the CLI's question.
    static func consentDetail(of account: BackedUpAccount, held: Bool) -> String {
        let readers = account.id.hasPrefix("team:") ? ", which that team's registered applications read" : ""
        if held { return "this home holds that account: allowing it puts the backup's notes into it\(readers)" }
        if account.loginName != nil { return "allowing it adds a login to the web client with the backup's password" }
        return "allowing it adds that account with the backup's notes\(readers)"
    }

    /// Items, notes and attachments handled so far, the items' thread's included.
    var handled: Int { builder.handled + (items?.staged ?? 0) }

    /// After the trailer: the attachment held back is staged, the items' thread has staged
    /// every item, and their report entries take their place.
    mutating func finish() throws {
        try refuseConsentToWhatIsNotHeld()
        try flushApplications()
        try flushNotes()
        try flushFinishedAttachment()
        if let items {
            builder.insert(try items.finish(), at: itemEntriesIndex)
            self.items = nil
        }
    }

    /// An application or web account the user allowed that the backup does not hold is a typo
    /// (or the wrong file): refused, with what the backup holds, before anything is committed.
    private func refuseConsentToWhatIsNotHeld() throws {
        let applications = consent.applications.filter { !applicationsHeld.contains($0) }
        let accounts = consent.webAccounts.filter { !accountsHeld.contains($0) && !accountIDsHeld.contains($0) }
        guard !applications.isEmpty || !accounts.isEmpty else { return }
        func held(_ names: [String]) -> String { names.isEmpty ? "none" : names.joined(separator: ", ") }
        var refusals: [String] = []
        if !applications.isEmpty {
            refusals.append("no application \(applications.joined(separator: ", ")) (it holds: \(held(applicationsHeld)))")
        }
        if !accounts.isEmpty { refusals.append("no web account \(accounts.joined(separator: ", ")) (it holds: \(held(accountsHeld)))") }
        throw BackupError.notInBackup("the backup holds \(refusals.joined(separator: ", and ")): nothing was restored")
    }

    /// Drops the attachment being staged, if any, and stops the items' thread (a failed restore).
    mutating func abandon() {
        notes?.abandonAttachment()
        items?.stop()
    }

    private mutating func itemStager() -> RestoreItems {
        if let items { return items }
        let made = RestoreItems(target: target, staging: staging, onConflict: onConflict, sameHome: sameHome)
        items = made
        itemEntriesIndex = builder.report.entries.count
        return made
    }

    private mutating func flushNotes() throws {
        guard !pendingNotes.isEmpty else { return }
        let notes = pendingNotes
        pendingNotes = []
        pendingNoteBytes = 0
        for (note, decided) in zip(notes, try notesRestore().stage(notes)) {
            let outcome = try staging.stageDecision(for: "notes.db") {
                try decided.get()
            }
            add(.note, note.id, description: note.title, outcome)
        }
    }

    /// Decides the applications that came: each needs the user's consent, and a generic client
    /// (an interpreter, or a client that hands out secrets on request) never takes a group of
    /// another application (registered here, or in the backup).
    private mutating func flushApplications() throws {
        guard !pendingApplications.isEmpty else { return }
        let applications = pendingApplications
        pendingApplications = []
        let registered = try target.applications.list()
        for application in applications {
            let description = RestoreSession.description(of: application)
            if registered.contains(application) {
                add(.application, application.applicationID, description: description, (.alreadyPresent, nil, nil))
                continue
            }
            guard consent.allows(application: application.applicationID) else {
                add(.application, application.applicationID, description: description, (.skipped, .needsConsent, nil))
                continue
            }
            // Every other registration: the home's (one of this id but another executable too)
            // and the backup's other applications.
            let others =
                registered.filter { $0.applicationID != application.applicationID || $0.executableSHA256 != application.executableSHA256 }
                + applications.filter { $0.applicationID != application.applicationID }
            let othersGroups = Set(others.flatMap(\.allowedGroups))
            // By the name the backup gives its executable, or by its hash: a renamed copy of
            // secret-tool is secret-tool.
            if !othersGroups.isDisjoint(with: application.allowedGroups),
                genericClients.contains(path: application.executablePath, sha256: application.executableSHA256)
            {
                add(.application, application.applicationID, description: description, (.skipped, .genericClientGroups, nil))
                continue
            }
            let outcome = try staging.stageDecision(for: target.databasePath(BackupRestore.login)) {
                try target.applications.stageRestore(application, onConflict: onConflict)
            }
            add(.application, application.applicationID, description: description, outcome)
        }
    }

    /// What the report says of an application: what runs, and what it may read.
    static func description(of application: Application) -> String {
        let hash = application.executableSHA256.prefix(6).hexString
        return "\(application.applicationID): executable \(application.executablePath) (SHA-256 \(hash)…), groups "
            + application.allowedGroups.joined(separator: ", ") + (application.usesSecretService ? ", on the Secret Service too" : "")
    }

    private mutating func flushFinishedAttachment() throws {
        guard let finished = finishedAttachment else { return }
        finishedAttachment = nil
        try staging.stage(finished.statements, for: "notes.db")
        staging.stageFile(finished.file)
        if let replaced = finished.replacedFile { staging.removeAfterCommit([replaced]) }
        add(.attachment, finished.record.id, description: finished.record.name, (.restored, nil, nil))
    }

    private mutating func add(_ kind: BackupEntryKind, _ id: String, description: String, _ outcome: (BackupOutcome, BackupReason?, String?)) {
        builder.add(BackupReportEntry(kind: kind, id: id, description: description, outcome: outcome.0, reason: outcome.1, detail: outcome.2))
    }

    private mutating func notesRestore() throws -> NotesRestore {
        if let notes { return notes }
        let made = try NotesRestore(
            store: target.notes, onConflict: onConflict, stagingFolder: staging.attachments, importTagKeyID: manifest?.importTagKeyID)
        notes = made
        return made
    }
}

extension RestoreStaging {
    /// Runs a store's stager, stages its statements for `database`, and turns what a store
    /// refuses into an outcome: an invalid record or a locked class skips it, the restore goes on.
    /// - Parameters:
    ///   - database: the database the statements are for, relative to the home.
    ///   - body: the store's decision and statements.
    /// - Returns: the outcome, why it was skipped, and the store's words for it.
    /// - Throws: the store's other errors; the journal's.
    func stageDecision(
        for database: String, _ body: () throws -> (BackupOutcome, [StagedStatement])
    ) throws -> (BackupOutcome, BackupReason?, String?) {
        let outcome: BackupOutcome, statements: [StagedStatement]
        do {
            (outcome, statements) = try body()
        } catch let error as KeychainError {
            switch error {
            case .interactionNotAllowed: return (.skipped, .keychainLocked, nil)
            case .param, .decode, .duplicateItem: return (.skipped, .invalid, error.description)
            default: throw error
            }
        } catch let error as NotesError {
            switch error {
            case .invalid, .damaged: return (.skipped, .invalid, error.description)
            default: throw error
            }
        } catch let skip as RestoreSkip {
            return (.skipped, skip.reason, nil)
        }
        try stage(statements, for: database)
        return (outcome, outcome == .skipped ? .dependsOnSkipped : nil, nil)
    }
}

extension RestoreSkip {
    /// The report's reason for it.
    var reason: BackupReason {
        switch self {
        case .duplicate: .duplicate
        case .idInUse: .idInUse
        case .accountNotInBackup: .accountNotInBackup
        }
    }
}
