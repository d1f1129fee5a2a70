import Foundation
import PostgresNIO
import Synchronization
import Testing
import TresorNotesDomain
import TresorTestSupport
import TresorWebStore

@testable import TresorWebStorePostgres

/// A server's database as instances meet it (docs/WEB.md, "Running a Tresor server"):
/// migrations applied once, databases refused that are not Tresor's or are newer, the server
/// key checked, an unreachable database named clearly, several instances on one database.
@Suite("Server database", .enabled(if: TestPostgres.shouldRun))
struct ServerDatabaseTests {
    @Test func instancesStartingAtOnceApplyEachMigrationOnce() async throws {
        let url = try await TestPostgres.freshDatabase()
        let storages = try await withThrowingTaskGroup(of: PostgresWebStorage.self) { group in
            for _ in 0..<4 { group.addTask { try await ServerStorageFixture.open(url: url) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(storages.flatMap(\.appliedMigrations).sorted() == ServerSchema.versions.map(\.version))
        let recorded = try await TestPostgres.withAdminConnection(database: TestPostgres.databaseName(of: url)) { connection, logger in
            try await connection.column("SELECT version FROM tresor_schema ORDER BY version", logger, as: Int.self)
        }
        #expect(recorded == ServerSchema.versions.map(\.version))
        for storage in storages { await storage.close() }
        let again = try await ServerStorageFixture.open(url: url)
        #expect(again.appliedMigrations.isEmpty)
        await again.close()
    }

    @Test func aDatabaseOfAnotherApplicationIsRefused() async throws {
        let url = try await TestPostgres.freshDatabase()
        try await TestPostgres.withAdminConnection(database: TestPostgres.databaseName(of: url)) { connection, logger in
            try await connection.run("CREATE TABLE customers (id INTEGER PRIMARY KEY, email TEXT)", logger)
        }
        await #expect(throws: ServerSetupError.foreignDatabase(database: try DatabaseURL(parsing: url).description, tables: ["customers"])) {
            _ = try await ServerStorageFixture.open(url: url)
        }
        // Nothing of Tresor's was made in it.
        let tables = try await TestPostgres.withAdminConnection(database: TestPostgres.databaseName(of: url)) { connection, logger in
            try await connection.column(
                "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'", logger, as: String.self)
        }
        #expect(tables == ["customers"])
    }

    @Test func aSchemaFromANewerTresorIsRefused() async throws {
        let url = try await TestPostgres.freshDatabase()
        await (try await ServerStorageFixture.open(url: url)).close()
        try await TestPostgres.withAdminConnection(database: TestPostgres.databaseName(of: url)) { connection, logger in
            try await connection.run("INSERT INTO tresor_schema (version, applied) VALUES (\(ServerSchema.latest + 1), 0)", logger)
            // A newer Tresor's tables are its own, not another application's.
            try await connection.run("CREATE TABLE tresor_from_the_future (id INTEGER)", logger)
        }
        await #expect(throws: ServerSetupError.newerSchema(found: ServerSchema.latest + 1, known: ServerSchema.latest)) {
            _ = try await ServerStorageFixture.open(url: url)
        }
    }

    @Test func anotherServerKeyIsRefused() async throws {
        let url = try await TestPostgres.freshDatabase()
        await (try await ServerStorageFixture.open(url: url)).close()
        let other = try ServerKey(bytes: Data(repeating: 0x33, count: 32))
        await #expect(throws: ServerSetupError.wrongServerKey) {
            _ = try await ServerStorageFixture.open(url: url, key: other)
        }
    }

    @Test func anUnreachableDatabaseIsNamedWithoutItsPassword() async throws {
        let port = try LoopbackPort.free()
        let started = Date()
        do {
            _ = try await ServerStorageFixture.open(
                url: "postgres://tresor:hunter2-secret@127.0.0.1:\(port)/tresor?sslmode=disable", timeout: .seconds(3))
            Issue.record("opening a database nothing serves succeeded")
        } catch let error as ServerSetupError {
            guard case .unreachable(let database, _) = error else { Issue.record("unexpected \(error)"); return }
            #expect(database == "postgres://tresor@127.0.0.1:\(port)/tresor")
            #expect(!"\(error)".contains("hunter2"))
        }
        // The deadline is 3 s; in the full suite every other suite shares this process's two
        // cooperative threads, and one run here took 122 s to be woken: the margin is for that.
        #expect(Date().timeIntervalSince(started) < 300, "a bounded wait, not a hang")
    }

    @Test func twoInstancesShareSessionsCountersAndInvites() async throws {
        let url = try await TestPostgres.freshDatabase()
        let a = try await ServerStorageFixture.open(url: url), b = try await ServerStorageFixture.open(url: url)
        let account = WebAccount(id: AccountID(rawValue: "acct-1"), name: "ana", isLocal: false)
        let now = Date()
        let started = try await a.sessions.start(for: account, now: now)
        let onB = try #require(try await b.sessions.session(forToken: started.token, originToken: started.originToken, now: now))
        #expect(onB.csrfToken == started.session.csrfToken)
        #expect(try await b.sessions.end(.id(onB.id)) == 1)
        #expect(try await a.sessions.session(forToken: started.token, originToken: started.originToken, now: now) == nil)
        // Failed sign-ins split over both instances count as one.
        let throttleA = LoginThrottle(store: a.throttles), throttleB = LoginThrottle(store: b.throttles)
        for attempt in 0..<LoginThrottle.Limit.perName.freeFailures {
            let throttle = attempt.isMultiple(of: 2) ? throttleA : throttleB
            let wait = try await throttle.reserveSignIn(name: "ana", address: "192.0.2.\(attempt)", now: now)
            #expect(wait == nil, "attempt \(attempt)")
            try await throttle.signInFailed(name: "ana", address: "192.0.2.\(attempt)", now: now)
        }
        #expect(try await throttleA.reserveSignIn(name: "ana", address: "192.0.2.99", now: now) != nil)
        #expect(try await throttleB.reserveSignIn(name: "ana", address: "192.0.2.98", now: now) != nil)
        let (code, _) = try await a.invites.issue(name: "bo", now: now)
        #expect(try await b.invites.redeem(name: "bo", code: code, now: now))
        #expect(try await a.invites.redeem(name: "bo", code: code, now: now) == false)
        await a.close()
        await b.close()
    }

    @Test func anEventPublishedOnOneInstanceReachesTheOther() async throws {
        let url = try await TestPostgres.freshDatabase()
        let listening = Locked(0)
        let a = try await ServerStorageFixture.open(url: url)
        let b = try await ServerStorageFixture.open(url: url) { listening.withLock { $0 += 1 } }
        try await waitUntil("the store to listen for changes") { listening.withLock { $0 } == 1 }
        let received = Locked<[WebEvent]>([])
        b.events.listen { event in received.withLock { $0.append(event) } }
        let change = NoteChange(kind: .unshared, noteID: "n1", revision: 3, accounts: [AccountID(rawValue: "x")])
        try await a.events.publish(.note(change))
        try await waitUntil("the change to be heard") { !received.withLock { $0 }.isEmpty }
        #expect(received.withLock { $0 } == [.note(change)])
        await a.close()
        await b.close()
    }

    @Test func aKilledListeningConnectionResyncs() async throws {
        let url = try await TestPostgres.freshDatabase()
        let listening = Locked(0)
        let storage = try await ServerStorageFixture.open(url: url) { listening.withLock { $0 += 1 } }
        try await waitUntil("the store to listen for changes") { listening.withLock { $0 } == 1 }
        let received = Locked<[WebEvent]>([])
        storage.events.listen { event in received.withLock { $0.append(event) } }
        let killed = try await TestPostgres.withAdminConnection(database: TestPostgres.databaseName(of: url)) { connection, logger in
            try await connection.count(
                """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE 'LISTEN%'
                """, logger)
        }
        #expect(killed == 1)
        try await waitUntil("the store to listen for changes") { listening.withLock { $0 } == 2 }
        try await waitUntil("a resync to be heard") { received.withLock { $0 }.contains(.resync) }
        let change = NoteChange(kind: .changed, noteID: "n2", revision: 9, accounts: [])
        try await storage.events.publish(.note(change))
        try await waitUntil("the change to be heard") { received.withLock { $0 }.contains(.note(change)) }
        await storage.close()
    }

    @Test func theDatabaseGoingAwayIsUnavailableAndTheInstanceRecovers() async throws {
        let url = try await TestPostgres.freshDatabase()
        // Set-up and recovery run with the generous deadline; only the lookup while the database
        // is away gets a short one, on the same pool (a loaded machine must not make the set-up
        // miss it).
        let storage = try await ServerStorageFixture.open(url: url)
        let pool = storage.database
        let hurried = PostgresSessionStore(
            db: ServerDatabase(client: pool.client, timeout: .seconds(5), logger: pool.logger), lifetimes: Backend.lifetimes)
        let account = WebAccount(id: AccountID(rawValue: "acct-2"), name: "cy", isLocal: false)
        let started = try await storage.sessions.start(for: account, now: Date())
        let name = TestPostgres.databaseName(of: url)
        // Every connection of the database is cut, and new ones are refused for a while.
        try await TestPostgres.withAdminConnection(database: "postgres") { connection, logger in
            try await connection.run(PostgresQuery(unsafeSQL: "ALTER DATABASE \(name) ALLOW_CONNECTIONS false"), logger)
            try await connection.run("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = \(name)", logger)
        }
        do {
            _ = try await hurried.session(forToken: started.token, originToken: started.originToken, now: Date())
            Issue.record("a lookup on a database that went away succeeded")
        } catch let error as NotesError {
            guard case .unavailable = error else { Issue.record("unexpected \(error)"); return }
        }
        try await TestPostgres.withAdminConnection(database: "postgres") { connection, logger in
            try await connection.run(PostgresQuery(unsafeSQL: "ALTER DATABASE \(name) ALLOW_CONNECTIONS true"), logger)
        }
        // The same pool connects again on its own: the next lookup finds the session.
        let found = try await storage.sessions.session(forToken: started.token, originToken: started.originToken, now: Date())
        #expect(found?.id == started.session.id)
        try await storage.checkHealth()
        await storage.close()
    }

    /// A step still waiting for the database at its deadline is answered `unavailable`, and
    /// when the database lets it go on later it does not commit what its caller was told failed.
    @Test func aStepPastItsDeadlineIsNotCommittedAfterwards() async throws {
        let url = try await TestPostgres.freshDatabase()
        // Set-up runs with the generous deadline; only the step under test gets a short one, on
        // the same pool (a loaded machine must not make the set-up miss it).
        let storage = try await ServerStorageFixture.open(url: url)
        let account = try await storage.store.registerAccount(name: "olga", password: try AccountPassword("olga-password-1"))
        let pool = try #require(storage.store as? PostgresWebStore).db
        let hurried = PostgresWebStore(
            db: ServerDatabase(client: pool.client, timeout: .seconds(3), logger: pool.logger),
            sealing: ServerSealing(serverKey: ServerStorageFixture.key), passwordRounds: 1_000, clock: { Date() })
        let name = TestPostgres.databaseName(of: url)
        // A backend of the database other than the one asking, by what it is doing.
        let others = "FROM pg_stat_activity WHERE datname = '\(name)' AND pid <> pg_backend_pid()"
        // An administrator's transaction holds the notes table: the step waits past its deadline.
        try await TestPostgres.withAdminConnection(database: name) { connection, logger in
            try await connection.run("BEGIN", logger)
            try await connection.run("LOCK TABLE notes IN ACCESS EXCLUSIVE MODE", logger)
            do {
                _ = try await hurried.createNote(NoteDraft(title: "late", body: "told it failed"), account: account.id, quota: nil)
                Issue.record("a step past its deadline succeeded")
            } catch let error as NotesError {
                guard case .unavailable = error else { Issue.record("unexpected \(error)"); return }
            }
            // The step is still there, waiting for the table (so releasing it lets it go on).
            try await waitUntil("the step waits for the notes table") {
                try await TestPostgres.texts("SELECT count(*)::text \(others) AND wait_event_type = 'Lock'", database: name) == ["1"]
            }
            try await connection.run("COMMIT", logger)
        }
        // Released, the step reaches its end on its own: it must roll back. Its end is when no
        // backend of the database is in a statement or a transaction any more.
        try await waitUntil("the step ends") {
            try await TestPostgres.texts("SELECT count(*)::text \(others) AND state <> 'idle'", database: name) == ["0"]
        }
        #expect(try await storage.store.notes(account: account.id, folderID: nil).isEmpty)
        #expect(try await TestPostgres.texts("SELECT count(*)::text FROM notes", database: name) == ["0"])
        await storage.close()
    }

}
