import Foundation
internal import GRDB

/// Where a query's columns are, by upper-cased name (SQLite names are case-insensitive).
struct ColumnIndex {
    let table: String
    private let positions: [String: Int]

    init(table: String, columns: [String]) {
        self.table = table
        var positions: [String: Int] = [:]
        for (position, name) in columns.enumerated() where positions[name.uppercased()] == nil {
            positions[name.uppercased()] = position
        }
        self.positions = positions
    }

    subscript(_ column: String) -> Int? { positions[column.uppercased()] }
}

/// One fetched row, read with the storage classes Apple writes: a value of another class is
/// an ``AppleNotesError/invalidValue(_:)`` naming the column, never a silent conversion.
/// Every accessor returns nil when the column is absent from this schema or NULL.
struct StoredRow {
    let columns: ColumnIndex
    let values: [DatabaseValue]

    /// Whether the query has this column (that is, this database's table has it).
    func has(_ column: String) -> Bool { columns[column] != nil }

    /// The raw value, or nil when the column is absent.
    func value(_ column: String) -> DatabaseValue? { columns[column].map { values[$0] } }

    /// Whether the column is present and not NULL.
    func isSet(_ column: String) -> Bool { value(column).map { !$0.isNull } ?? false }

    func integer(_ column: String) throws(AppleNotesError) -> Int64? {
        switch value(column)?.storage {
        case nil, .null?: return nil
        case .int64(let value)?: return value
        case let other?: throw wrongType(column, other, expected: "an integer")
        }
    }

    /// An integer or a real (dates are reals, but an integer is as good).
    func number(_ column: String) throws(AppleNotesError) -> Double? {
        switch value(column)?.storage {
        case nil, .null?: return nil
        case .int64(let value)?: return Double(value)
        case .double(let value)?: return value
        case let other?: throw wrongType(column, other, expected: "a number")
        }
    }

    func text(_ column: String) throws(AppleNotesError) -> String? {
        switch value(column)?.storage {
        case nil, .null?: return nil
        case .string(let value)?: return value
        case let other?: throw wrongType(column, other, expected: "text")
        }
    }

    func blob(_ column: String) throws(AppleNotesError) -> Data? {
        switch value(column)?.storage {
        case nil, .null?: return nil
        case .blob(let value)?: return value
        case let other?: throw wrongType(column, other, expected: "a blob")
        }
    }

    private func wrongType(_ column: String, _ storage: DatabaseValue.Storage, expected: String) -> AppleNotesError {
        let found: String
        switch storage {
        case .null: found = "NULL"
        case .int64: found = "an integer"
        case .double: found = "a real"
        case .string: found = "text"
        case .blob: found = "a blob"
        }
        return .invalidValue("\(columns.table).\(column.uppercased()) holds \(found), expected \(expected)")
    }
}

extension Database {
    /// Fetches every row of `sql`, as ``StoredRow``s of `table`.
    func storedRows(table: String, sql: String, arguments: StatementArguments = []) throws(AppleNotesError) -> [StoredRow] {
        do {
            let statement = try makeStatement(sql: sql)
            let index = ColumnIndex(table: table, columns: statement.columnNames)
            return try Row.fetchAll(statement, arguments: arguments).map { row in
                StoredRow(columns: index, values: Array(row.databaseValues))
            }
        } catch {
            throw .damagedDatabase(NoteStoreConnection.message(error))
        }
    }
}
