import Foundation
import TresorWebServer
import TresorWebStorePostgres

/// What a server needs beyond the web settings (docs/WEB.md, "Running a Tresor server"): its
/// PostgreSQL database and the key file its note content is sealed under.
public struct ServerConfiguration: Sendable {
    /// The database every instance of the server shares.
    public var database: DatabaseURL
    /// The server key file's absolute path (the same file on every instance).
    public var serverKeyFile: String

    /// Nil when neither a database nor a key file is named (the embedded web side).
    /// - Throws: ``DaemonError/configuration(_:)`` when one is named without the other, when
    ///   the web server is off, or for a database URL that does not read.
    init?(database: String?, serverKeyFile: String?, web: WebConfiguration, environment: [String: String]) throws {
        guard database != nil || serverKeyFile != nil else { return nil }
        guard let database else {
            throw DaemonError.configuration("a server key file is for a server: name its database too (--database postgres://USER@HOST/DB)")
        }
        guard let serverKeyFile else {
            throw DaemonError.configuration(
                "a server's database needs the key its notes are sealed under: --server-key-file FILE (make one with head -c 32 /dev/urandom > FILE; chmod 600 FILE)"
            )
        }
        guard web.port != nil else {
            throw DaemonError.configuration("a server serves the web client: add --web PORT (or \"webPort\" in config.json)")
        }
        do {
            self.database = try DatabaseURL(parsing: database, environmentPassword: environment["PGPASSWORD"])
        } catch {
            throw DaemonError.configuration(String(describing: error))
        }
        self.serverKeyFile =
            serverKeyFile.hasPrefix("/")
            ? serverKeyFile : URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(serverKeyFile).path
    }
}
