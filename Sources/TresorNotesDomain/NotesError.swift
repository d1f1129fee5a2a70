import Foundation

/// What can go wrong with notes. Messages name the note, attachment or passphrase
/// generation concerned — never their content, a passphrase or a key.
public enum NotesError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No note, folder or attachment with this id.
    case notFound(String)
    /// Bad input from the caller: an empty title, an oversized body, an unknown kind…
    case invalid(String)
    /// The keybag class protecting note content is not available (the keybag has not been
    /// unlocked since the daemon started).
    case contentUnavailable
    /// The note is locked and no secure session holds its passphrase: ask for it.
    case passphraseRequired(LockInfo)
    /// The passphrase entered is wrong. After three consecutive wrong entries the account's
    /// hint comes with it; from the fifth, the next attempt must wait.
    case wrongPassphrase(failedAttempts: Int, hint: String?, retryAfterSeconds: Int?)
    /// Too many wrong passphrases: wait this long before the next attempt.
    case throttled(retryAfterSeconds: Int, hint: String?)
    /// The account has no passphrase for locked notes yet (`tresor note passphrase set`).
    case noPassphrase
    /// `set` on an account that already has one: use change or reset.
    case passphraseAlreadySet
    /// Locking refused: this attachment's kind cannot be locked (docs/FORMAT.md).
    case attachmentNotLockable(name: String, kind: AttachmentKind)
    /// Stored data failed authentication or does not parse: tampering or damage. Other
    /// notes are unaffected.
    case damaged(String)
    /// An operation that needs an unlocked note was asked of a locked one, or the reverse.
    case wrongLockState(String)
    /// Registration with a login name another account has.
    case nameTaken(String)
    /// The account may see the note but not do this (a participant deleting a shared note).
    case forbidden(String)
    /// The request no longer matches the store (a note was locked while a passphrase change
    /// was being prepared): fetch again and retry.
    case conflict(String)
    /// A save of a locked note names a revision older than the stored one (`current`): the
    /// client merges the plaintext it holds (the server cannot) and saves again, or keeps its
    /// version as a conflict copy (docs/FORMAT.md, "Revisions and merges").
    case staleRevision(current: Int64)
    /// The storage cannot be reached (the server's database went away): nothing was changed,
    /// or what was changed is whole. The request may be tried again shortly.
    case unavailable(String)
    /// The account's storage limit would be passed: nothing was written.
    case quotaExceeded(String)

    public var description: String {
        switch self {
        case .notFound(let what): return "\(what) not found"
        case .invalid(let reason): return reason
        case .contentUnavailable: return "notes are unavailable until the keybag is unlocked (tresor unlock)"
        case .passphraseRequired(let info): return LockedNoteMessage.passphraseRequired(info)
        case .wrongPassphrase(let failures, let hint, let wait):
            return LockedNoteMessage.wrongPassphrase(failedAttempts: failures, hint: hint, retryAfterSeconds: wait)
        case .throttled(let wait, let hint):
            return "too many wrong passphrases; try again in \(wait) s" + (hint.map { "; hint: \($0)" } ?? "")
        case .noPassphrase: return "no passphrase is set for locked notes (tresor note passphrase set)"
        case .passphraseAlreadySet: return "a passphrase is already set: use passphrase change, or reset if it is forgotten"
        case .attachmentNotLockable(let name, let kind):
            return
                "attachment \"\(name)\" is a \(kind.rawValue): a locked note takes only \(AttachmentKind.lockable.map(\.rawValue).joined(separator: ", ")) attachments"
        case .damaged(let what): return "\(what) is damaged or was altered"
        case .wrongLockState(let reason): return reason
        case .nameTaken(let name): return "the name \"\(name.prefix(64))\" is taken"
        case .forbidden(let reason): return reason
        case .conflict(let reason): return reason
        case .staleRevision(let current): return "the note changed meanwhile (now revision \(current)): merge and save again"
        case .unavailable(let reason): return reason
        case .quotaExceeded(let reason): return reason
        }
    }
}
