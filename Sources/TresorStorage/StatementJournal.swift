import Foundation
import GRDB
import TresorSystem

/// A file of ``StagedStatement``s for one database, written in order and run later in one
/// transaction: each record is a big-endian UInt32 length and an encoded statement.
///
/// The statements are written so that running the journal twice leaves the database as
/// running it once (`INSERT OR IGNORE`, deletes by id, `expect`s that hold before and after):
/// a restore interrupted between the commits of two databases is completed by running every
/// journal again (docs/FORMAT.md, "Restore staging").
public enum StatementJournal {
    /// Writes a new journal; nothing is left of it unless ``commit()`` is called.
    public final class Writer {
        private let file: ExclusiveFile
        /// Statements written so far.
        public private(set) var count = 0

        /// Creates the journal at `url` (which must not exist).
        /// - Parameter url: the journal's path.
        /// - Throws: ``SecureFileError`` when it cannot be created.
        public init(creating url: URL) throws {
            file = try ExclusiveFile(creating: url)
        }

        /// Appends `statement`.
        /// - Parameter statement: the next statement.
        /// - Throws: ``SecureFileError`` when it cannot be written.
        public func append(_ statement: StagedStatement) throws {
            let body = statement.encoded()
            var record = Data(capacity: 4 + body.count)
            withUnsafeBytes(of: UInt32(body.count).bigEndian) { record.append(contentsOf: $0) }
            record.append(body)
            try file.append(record)
            count += 1
        }

        /// Appends every statement of `statements`, in order.
        /// - Parameter statements: the statements.
        /// - Throws: ``SecureFileError`` when they cannot be written.
        public func append(contentsOf statements: [StagedStatement]) throws {
            for statement in statements { try append(statement) }
        }

        /// Makes the journal durable (fsync) and closes it.
        /// - Throws: ``SecureFileError`` when the fsync fails (the file is then removed).
        public func commit() throws { try file.commit() }

        /// Removes the journal.
        public func abandon() { file.abandon() }
    }

    /// Reads the journal at `url` statement by statement.
    /// - Parameters:
    ///   - url: the journal.
    ///   - body: called with each statement, in order.
    /// - Throws: ``StagedStatementError/malformed`` for a damaged journal; ``SecureFileError``;
    ///   what `body` throws.
    public static func forEach(_ url: URL, _ body: (StagedStatement) throws -> Void) throws {
        try SecureFiles.withReader(url, limit: Int.max) { file in
            while file.offset < file.size {
                let length = try file.read(count: 4).reduce(0) { $0 << 8 | Int($1) }
                guard length <= StagedStatement.maximumEncodedBytes else { throw StagedStatementError.malformed }
                try body(try StagedStatement(decoding: try file.read(count: length)))
            }
        }
    }

    /// Checks the journal's `expect` statements against `database` without changing it.
    /// - Parameters:
    ///   - url: the journal.
    ///   - database: the database it is for.
    /// - Throws: ``StagedStatementError/expectationFailed(_:)`` when one does not hold.
    public static func check(_ url: URL, against database: DatabaseQueue) throws {
        try database.read { db in
            try forEach(url) { statement in
                if statement.kind == .expect { try statement.run(in: db) }
            }
        }
    }

    /// Runs the journal in one transaction of `database`, then checkpoints the WAL with
    /// TRUNCATE (a replaced row's old ciphertext must not linger).
    /// - Parameters:
    ///   - url: the journal.
    ///   - database: the database it is for.
    /// - Throws: what a statement or the journal throws; the transaction is then rolled back.
    public static func apply(_ url: URL, to database: DatabaseQueue) throws {
        try database.write { db in
            try forEach(url) { try $0.run(in: db) }
        }
        _ = try? database.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
    }
}
