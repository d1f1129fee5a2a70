import Foundation
import Testing
import TresorTestSupport

/// `tresord` as a server (docs/WEB.md, "Running a Tresor server"): what it refuses
/// to start with, in words, before it touches a database.
@Suite(.blocksItsThread) struct ServerModeTests {
    @Test func misconfiguredServersAreRefusedInWords() throws {
        let harness = try Harness()
        let port = "\(try Harness.freePort())"
        let key = harness.paths.home.deletingLastPathComponent().appendingPathComponent("server.key").path
        let database = "postgres://tresor@127.0.0.1:5432/tresor"

        let withPassword = try harness.tresord([
            "--web", port, "--database", "postgres://tresor:db-password-on-argv@127.0.0.1/tresor", "--server-key-file", key,
        ])
        #expect(withPassword.status == 1 && withPassword.stderr.contains("must not carry a password"), "\(withPassword.stderr)")
        #expect(!withPassword.stderr.contains("db-password-on-argv"), "the password is not repeated")

        let noKey = try harness.tresord(["--web", port, "--database", database])
        #expect(noKey.status == 1 && noKey.stderr.contains("--server-key-file FILE"), "\(noKey.stderr)")
        let noDatabase = try harness.tresord(["--web", port, "--server-key-file", key])
        #expect(noDatabase.status == 1 && noDatabase.stderr.contains("name its database too"), "\(noDatabase.stderr)")
        let noWeb = try harness.tresord(["--database", database, "--server-key-file", key])
        #expect(noWeb.status == 1 && noWeb.stderr.contains("add --web PORT"), "\(noWeb.stderr)")
        let notAURL = try harness.tresord(["--web", port, "--database", "mysql://tresor@127.0.0.1/tresor", "--server-key-file", key])
        #expect(notAURL.status == 1 && notAURL.stderr.contains("postgres://"), "\(notAURL.stderr)")
    }
}

/// A server's bad start-ups and a database going away (docs/SECURITY.md, §5): each refused at
/// start with what is wrong and what to do; a database that stops answering makes requests
/// fail with 503, and the instance serves again when it is back.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct ServerModeDatabaseTests {
    @Test func badKeysAndDatabasesAreRefusedAtStart() async throws {
        let harness = try Harness()
        let database = try await TestPostgres.freshDatabase()
        let port = "\(try Harness.freePort())"
        let good = try harness.writeServerKey(named: "server.key").path

        let readable = try harness.tresord(
            ["--web", port, "--database", database, "--server-key-file", try harness.writeServerKey(named: "open.key", mode: 0o644).path], timeout: 60
        )
        #expect(
            readable.status == 1 && readable.stderr.contains("may be read by others") && readable.stderr.contains("chmod 600"), "\(readable.stderr)")
        let short = try harness.tresord(
            ["--web", port, "--database", database, "--server-key-file", try harness.writeServerKey(named: "short.key", bytes: 16).path], timeout: 60)
        #expect(short.status == 1 && short.stderr.contains("holds 16 bytes, not 32"), "\(short.stderr)")
        let missing = try harness.tresord(
            ["--web", port, "--database", database, "--server-key-file", harness.root.appendingPathComponent("none.key").path], timeout: 60)
        #expect(missing.status == 1 && missing.stderr.contains("head -c 32 /dev/urandom"), "\(missing.stderr)")

        // The first start sets the database up under the good key; another key cannot open it.
        try harness.startDaemon(extraArguments: ["--web", port, "--database", database, "--server-key-file", good])
        harness.stopDaemon()
        let otherKey = try harness.tresord(
            ["--web", port, "--database", database, "--server-key-file", try harness.writeServerKey(named: "other.key").path], timeout: 60)
        #expect(otherKey.status == 1 && otherKey.stderr.contains("does not open this database's content"), "\(otherKey.stderr)")

        let nowhere = "postgres://tresor@127.0.0.1:\(try Harness.freePort())/tresor?sslmode=disable"
        let unreachable = try harness.tresord(["--web", port, "--database", nowhere, "--server-key-file", good], timeout: 60)
        #expect(unreachable.status == 1 && unreachable.stderr.contains("cannot use the database"), "\(unreachable.stderr)")

        let foreign = try await TestPostgres.freshDatabase()
        _ = try await TestPostgres.texts("CREATE TABLE invoices (id integer)", database: TestPostgres.databaseName(of: foreign))
        let ofAnother = try harness.tresord(["--web", port, "--database", foreign, "--server-key-file", good], timeout: 60)
        #expect(ofAnother.status == 1 && ofAnother.stderr.contains("tables of another application (invoices)"), "\(ofAnother.stderr)")
        #expect(
            try await TestPostgres.texts(
                "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'",
                database: TestPostgres.databaseName(of: foreign)) == ["invoices"], "nothing was added to it")
    }

    /// PostgreSQL refuses a NUL byte in text: a folder id carrying one is the client's error, in
    /// words, and the instance serves on.
    @Test func aNulByteInAFolderIdIs400NotAServerError() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        let server = cluster.servers[0]
        let (alice, _) = try cluster.registered("alice", on: server)
        let refused = try alice.get("/api/notes?folder=a%00b")
        #expect(refused.status == 400 && refused.code == "param", "\(refused.status) \(refused.text)")
        #expect(try alice.get("/api/notes").status == 200)
    }

    @Test func aDatabaseThatGoesAwayGives503AndTheInstanceRecovers() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        let server = cluster.servers[0]
        let (alice, _) = try cluster.registered("alice", on: server)
        let before = try alice.createNote(title: "before", body: "written before the outage")
        let name = cluster.databaseName
        _ = try await TestPostgres.texts("ALTER DATABASE \(name) ALLOW_CONNECTIONS false", database: "postgres")
        _ = try await TestPostgres.texts(
            "SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity WHERE datname = '\(name)'", database: "postgres")

        let during = try alice.post("/api/notes", ["title": "during", "body": "written during the outage"])
        #expect(during.status == 503 && during.code == "unavailable", "\(during.status) \(during.text)")
        #expect(try server.send("GET", "/healthz").status == 503)

        _ = try await TestPostgres.texts("ALTER DATABASE \(name) ALLOW_CONNECTIONS true", database: "postgres")
        var answered = false
        for _ in 0..<60 where !answered {
            answered = (try? server.send("GET", "/healthz").status) == 200
            if !answered { try await Task.sleep(for: .milliseconds(500)) }
        }
        #expect(answered, "the instance serves again once the database is back")
        #expect(try alice.get("/api/notes/\(before)").json?["body"] as? String == "written before the outage")
        let listed = try alice.get("/api/notes").json?["notes"] as? [[String: Any]] ?? []
        #expect(listed.count == 1, "the write refused during the outage left nothing half-written: \(listed.count) notes")
        #expect(try alice.createNote(title: "after", body: "written after the outage").isEmpty == false)
    }
}
