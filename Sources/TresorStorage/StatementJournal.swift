import Foundation
import GRDB
import TresorSystem

/// A file of ``StagedStatement``s for one database, written in order and run later in one
/// transaction: each record is a big-endian UInt32 length and an encoded statement.
///
/// The statements are written so that running the journal twice leaves the database as
/// running it once (`INSERT OR IGNORE`, deletes by id, `expect`s that hold before and after):
/// a restore interrupted between the commits of two databases is completed by running every
/// journal again (docs/FORMAT.md, "Restoring").
public enum StatementJournal {
    /// Writes a new journal; nothing is left of it unless ``commit()`` is called.
    public final class Writer {
        private let file: ExclusiveFile
        /// Records not yet written: a restore stages tens of thousands of small statements, too
        /// many for a write(2) each (BENCHMARKS.md, "Measured design choices").
        private var pending: [UInt8] = []
        /// Statements written so far.
        public private(set) var count = 0

        /// How many bytes are gathered before they are written.
        static let bufferBytes = 256 << 10

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
            let start = pending.count
            pending.append(contentsOf: [0, 0, 0, 0])
            statement.encode(into: &pending)
            withUnsafeBytes(of: UInt32(pending.count - start - 4).bigEndian) { length in
                pending.replaceSubrange(start..<(start + 4), with: length)
            }
            count += 1
            if pending.count >= Self.bufferBytes { try flush() }
        }

        /// Appends every statement of `statements`, in order.
        /// - Parameter statements: the statements.
        /// - Throws: ``SecureFileError`` when they cannot be written.
        public func append(contentsOf statements: [StagedStatement]) throws {
            for statement in statements { try append(statement) }
        }

        /// Makes the journal durable (fsync) and closes it.
        /// - Throws: ``SecureFileError`` when the write or the fsync fails (the file is then removed).
        public func commit() throws {
            try flush()
            try file.commit()
        }

        /// Removes the journal.
        public func abandon() { file.abandon() }

        private func flush() throws {
            guard !pending.isEmpty else { return }
            try file.append(Data(pending))
            // A buffer grown by one large statement is not kept.
            pending.removeAll(keepingCapacity: pending.count <= 2 * Self.bufferBytes)
        }
    }

    /// Reads the journal at `url` statement by statement.
    /// - Parameters:
    ///   - url: the journal.
    ///   - body: called with each statement, in order.
    /// - Throws: ``StagedStatementError/malformed`` for a damaged journal; ``SecureFileError``;
    ///   what `body` throws.
    public static func forEach(_ url: URL, _ body: (StagedStatement) throws -> Void) throws {
        try SecureFiles.withReader(url, limit: Int.max) { file in
            // Read in blocks, not two reads per statement.
            var buffer: [UInt8] = []
            var start = 0
            func fill(_ count: Int) throws -> Bool {
                while buffer.count - start < count {
                    let left = file.size - file.offset
                    guard left > 0 else { return false }
                    if start > 0 {
                        buffer.removeFirst(start)
                        start = 0
                    }
                    buffer.append(contentsOf: try file.read(count: min(left, max(readBytes, count - buffer.count))))
                }
                return true
            }
            while try fill(4) {
                let length = buffer[start..<(start + 4)].reduce(0) { $0 << 8 | Int($1) }
                guard length <= StagedStatement.maximumEncodedBytes, try fill(4 + length) else { throw StagedStatementError.malformed }
                let statement = try buffer.withUnsafeBytes { bytes in
                    try StagedStatement(decoding: UnsafeRawBufferPointer(rebasing: bytes[(start + 4)..<(start + 4 + length)]))
                }
                start += 4 + length
                try body(statement)
            }
            guard buffer.count == start else { throw StagedStatementError.malformed }
        }
    }

    /// How many bytes ``forEach(_:_:)`` reads at once.
    static let readBytes = 1 << 20

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
