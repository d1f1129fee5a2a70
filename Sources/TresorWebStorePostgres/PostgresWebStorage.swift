import Foundation
import Logging
import PostgresNIO
import TresorCrypto
import TresorNotesDomain
import TresorWebStore

/// The web storage a server keeps in PostgreSQL (docs/ARCHITECTURE.md, "The web storage
/// boundary"): accounts and notes, sessions, sign-in counters, invites and live updates shared by
/// every instance on one database. Opening it connects, brings the schema up to date (once, however many instances
/// start at once) and checks the server key against the database. Nothing of PostgresNIO leaves
/// this module: callers see the boundary's protocols only.
public final class PostgresWebStorage: Sendable {
    /// Accounts, folders, notes, shares, attachments and passphrase records, in the database.
    public let store: any WebStore
    /// Web sessions, in the database.
    public let sessions: any WebSessionStore
    /// Sign-in and registration counters, in the database.
    public let throttles: any WebThrottleStore
    /// Registration invites, in the database.
    public let invites: any WebInviteStore
    /// Codes to set a forgotten password, in the database.
    public let passwordResets: any WebInviteStore
    /// Live updates between instances (LISTEN/NOTIFY).
    public let events: any WebEventBus
    /// The store, sessions, counters, invites and events together, as the web server takes them
    /// (`WebBackend`).
    public var backend: WebBackend {
        WebBackend(store: store, sessions: sessions, throttles: throttles, invites: invites, passwordResets: passwordResets, events: events)
    }
    /// The schema versions this instance applied on opening (empty when another had).
    public let appliedMigrations: [Int]
    /// The database, as its URL names it without the password.
    public let databaseName: String

    /// The pool and its transactions, for the server's other stores on the same database (the
    /// sync relay, TresorSyncServer).
    public let database: ServerDatabase
    private let bus: PostgresEventBus
    private let tasks: [Task<Void, Never>]

    private init(
        database: ServerDatabase, store: PostgresWebStore, url: DatabaseURL, lifetimes: SessionLifetimes, applied: [Int],
        tasks: [Task<Void, Never>], bus: PostgresEventBus
    ) {
        self.database = database
        self.store = store
        self.databaseName = url.description
        self.sessions = PostgresSessionStore(db: database, lifetimes: lifetimes)
        self.throttles = PostgresThrottleStore(db: database)
        self.invites = PostgresInviteStore(db: database, purpose: .registration)
        self.passwordResets = PostgresInviteStore(db: database, purpose: .passwordReset)
        self.bus = bus
        self.events = bus
        self.appliedMigrations = applied
        self.tasks = tasks
    }

    /// Connects to the database, migrates it and starts listening for events.
    /// - Parameters:
    ///   - url: the database.
    ///   - key: the server key (the same file on every instance).
    ///   - lifetimes: how long web sessions last.
    ///   - timeout: how long one step may wait for the database.
    ///   - logger: where the pool and the listener report (never a statement's values: its
    ///     level is kept at `notice` or above).
    ///   - listening: called each time the events connection listens (again).
    ///   - passwordRounds: PBKDF2 rounds for account passwords, and the fewest accepted for a
    ///     passphrase made in the browser (600,000; tests lower it).
    ///   - clock: the time the store dates notes by (tests move it on).
    /// - Returns: the storage, running until ``close()``.
    /// - Throws: ``ServerSetupError``: the database does not answer, holds another
    ///   application's tables, was set up by a newer Tresor, or its content was sealed with
    ///   another server key.
    public static func open(
        url: DatabaseURL, key: ServerKey, lifetimes: SessionLifetimes, timeout: Duration = .seconds(10), logger: Logger,
        listening: @escaping @Sendable () -> Void = {}, passwordRounds: Int = PBKDF2Parameters.defaultRounds,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) async throws -> PostgresWebStorage {
        let (database, applied, runner) = try await connect(url: url, key: key, timeout: timeout, logger: logger)
        let bus = PostgresEventBus(db: database)
        let listener = Task { await bus.run(listening: listening) }
        let store = PostgresWebStore(db: database, sealing: ServerSealing(serverKey: key), passwordRounds: passwordRounds, clock: clock)
        return PostgresWebStorage(
            database: database, store: store, url: url, lifetimes: lifetimes, applied: applied, tasks: [listener, runner], bus: bus)
    }

    /// Connects to the database, checks that it answers, migrates it and checks the server key
    /// (what ``open(url:key:lifetimes:timeout:logger:listening:passwordRounds:clock:)`` and the
    /// migration's ``ServerImport`` start with).
    /// - Returns: the pool, the versions applied, and the task running the pool (cancelled to close it).
    static func connect(url: DatabaseURL, key: ServerKey, timeout: Duration, logger: Logger) async throws
        -> (ServerDatabase, [Int], Task<Void, Never>)
    {
        var quietLogger = logger
        if quietLogger.logLevel < .notice { quietLogger.logLevel = .notice }
        let quiet = quietLogger
        let client = PostgresClient(configuration: url.clientConfiguration(timeout: timeout), backgroundLogger: quiet)
        let runner = Task { await client.run() }
        let database = ServerDatabase(client: client, timeout: timeout, logger: quiet)
        do {
            do {
                try await database.read { connection in try await connection.run("SELECT 1", quiet) }
            } catch {
                throw ServerSetupError.unreachable(database: url.description, reason: "\(ServerDatabase.translated(error))")
            }
            let applied = try await ServerSchema.migrate(database, sealing: ServerSealing(serverKey: key), name: url.description, now: Date())
            return (database, applied, runner)
        } catch {
            // Not awaited: the pool may take a while to give up connecting to a database that
            // is not there, and the error should not wait for it.
            runner.cancel()
            throw error
        }
    }

    /// Returns when the database answers (`GET /healthz`).
    /// - Throws: ``NotesError/unavailable(_:)``.
    public func checkHealth() async throws {
        try await database.read { [logger = database.logger] connection in try await connection.run("SELECT 1", logger) }
    }

    /// Stops listening and closes the pool's connections.
    public func close() async {
        for task in tasks {
            task.cancel()
            await task.value
        }
    }
}
