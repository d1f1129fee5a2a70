import Foundation
import GRDB

/// One SQL statement prepared ahead of the transaction that runs it: what a restore stages for
/// each database of a home, so that its commit needs no key and can be completed after a crash
/// (docs/FORMAT.md, "Restore staging").
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
        let statementArguments = StatementArguments(arguments)
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
        var data = Data([kind.rawValue])
        Self.appendBytes(Data(sql.utf8), to: &data)
        Self.append(UInt64(arguments.count), bytes: 2, to: &data)
        for argument in arguments {
            switch argument.storage {
            case .null: data.append(0)
            case .int64(let value):
                data.append(1)
                Self.append(UInt64(bitPattern: value), bytes: 8, to: &data)
            case .double(let value):
                data.append(2)
                Self.append(value.bitPattern, bytes: 8, to: &data)
            case .string(let value):
                data.append(3)
                Self.appendBytes(Data(value.utf8), to: &data)
            case .blob(let value):
                data.append(4)
                Self.appendBytes(value, to: &data)
            }
        }
        return data
    }

    /// Reads a statement written by ``encoded()``.
    /// - Parameter data: the bytes of one statement.
    /// - Throws: ``StagedStatementError/malformed`` for anything else.
    public init(decoding data: Data) throws {
        var reader = ByteCursor(data)
        guard let kind = Kind(rawValue: try reader.byte()) else { throw StagedStatementError.malformed }
        guard let sql = String(data: try reader.bytes(Int(try reader.integer(4))), encoding: .utf8) else { throw StagedStatementError.malformed }
        var arguments: [DatabaseValue] = []
        for _ in 0..<(try reader.integer(2)) {
            switch try reader.byte() {
            case 0: arguments.append(.null)
            case 1: arguments.append(Int64(bitPattern: try reader.integer(8)).databaseValue)
            case 2: arguments.append(Double(bitPattern: try reader.integer(8)).databaseValue)
            case 3:
                guard let text = String(data: try reader.bytes(Int(try reader.integer(4))), encoding: .utf8) else {
                    throw StagedStatementError.malformed
                }
                arguments.append(text.databaseValue)
            case 4: arguments.append(try reader.bytes(Int(try reader.integer(4))).databaseValue)
            default: throw StagedStatementError.malformed
            }
        }
        guard reader.isAtEnd else { throw StagedStatementError.malformed }
        self.init(kind, sql, arguments)
    }

    private static func append(_ value: UInt64, bytes: Int, to data: inout Data) {
        for index in (0..<bytes).reversed() { data.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }

    private static func appendBytes(_ bytes: Data, to data: inout Data) {
        append(UInt64(bytes.count), bytes: 4, to: &data)
        data.append(bytes)
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
    private let data: Data
    private var offset: Int

    init(_ data: Data) {
        self.data = data
        offset = data.startIndex
    }

    var isAtEnd: Bool { offset == data.endIndex }

    mutating func byte() throws -> UInt8 {
        guard offset < data.endIndex else { throw StagedStatementError.malformed }
        defer { offset += 1 }
        return data[offset]
    }

    mutating func integer(_ count: Int) throws -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<count { value = value << 8 | UInt64(try byte()) }
        return value
    }

    mutating func bytes(_ count: Int) throws -> Data {
        guard count >= 0, count <= data.endIndex - offset else { throw StagedStatementError.malformed }
        defer { offset += count }
        return data[offset..<(offset + count)]
    }
}
