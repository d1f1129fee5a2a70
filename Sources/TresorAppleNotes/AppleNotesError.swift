/// Why an Apple Notes database, or one note in it, could not be read.
///
/// Messages name tables, columns, sizes and types — never note content, titles or crypto
/// values — so an error can be shown or logged as it is. Text that comes from the file itself
/// (SQLite's own error messages) is shortened and stripped of control characters first.
public enum AppleNotesError: Error, Equatable, Sendable {
    /// The file is not an SQLite database (empty, another format, or damaged beyond opening).
    case notANoteStore(String)
    /// The database lacks a table every NoteStore has (the name is given).
    case missingTable(String)
    /// A table lacks a column the reader cannot do without (given as `TABLE.COLUMN`).
    case missingColumn(String)
    /// SQLite failed while reading: a damaged page, for example.
    case damagedDatabase(String)
    /// A note body is not a gzipped Apple Notes protobuf (bad gzip, bad protobuf, no text).
    case damagedBody(String)
    /// A column holds a value of the wrong type or out of range for what Apple writes there.
    case invalidValue(String)
    /// Something exceeds an ``AppleNotesLimits`` bound.
    case tooLarge(String)
}

extension AppleNotesError: CustomStringConvertible {
    /// A sentence for people, naming what is wrong and where.
    public var description: String {
        switch self {
        case .notANoteStore(let reason): return "not an Apple Notes database: \(reason)"
        case .missingTable(let table): return "not an Apple Notes database: it has no table \(table)"
        case .missingColumn(let column): return "unsupported Apple Notes database: it has no column \(column)"
        case .damagedDatabase(let reason): return "the database is damaged: \(reason)"
        case .damagedBody(let reason): return "damaged note body: \(reason)"
        case .invalidValue(let reason): return "invalid value: \(reason)"
        case .tooLarge(let reason): return "too large: \(reason)"
        }
    }
}

extension AppleNotesError {
    /// Text taken from the file (SQLite messages can quote schema names), made safe to show:
    /// at most 160 characters, drawing nothing (``TerminalText``).
    static func sanitized(_ text: String) -> String {
        TerminalText.printable(text, limit: 160)
    }
}
