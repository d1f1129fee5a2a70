import Foundation
import GRDB

/// One SQL statement prepared ahead of the transaction that runs it: what a restore stages for
/// each database of a home, so that its commit needs no key and can be completed after a crash
/// (docs/FORMAT.md, "Restoring").
///
/// Every value a statement carries is what the live database would hold — sealed columns
/// already sealed under the home's keys — so a staged statement shows no more than the row it
/// becomes.
public struct StagedStatement: Equatable, Sendable {
    public enum Kind: UInt8, Sendable {
        /// Run the statement.
        case execute = 1
        /// Run the query: its first row's first column must be 1, or the whole transaction is
        /// refused (the database changed since the statements were staged).
        case expect = 2
    }

    public var kind: Kind
    public var sql: String
    public var arguments: [DatabaseValue]

    /// A statement to run.
    /// - Parameters:
    ///   - sql: one SQL statement, with `?` placeholders.
    ///   - arguments: its values, in order.
    public init(_ sql: String, _ arguments: [DatabaseValue] = []) {
        self.init(.execute, sql, arguments)
    }

    /// A statement to run, or (`.expect`) a query that must answer 1.
    /// - Parameters:
    ///   - kind: run it, or expect 1 of it.
    ///   - sql: one SQL statement, with `?` placeholders.
    ///   - arguments: its values, in order.
    public init(_ kind: Kind, _ sql: String, _ arguments: [DatabaseValue]) {
        self.kind = kind
        self.sql = sql
        self.arguments = arguments
    }

    /// Runs the statement in `db` (in the caller's transaction).
    /// - Parameter db: the database, in a transaction.
    /// - Throws: ``StagedStatementError/expectationFailed(_:)`` for an `expect` that does not
    ///   hold; SQLite's errors.
    public func run(in db: Database) throws {
        // Built from existentials: GRDB's initializer for a sequence of one concrete type
        // projects each value through a key path, which its unspecialized generic code
        // instantiates anew at every call — a seventh of a restore's commit.
        let statementArguments = StatementArguments(arguments.map { $0 as (any DatabaseValueConvertible)? })
        // A restore runs thousands of statements of a few shapes: each shape is compiled once
        // (GRDB's authorizer walks every compiled statement).
        let statement = try db.cachedStatement(sql: sql)
        switch kind {
        case .execute:
            try statement.execute(arguments: statementArguments)
        case .expect:
            guard try Bool.fetchOne(statement, arguments: statementArguments) == true else {
                throw StagedStatementError.expectationFailed(String(sql.prefix(120)))
            }
        }
    }

    // MARK: Encoding

    /// The most a statement may take in a journal (its SQL and arguments).
    public static let maximumEncodedBytes = 64 * 1024 * 1024

    /// The statement as journal bytes: kind (1) ‖ SQL length (u32) ‖ SQL ‖ argument count (u16) ‖
    /// arguments, each a type byte (0 null, 1 integer, 2 real, 3 text, 4 blob) and its value
    /// (u64 two's complement, IEEE 754 bits, or u32 length ‖ bytes), all big-endian.
    /// - Returns: the bytes ``init(decoding:)`` reads back.
    public func encoded() -> Data {
        var bytes: [UInt8] = []
        encode(into: &bytes)
        return Data(bytes)
    }

    /// Appends ``encoded()``'s bytes to `bytes` (a journal's buffer, without a copy per statement).
    func encode(into bytes: inout [UInt8]) {
        bytes.append(kind.rawValue)
        Self.appendBytes(sql.utf8, to: &bytes)
        Self.append(UInt16(arguments.count), to: &bytes)
        for argument in arguments {
            switch argument.storage {
            case .null: bytes.append(0)
            case .int64(let value):
                bytes.append(1)
                Self.append(UInt64(bitPattern: value), to: &bytes)
            case .double(let value):
                bytes.append(2)
                Self.append(value.bitPattern, to: &bytes)
            case .string(let value):
                bytes.append(3)
                Self.appendBytes(value.utf8, to: &bytes)
            case .blob(let value):
                bytes.append(4)
                Self.appendBytes(value, to: &bytes)
            }
        }
    }

    /// Reads a statement written by ``encoded()``.
    /// - Parameter data: the bytes of one statement.
    /// - Throws: ``StagedStatementError/malformed`` for anything else.
    public init(decoding data: Data) throws {
        self = try data.withUnsafeBytes { try Self(decoding: $0) }
    }

    /// Reads a statement written by ``encoded()`` from a journal's buffer.
    init(decoding bytes: UnsafeRawBufferPointer) throws {
        var reader = ByteCursor(bytes)
        guard let kind = Kind(rawValue: try reader.byte()) else { throw StagedStatementError.malformed }
        let sql = try reader.text(count: Int(try reader.integer(4)))
        let count = Int(try reader.integer(2))
        var arguments: [DatabaseValue] = []
        arguments.reserveCapacity(count)
        for _ in 0..<count {
            switch try reader.byte() {
            case 0: arguments.append(.null)
            case 1: arguments.append(Int64(bitPattern: try reader.integer(8)).databaseValue)
            case 2: arguments.append(Double(bitPattern: try reader.integer(8)).databaseValue)
            case 3: arguments.append(try reader.text(count: Int(try reader.integer(4))).databaseValue)
            case 4: arguments.append(Data(try reader.bytes(Int(try reader.integer(4)))).databaseValue)
            default: throw StagedStatementError.malformed
            }
        }
        guard reader.isAtEnd else { throw StagedStatementError.malformed }
        self.init(kind, sql, arguments)
    }

    private static func append<Integer: FixedWidthInteger>(_ value: Integer, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    private static func appendBytes<Bytes: Collection<UInt8>>(_ value: Bytes, to bytes: inout [UInt8]) {
        append(UInt32(value.count), to: &bytes)
        bytes.append(contentsOf: value)
    }
}

/// Why staged statements could not be read or run.
public enum StagedStatementError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A journal record is not a statement ``StagedStatement/encoded()`` wrote.
    case malformed
    /// An `expect` statement did not hold: the database changed since it was staged.
    case expectationFailed(String)

    public var description: String {
        switch self {
        case .malformed: return "a staged statement is damaged"
        case .expectationFailed: return "the database changed while the restore was being staged; run it again"
        }
    }
}

/// Big-endian reads from a byte buffer that never read past its end.
struct ByteCursor {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw StagedStatementError.malformed }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func integer(_ count: Int) throws -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<count { value = value << 8 | UInt64(try byte()) }
        return value
    }

    mutating func bytes(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, count <= bytes.count - offset else { throw StagedStatementError.malformed }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
    }

    /// `count` bytes of UTF-8.
    mutating func text(count: Int) throws -> String {
        guard let text = String(validating: try bytes(count), as: UTF8.self) else { throw StagedStatementError.malformed }
        return text
    }
}
