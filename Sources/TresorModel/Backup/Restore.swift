import FoundationEssentials

/// What a restore does with something of the backup that the home holds in another form: an
/// item with the same primary key but another secret or attributes, a note with the same id
/// but other content (docs/FORMAT.md, "Restoring").
public enum ConflictPolicy: String, Codable, CaseIterable, Sendable {
    /// Keep what the home holds; report the backup's version as a conflict.
    case skip
    /// Replace what the home holds with the backup's version.
    case replace
}

/// What a backup did with one thing of the home, or a restore (or its `--dry-run`) with one
/// thing of the backup.
public enum BackupOutcome: String, Codable, CaseIterable, Sendable {
    /// Written into the backup.
    case backedUp
    /// Not written into the backup; the reason says why.
    case leftOut
    /// Added to the home.
    case restored
    /// Took the place of the home's own version (`--on-conflict replace`).
    case replaced
    /// The home holds it already, identical: nothing to do.
    case alreadyPresent
    /// The home holds another version of it: left as it is (`--on-conflict skip`).
    case conflict
    /// Not restored; the reason says why.
    case skipped
}

/// What the user allowed a restore to add that gives someone rights in this home: a registered
/// application (an executable and the groups it may read), a web account (a login that signs
/// in to the web client), and — from a backup made elsewhere — any account but the local one that
/// the backup's notes go into (an application team's `team:ID`, read by its applications, or an
/// account the home holds already). Nothing else of a backup needs it; without it such records
/// are skipped and listed (docs/SECURITY.md, "Restoring a handed backup").
public struct RestoreConsent: Codable, Equatable, Sendable {
    /// Every application of the backup (`--allow-applications`).
    public var allApplications: Bool
    /// These applications, by application id (`--allow-application ID`).
    public var applications: [String]
    /// Every web account of the backup, and every account it restores into
    /// (`--allow-web-accounts`).
    public var allWebAccounts: Bool
    /// These web accounts, by login name or account id, and these accounts without a login, by
    /// id (`--allow-web-account LOGIN|ID`).
    public var webAccounts: [String]

    /// - Parameters:
    ///   - allApplications: every application.
    ///   - applications: these applications, by id.
    ///   - allWebAccounts: every web account, every account.
    ///   - webAccounts: these web accounts, by login name or account id; these accounts, by id.
    public init(allApplications: Bool = false, applications: [String] = [], allWebAccounts: Bool = false, webAccounts: [String] = []) {
        self.allApplications = allApplications
        self.applications = applications
        self.allWebAccounts = allWebAccounts
        self.webAccounts = webAccounts
    }

    /// Nothing allowed: what a restore does unless asked.
    public static let none = RestoreConsent()

    /// Whether the application `applicationID` may be registered.
    /// - Parameter applicationID: its id.
    /// - Returns: whether the user allowed it.
    public func allows(application applicationID: String) -> Bool { allApplications || applications.contains(applicationID) }

    /// Whether the web account `id`, signing in as `loginName`, may be added, or the backup's
    /// records go into the account `id`.
    /// - Parameters:
    ///   - loginName: its login name (an account without one: its id).
    ///   - id: its account id.
    /// - Returns: whether the user allowed it.
    public func allows(webAccount loginName: String, id: String) -> Bool {
        allWebAccounts || webAccounts.contains(loginName) || webAccounts.contains(id)
    }
}

/// Why a store did not stage a backup's record though it is valid: thrown by the stores' restore
/// stagers, reported as the record's outcome while the restore goes on.
public enum RestoreSkip: Error, Equatable, Sendable {
    /// The backup holds a record of this id (or primary key) before: only the first counts.
    case duplicate
    /// The id is this home's, for something else (an attachment of another note).
    case idInUse
    /// Its account is not one the backup holds (and was restored or found the same here).
    case accountNotInBackup
}
