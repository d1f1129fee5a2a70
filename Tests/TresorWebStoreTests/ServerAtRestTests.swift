import Foundation
import PostgresFixture
import Logging
import PostgresNIO
import Synchronization
import Testing
import TresorWebStore
@testable import TresorWebStorePostgres

/// What a server leaves in its database and its log (docs/SECURITY.md, 3.15): no session token,
/// origin token or invite code in the clear, and no statement value in the log however verbose
/// the daemon's own logger is.
@Suite("Server database at rest", .enabled(if: TestPostgres.shouldRun))
struct ServerAtRestTests {
    @Test func noTokenOrInviteCodeIsStoredAndNoValueIsLogged() async throws {
        let url = try await TestPostgres.freshDatabase()
        let log = CapturedLog()
        var logger = Logger(label: "tresor.tests.verbose") { _ in log }
        logger.logLevel = .trace
        let storage = try await PostgresWebStorage.open(
            url: try DatabaseURL(parsing: url), key: PostgresFixture.key, lifetimes: Backend.lifetimes, timeout: .seconds(60), logger: logger)
        let account = WebAccount(id: AccountID(rawValue: "acct-rest"), name: "quinn-at-rest", isLocal: false)
        let started = try await storage.sessions.start(for: account, now: Date())
        _ = try await storage.sessions.session(forToken: started.token, originToken: started.originToken, now: Date())
        let (code, _) = try await storage.invites.issue(name: "rita-at-rest", now: Date())
        await storage.close()

        // Every value of every row of every table, as text.
        let dump = try await TestPostgres.withAdminConnection(database: TestPostgres.databaseName(of: url)) { connection, logger in
            var text = ""
            for table in ServerSchema.tables.sorted() {
                for value in try await connection.column(
                    PostgresQuery(unsafeSQL: "SELECT row_to_json(t)::text FROM \(table) t"), logger, as: String.self)
                {
                    text += value + "\n"
                }
            }
            return text
        }
        #expect(dump.contains("quinn-at-rest"), "the dump reads the tables")
        for secret in [started.token, started.originToken, code] {
            #expect(!dump.contains(secret))
            #expect(!dump.contains(Data(secret.utf8).map { String(format: "%02x", $0) }.joined()))
        }
        let logged = log.text
        for value in [started.token, started.originToken, code, started.session.csrfToken, "quinn-at-rest", "rita-at-rest"] {
            #expect(!logged.contains(value))
        }
    }
}

/// A log handler keeping what it is given.
final class CapturedLog: LogHandler, @unchecked Sendable {
    private let lines = Mutex<[String]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String, function: String, line: UInt) {
        let entry = "\(level) \(message) \(metadata ?? [:]) \(self.metadata)"
        lines.withLock { $0.append(entry) }
    }

    var text: String { lines.withLock { $0.joined(separator: "\n") } }
}
