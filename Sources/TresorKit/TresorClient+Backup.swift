import FoundationEssentials
import TresorModel
import TresorProtocol

// The backup routes (`/v1/backup/…`), for the `tresor` CLI only. The daemon reads and writes
// the file at the path given; a backup or a restore runs for as long as the home is large, so
// the CLI calls them on a connection with a long timeout and follows their progress on another.
extension TresorClient {
    /// `backup/create`: writes a backup of the whole home to the file the request names,
    /// encrypted with its passphrase; the daemon writes it itself.
    /// - Parameter request: the file's absolute path (outside the home), the backup passphrase,
    ///   the passcode unless the CLI's session proved the user present, and scrypt's work factor.
    /// - Returns: what was backed up, and what was left out and why.
    /// - Throws: `APIError` (`passcodeRequired` or `authFailed` without the right passcode;
    ///   `interactionNotAllowed` while the keybag is locked; `param` for a bad path, an empty
    ///   passphrase or a work factor outside 14–20; `conflict` while another backup operation
    ///   runs; `diskFull`).
    package func backupCreate(_ request: BackupCreateRequest) throws -> BackupReport {
        try call("POST", Route.backupCreate, request)
    }

    /// `backup/verify`: reads a backup file whole and checks it; the home is not touched, and
    /// no passcode is needed.
    /// - Parameter request: the file's absolute path and the backup passphrase.
    /// - Returns: the backup's counts, and what it left out.
    /// - Throws: `APIError` (`authFailed` for a passphrase that does not open it, `decode` for a
    ///   damaged, cut or foreign file, `param` for a bad path, `conflict` while another backup
    ///   operation runs).
    package func backupVerify(_ request: BackupVerifyRequest) throws -> BackupReport {
        try call("POST", Route.backupVerify, request)
    }

    /// `backup/restore`: restores a backup file into the home, or with `dryRun` says what it
    /// would do. The file is read whole and staged before the home changes.
    /// - Parameter request: the file, its passphrase, the passcode, what to do on a conflict,
    ///   and the applications and accounts the user allowed.
    /// - Returns: every entry's outcome (restored, replaced, already present, conflict,
    ///   skipped) and why, or only those not restored or already present (`everyEntry` false).
    /// - Throws: `APIError` (`authFailed` for a wrong passphrase or passcode,
    ///   `passcodeRequired`, `decode` for a damaged or foreign file, `interactionNotAllowed`
    ///   while the keybag is locked, `conflict` while another backup operation runs or when the
    ///   home changed while it was staged) — the home unchanged.
    package func backupRestore(_ request: BackupRestoreRequest) throws -> BackupReport {
        try call("POST", Route.backupRestore, request)
    }

    /// `backup/progress`: how far the backup operation running now has come; asked on another
    /// connection than the operation's.
    /// - Returns: whether one runs, which, and its bytes and items done.
    /// - Throws: `APIError` (`missingEntitlement` for any caller but the CLI).
    package func backupProgress() throws -> BackupProgress {
        try call("POST", Route.backupProgress)
    }
}
