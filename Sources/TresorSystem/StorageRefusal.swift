#if canImport(Glibc)
import Glibc
#endif

/// A write the file system refused as a whole — no space left, or mounted read-only — in the
/// user's words. Every store turns such a failure into this one error (``init(_:)``), so the
/// keychain, notes, the keybag and backups say the same thing, and each interface maps it once
/// (docs/API.md, `diskFull` and `diskReadOnly`).
///
/// The write it stopped was not acknowledged and left nothing behind: a transaction rolled
/// back, or a temporary file removed.
public enum StorageRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// No space (`ENOSPC`, `SQLITE_FULL`) or the user's quota is used up (`EDQUOT`).
    case diskFull
    /// The file system is mounted read-only (`EROFS`); reads still work.
    case diskReadOnly

    public var description: String {
        switch self {
        case .diskFull: return "the disk is full: nothing was changed; free space and try again"
        case .diskReadOnly: return "the disk is read-only: nothing was changed"
        }
    }

    /// The refusal a failed system call's `errno` means, or nil for any other failure.
    /// - Parameter code: the `errno`.
    public init?(errno code: Int32) {
        switch code {
        case ENOSPC, EDQUOT: self = .diskFull
        case EROFS: self = .diskReadOnly
        default: return nil
        }
    }

    /// The refusal `error` is or carries (a ``SecureFileError``, or any
    /// ``StorageRefusalConvertible`` such as SQLite's errors), or nil when it is another failure.
    /// - Parameter error: any error a write threw.
    public init?(_ error: any Error) {
        switch error {
        case let refusal as StorageRefusal: self = refusal
        case SecureFileError.systemCall(_, _, let code): self.init(errno: code)
        case let convertible as any StorageRefusalConvertible:
            guard let refusal = convertible.storageRefusal else { return nil }
            self = refusal
        default: return nil
        }
    }
}

/// An error of a storage library that can say it is a ``StorageRefusal`` (TresorStorage makes
/// SQLite's errors one).
public protocol StorageRefusalConvertible: Error {
    /// The refusal this error means, or nil.
    var storageRefusal: StorageRefusal? { get }
}
