import Foundation
import PostgresNIO

/// A PostgreSQL database named the way libpq names one:
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]`
/// (`postgresql://` too; `?host=/run/postgresql` for a Unix socket directory). Its description
/// never shows the password: it is safe to log and to put in an error.
public struct DatabaseURL: Sendable, CustomStringConvertible {
    /// Whether the connection uses TLS (`sslmode`): never, when the server offers it, always.
    public enum TLSMode: String, Sendable {
        case disable, prefer, require
    }

    /// The PostgreSQL user Tresor connects as.
    public var user: String
    /// From the URL (in `config.json`, whose mode keeps it private) or `PGPASSWORD`; never from
    /// a command line.
    public var password: String?
    /// The server's host name or address (or the socket directory).
    public var host: String
    /// The server's port (5432 when the URL names none).
    public var port: Int
    /// A directory holding the server's Unix socket (`.s.PGSQL.PORT`), instead of TCP.
    public var socketDirectory: String?
    /// The database's name.
    public var database: String
    /// TLS to the server.
    public var tls: TLSMode

    /// Reads a database URL.
    /// - Parameters:
    ///   - text: the URL.
    ///   - environmentPassword: `PGPASSWORD`, used when the URL has no password.
    /// - Throws: ``ServerSetupError/databaseURL(_:)`` saying what is wrong (never quoting a password).
    public init(parsing text: String, environmentPassword: String? = nil) throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme) else {
            throw ServerSetupError.databaseURL("it must start with postgres:// (postgres://USER@HOST:PORT/DATABASE)")
        }
        guard let user = components.user, !user.isEmpty else {
            throw ServerSetupError.databaseURL("it names no user (postgres://USER@HOST/DATABASE)")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw ServerSetupError.databaseURL("it names no database (postgres://USER@HOST/DATABASE)")
        }
        self.user = user.removingPercentEncoding ?? user
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 } ?? environmentPassword
        self.database = database.removingPercentEncoding ?? database
        var host = components.host ?? ""
        var tls = TLSMode.prefer
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                switch item.value ?? "" {
                case "disable": tls = .disable
                case "allow", "prefer": tls = .prefer
                case "require", "verify-ca", "verify-full": tls = .require
                default: throw ServerSetupError.databaseURL("sslmode is disable, prefer or require")
                }
            case "host": host = item.value ?? host
            default: throw ServerSetupError.databaseURL("it has a parameter Tresor does not know (sslmode and host are known)")
            }
        }
        guard !host.isEmpty else { throw ServerSetupError.databaseURL("it names no host (postgres://USER@HOST/DATABASE)") }
        if host.hasPrefix("/") {
            socketDirectory = host
            tls = .disable
        }
        self.host = host
        port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw ServerSetupError.databaseURL("the port must be 1 to 65535") }
        self.tls = tls
    }

    /// Whether the URL itself carries a password (refused on a command line).
    /// - Parameter text: the URL as given.
    /// - Returns: true when it names a password.
    public static func hasPassword(_ text: String) -> Bool {
        URLComponents(string: text)?.password != nil
    }

    /// `postgres://USER@HOST:PORT/DATABASE`, without the password.
    public var description: String {
        "postgres://\(user)@\(socketDirectory.map { "[\($0)]" } ?? host):\(port)/\(database)"
    }

    /// The pool's configuration.
    func clientConfiguration(timeout: Duration) -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let socketDirectory {
            configuration = .init(unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        } else {
            configuration = .init(host: host, port: port, username: user, password: password, database: database, tls: .disable)
            switch tls {
            case .disable: configuration.tls = .disable
            case .prefer: configuration.tls = .prefer(.makeClientConfiguration())
            case .require: configuration.tls = .require(.makeClientConfiguration())
            }
        }
        configuration.options.connectTimeout = timeout
        configuration.options.maximumConnections = 16
        configuration.options.additionalStartupParameters = [("application_name", "tresord")]
        return configuration
    }
}
