import TresorAge

/// Why a backup could not be written, read or restored, in words a user can act on. No case
/// carries a passphrase, a secret, a title or any other content of the home or the file.
public enum BackupError: Error, Equatable, Sendable {
    /// The age layer refused the file (wrong passphrase, damaged, cut short, not age at all).
    case file(AgeError)
    /// An age file whose payload is not a Tresor backup.
    case notABackup
    /// A Tresor backup of a record stream version this build does not read.
    case unsupportedVersion(Int)
    /// The record stream breaks the format (which rule is said).
    case damaged(String)
    /// A record holds what the format forbids (which rule is said): such a file was not written
    /// by Tresor as it is, and nothing of it is restored.
    case forbidden(String)
    /// The backup file cannot be read or written (the system's reason is said).
    case io(String)
    /// Another backup or restore is running in this daemon.
    case busy
    /// Its client went away (Ctrl-C) before it was done: no backup file was written, nothing
    /// was restored. A restore that began to commit completes instead.
    case cancelled
    /// The home cannot be restored into now (locked, not initialised).
    case homeUnavailable(String)
    /// The user allowed an application or web account the backup does not hold (a typo): what
    /// it names and what the backup holds are said, and nothing is restored.
    case notInBackup(String)
}

extension BackupError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .file(.wrongPassphrase): return "the backup passphrase does not open this file (or its header was changed)"
        case .file(let error): return "not a readable backup: \(error)"
        case .notABackup: return "this age file is not a Tresor backup"
        case .unsupportedVersion(let version): return "backup format version \(version) is not supported (only 1)"
        case .damaged(let rule): return "the backup is damaged: \(rule)"
        case .forbidden(let rule): return "the backup holds what its format forbids: \(rule)"
        case .io(let reason): return reason
        case .busy: return "another backup or restore is running; try again when it has finished"
        case .cancelled: return "cancelled: the client that asked went away; nothing was written or restored"
        case .homeUnavailable(let reason): return reason
        case .notInBackup(let what): return what
        }
    }
}
