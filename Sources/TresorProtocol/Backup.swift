import FoundationEssentials
import TresorModel

// Backups (docs/API.md, "Backups"): the daemon writes and reads the backup file itself, at a
// path the `tresor` CLI names, so no secret crosses the socket but the passphrase and passcode.

/// `POST /v1/backup/create`: writes a backup of the whole home to `path`.
public struct BackupCreateRequest: Codable, Sendable {
    /// An absolute path outside the home; the file is written as `path.partial`, then renamed.
    public var path: String
    /// The backup passphrase, 1 to 4,096 bytes of UTF-8.
    public var passphrase: String
    /// The keybag passcode: exporting every secret needs the user (not needed when the CLI's
    /// session already proved the user present).
    public var passcode: String?
    /// scrypt's work factor, log2(N): 14 to 20 (default 18, the one `age -p` uses).
    public var workFactor: Int?

    /// Makes a create request; the parameters are the properties of the same names.
    public init(path: String, passphrase: String, passcode: String? = nil, workFactor: Int? = nil) {
        self.path = path
        self.passphrase = passphrase
        self.passcode = passcode
        self.workFactor = workFactor
    }
}

/// `POST /v1/backup/verify`: reads a backup file to its end with its passphrase; changes nothing.
public struct BackupVerifyRequest: Codable, Sendable {
    /// The backup file's absolute path.
    public var path: String
    /// The backup passphrase (1 to 4,096 bytes); a wrong one is `401 authFailed`.
    public var passphrase: String

    /// Makes a verify request; the parameters are the properties of the same names.
    public init(path: String, passphrase: String) {
        self.path = path
        self.passphrase = passphrase
    }
}

/// `POST /v1/backup/restore`: restores a backup file into the home (unlocked), or says what it
/// would do (`dryRun`).
public struct BackupRestoreRequest: Codable, Sendable {
    /// The backup file's absolute path.
    public var path: String
    /// The backup passphrase (1 to 4,096 bytes); a wrong one is `401 authFailed`.
    public var passphrase: String
    /// The keybag passcode (a restore changes every item).
    public var passcode: String?
    /// `true` checks and reports what a restore would do, and changes nothing; nil: `false`.
    public var dryRun: Bool?
    /// What to do with what the home holds in another version (default `skip`).
    public var onConflict: ConflictPolicy?
    /// Whether the report lists every entry (the default), or only those not restored or
    /// already present — what a summary shows, without tens of thousands of lines to send.
    public var everyEntry: Bool?
    /// The applications and accounts the user allowed it to add or restore into (default: none).
    public var consent: RestoreConsent?

    /// Makes a restore request; the parameters are the properties of the same names.
    public init(
        path: String, passphrase: String, passcode: String? = nil, dryRun: Bool = false, onConflict: ConflictPolicy = .skip,
        everyEntry: Bool = true, consent: RestoreConsent = .none
    ) {
        self.path = path
        self.passphrase = passphrase
        self.passcode = passcode
        self.dryRun = dryRun
        self.onConflict = onConflict
        self.everyEntry = everyEntry
        self.consent = consent
    }
}

/// Why something was left out of a backup, or not restored.
public enum BackupReason: String, Codable, CaseIterable, Sendable {
    /// `whenPasscodeSetThisDeviceOnly` items are never written into a backup.
    case passcodeSetOnly
    /// A `…ThisDeviceOnly` item from another home: it opens only where it was made.
    case deviceBoundToAnotherHome
    /// An attachment the user left out of backups.
    case excludedFromBackup
    /// It could not be read (a locked class, a damaged row or file).
    case unreadable
    /// Its keychain does not exist in this home (create it, then restore again).
    case keychainMissing
    /// Its class is locked in this home (unlock its keychain, then restore again).
    case keychainLocked
    /// Its account, note or passphrase was not restored, so it cannot be.
    case dependsOnSkipped
    /// The home would not accept it as it is (the detail says why).
    case invalid
    /// An application or account the user did not allow (``TresorModel/RestoreConsent``).
    case needsConsent
    /// A generic client's registration (an interpreter, secret-tool, git's credential helpers, a
    /// name the daemon's configuration adds: ``TresorModel/GenericClients``) with a group of
    /// another application: never from a backup.
    case genericClientGroups
    /// The backup holds it twice (the same id or primary key): the first one counts.
    case duplicate
    /// Its id is taken in this home by something else.
    case idInUse
    /// Its account is not one the backup holds: nothing goes into an account from outside it.
    case accountNotInBackup

    /// Whether what was left out for this reason is left out for now: the user can put it right
    /// (unlock or create a keychain) and run the same backup or restore again.
    public var isForNow: Bool {
        switch self {
        case .unreadable, .keychainMissing, .keychainLocked: true
        default: false
        }
    }
}

/// What one report line is about.
public enum BackupEntryKind: String, Codable, CaseIterable, Sendable {
    /// One value for each kind of thing a backup holds: a keychain item, a registered application,
    /// an account, a notes passphrase, a folder, a note, an attachment.
    case item, application, account, passphrase, folder, note, attachment
}

/// One thing of the home or the backup, and what became of it.
public struct BackupReportEntry: Codable, Equatable, Sendable {
    /// What the entry is about.
    public var kind: BackupEntryKind
    /// Its id: an item's, an application's, an account's, a note's…
    public var id: String
    /// An item's keychain.
    public var keychain: String?
    /// What people recognise it by: an item's class and identifying attributes, a note's
    /// title, an attachment's name. Never a secret.
    public var description: String
    /// What became of it.
    public var outcome: BackupOutcome
    /// Why it was left out or skipped; nil when nothing needs saying.
    public var reason: BackupReason?
    /// More words on the reason (which rule an invalid record broke).
    public var detail: String?

    /// Makes a report entry; the parameters are the properties of the same names.
    public init(
        kind: BackupEntryKind, id: String, keychain: String? = nil, description: String, outcome: BackupOutcome,
        reason: BackupReason? = nil, detail: String? = nil
    ) {
        self.kind = kind
        self.id = id
        self.keychain = keychain
        self.description = description
        self.outcome = outcome
        self.reason = reason
        self.detail = detail
    }
}

/// The answer of the backup routes: what was written, checked or restored.
public struct BackupReport: Codable, Equatable, Sendable {
    /// `create`, `verify`, `restore` or `dry-run`.
    public var operation: String
    /// The backup file's path, as the request gave it.
    public var path: String
    /// The backup file's size.
    public var bytes: Int
    /// When the backup was made.
    public var created: Date?
    /// The backup's scrypt work factor, log2(N).
    public var workFactor: Int?
    /// Whether the backup was made in this home (its `…ThisDeviceOnly` items restore here).
    public var sameHome: Bool?
    /// How many of each kind ended each way: `counts["item"]["restored"]`.
    public var counts: [String: [String: Int]]
    /// Restore and dry run: every item, application, account, note and attachment of the backup
    /// with its outcome (without `everyEntry`: those not restored or already present). Create:
    /// what was left out. Verify: what the backup left out.
    public var entries: [BackupReportEntry]

    /// Makes a report; the parameters are the properties of the same names.
    public init(
        operation: String, path: String, bytes: Int = 0, created: Date? = nil, workFactor: Int? = nil, sameHome: Bool? = nil,
        counts: [String: [String: Int]] = [:], entries: [BackupReportEntry] = []
    ) {
        self.operation = operation
        self.path = path
        self.bytes = bytes
        self.created = created
        self.workFactor = workFactor
        self.sameHome = sameHome
        self.counts = counts
        self.entries = entries
    }

    /// What was left out, or not restored, for now (``BackupReason/isForNow``): the backup or
    /// the restore is not whole until the user puts it right and runs it again.
    public var leftOutForNow: [BackupReportEntry] { entries.filter { $0.reason?.isForNow == true } }

    /// How many `kind` ended as `outcome`.
    /// - Parameters:
    ///   - kind: items, notes, attachments…
    ///   - outcome: backed up, restored, skipped…
    /// - Returns: the count (0 when none).
    public func count(_ kind: BackupEntryKind, _ outcome: BackupOutcome) -> Int {
        counts[kind.rawValue]?[outcome.rawValue] ?? 0
    }
}

/// `POST /v1/backup/progress`: where the backup, verification or restore in flight stands.
public struct BackupProgress: Codable, Equatable, Sendable {
    /// Whether a backup operation is in flight.
    public var running: Bool
    /// `create`, `verify` or `restore`.
    public var operation: String?
    /// Bytes of the backup file written or read so far.
    public var bytesDone: Int
    /// The backup file's size in bytes, when known; 0 until then.
    public var bytesTotal: Int
    /// Items, notes and attachments handled so far.
    public var itemsDone: Int

    /// Makes a progress report; the parameters are the properties of the same names.
    public init(running: Bool, operation: String? = nil, bytesDone: Int = 0, bytesTotal: Int = 0, itemsDone: Int = 0) {
        self.running = running
        self.operation = operation
        self.bytesDone = bytesDone
        self.bytesTotal = bytesTotal
        self.itemsDone = itemsDone
    }
}
