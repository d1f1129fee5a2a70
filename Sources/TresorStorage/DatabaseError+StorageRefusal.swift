import GRDB
import TresorSystem

/// SQLite's full disk and read-only database as the one ``StorageRefusal`` every store reports.
/// SQLite answers `SQLITE_FULL` for `ENOSPC`; a database opened read-only because its file system
/// is (``SealedDatabase/open(at:migrator:)``) refuses writes with `SQLITE_READONLY`.
extension DatabaseError: StorageRefusalConvertible {
    public var storageRefusal: StorageRefusal? {
        switch resultCode {
        case .SQLITE_FULL: return .diskFull
        case .SQLITE_READONLY: return .diskReadOnly
        default: return nil
        }
    }
}
