import GRDB

/// A database read or write SQLite failed for another reason than a full or read-only disk
/// (those are ``StorageRefusal``s): a failing disk (`SQLITE_IOERR`), a damaged file, a busy
/// database — in the words every store on SQLite answers with, the keychains and the notes alike.
///
/// The write it stopped was not acknowledged: SQLite rolled its transaction back, and a commit
/// whose sync failed is not in the database (its WAL frames are not indexed, and the next
/// commit writes over them).
public struct DatabaseFailure: Error, Sendable, CustomStringConvertible {
    /// What the failed access was.
    public enum Access: Sendable {
        case read, write
    }

    /// Which database, in the user's words ("keychain", "notes"); nil when the answer cannot tell.
    public let database: String?
    /// Whether it was a read or a write; nil when the answer cannot tell.
    public let access: Access?
    /// SQLite's primary result code.
    public let resultCode: Int32
    /// What the code means for the user.
    public let meaning: String

    /// - Parameters:
    ///   - error: what SQLite answered.
    ///   - database: which database, in the user's words; nil when it is not known.
    ///   - access: whether it was read or written; nil when it is not known.
    public init(_ error: DatabaseError, database: String?, access: Access?) {
        self.database = database
        self.access = access
        resultCode = error.resultCode.rawValue
        meaning = Self.meaning(of: error.resultCode)
    }

    /// The failure `error` is when SQLite answered it (for an interface that reports any
    /// store's failure without knowing which database it came from), or nil for another error.
    /// - Parameter error: any error a store threw.
    public init?(_ error: any Error) {
        guard let error = error as? DatabaseError else { return nil }
        self.init(error, database: nil, access: nil)
    }

    public var description: String {
        let which = database.map { "the \($0) database" } ?? "the database"
        let how: String
        switch access {
        case .read: how = "cannot be read"
        case .write: how = "cannot be written"
        case nil: how = "cannot be read or written"
        }
        return "\(which) \(how) (SQLite error \(resultCode): \(meaning))"
    }

    static func meaning(of code: ResultCode) -> String {
        switch code {
        case .SQLITE_CORRUPT, .SQLITE_NOTADB: return "the file is damaged"
        case .SQLITE_FULL: return "the disk is full"
        case .SQLITE_IOERR: return "the disk failed to read or write"
        case .SQLITE_BUSY, .SQLITE_LOCKED: return "the database is busy"
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN: return "the file cannot be written or opened"
        default: return "see SQLite's result codes"
        }
    }
}
