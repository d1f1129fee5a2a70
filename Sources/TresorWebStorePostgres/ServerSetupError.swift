import Foundation

/// Why a server's web storage cannot start (docs/WEB.md, "Running a Tresor server"): each
/// says what is wrong and what to do, and none quotes a password or a key.
public enum ServerSetupError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The database URL does not read.
    case databaseURL(String)
    /// The database does not answer, or refuses the connection.
    case unreachable(database: String, reason: String)
    /// The database holds another application's tables.
    case foreignDatabase(database: String, tables: [String])
    /// The database was last written by a newer Tresor.
    case newerSchema(found: Int, known: Int)
    /// The server key file is missing, unreadable, of the wrong size or mode.
    case serverKey(String)
    /// The server key is not the one this database's content was sealed with.
    case wrongServerKey

    public var description: String {
        switch self {
        case .databaseURL(let reason): return "the database URL is not usable: \(reason)"
        case .unreachable(let database, let reason):
            return "cannot use the database \(database): \(reason) — check the URL, that PostgreSQL runs, and that it lets this user in"
        case .foreignDatabase(let database, let tables):
            return
                "the database \(database) holds tables of another application (\(tables.prefix(5).joined(separator: ", "))): give Tresor a database of its own (createdb tresor)"
        case .newerSchema(let found, let known):
            return "the database was set up by a newer Tresor (schema version \(found); this tresord knows up to \(known)): upgrade tresord"
        case .serverKey(let reason): return "the server key file is not usable: \(reason)"
        case .wrongServerKey:
            return
                "the server key file does not open this database's content: it was sealed with another key (every instance needs the same key file)"
        }
    }
}
