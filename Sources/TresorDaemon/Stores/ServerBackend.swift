import Foundation
import Logging
import TresorSyncServer
import TresorWebServer
import TresorWebStore
import TresorWebStorePostgres

/// A server's web backend (docs/WEB.md, "Running a Tresor server") and what keeps it running.
struct ServerBackend: Sendable {
    let backend: WebBackend
    /// The sync relay on the same database (docs/SYNC.md, "Transport").
    let sync: SyncRelay
    /// Runs the backend's connections (the pool, the listener for other instances' events)
    /// until cancelled, then closes them.
    let run: @Sendable () async -> Void
}

extension Daemon {
    /// The server's backend when `--database` names one; nil for the embedded web side.
    /// - Parameter lifetimes: how long web sessions last.
    /// - Returns: the backend on PostgreSQL, or nil.
    /// - Throws: ``ServerSetupError``: the key file is not usable, the database does not
    ///   answer, is another application's or a newer Tresor's, or was sealed with another key.
    func openServerBackend(lifetimes: SessionLifetimes) async throws -> ServerBackend? {
        guard let server = configuration.server else { return nil }
        let key = try ServerKey(file: server.serverKeyFile)
        let logger = self.logger
        let storage = try await PostgresWebStorage.open(
            url: server.database, key: key, lifetimes: lifetimes, logger: logger, passwordRounds: notesSettings.kdfRounds)
        logger.notice(
            "web storage on PostgreSQL",
            metadata: [
                "database": "\(storage.databaseName)", "migrationsApplied": "\(storage.appliedMigrations.map(String.init).joined(separator: ","))",
            ])
        let sync = SyncRelay(
            database: storage.database, backend: storage.backend, registrationNeedsInvite: configuration.web.registration == .invite,
            accountQuotaBytes: configuration.web.accountQuotaBytes, attachmentBytes: configuration.notesAttachmentBytes)
        return ServerBackend(backend: storage.backend, sync: sync) {
            await sync.run()
            await storage.close()
        }
    }
}

/// The web server's context gives the sync routes the client's address.
extension WebRequestContext: SyncRequestContext {}
