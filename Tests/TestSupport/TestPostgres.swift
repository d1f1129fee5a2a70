import Foundation
import Logging
import PostgresNIO
import TresorSystem

/// A throwaway PostgreSQL server for the tests, started by `scripts/postgres-for-tests` (as the
/// browser tests' and the benchmark's are): Debian's PostgreSQL, `initdb` in a temporary
/// directory (as the `postgres` user when the tests run as root), listening on a free loopback
/// port with `fsync=off`, one per test process and stopped when the process ends — a watcher
/// stops it even after a crash. Each test takes a database of its own. Under `CI=true` a missing PostgreSQL fails the tests that need it;
/// elsewhere they are disabled (`.enabled(if: TestPostgres.shouldRun)`).
public enum TestPostgres {
    /// Where Debian puts the server's programs (`initdb`, `pg_ctl`, `postgres`).
    public static let binDirectory: String? = {
        let candidates = ["/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0 + "/pg_ctl") }
    }()

    /// Whether the PostgreSQL tests run: PostgreSQL is installed, or CI requires it (and a
    /// missing one then fails them).
    public static var shouldRun: Bool { binDirectory != nil || ProcessInfo.processInfo.environment["CI"] == "true" }

    /// How long a test's server step may wait for the database, where the deadline is not what
    /// the test checks. Every suite of the run shares two cores: in a passing CI run a first step
    /// waited 100 s, so a production-like deadline only makes the tests flaky.
    public static let stepDeadline: Duration = .seconds(600)

    /// The running server.
    public struct Server: Sendable {
        public var port: Int
        public var directory: String
        public var user: String
    }

    private static let started = StartOnce()

    /// The process's server, started on first use.
    /// - Returns: the server.
    /// - Throws: when PostgreSQL is missing or does not start.
    public static func server() async throws -> Server {
        try await started.server()
    }

    /// A new empty database on the process's server.
    /// - Returns: its URL (`postgres://tresor@127.0.0.1:PORT/NAME?sslmode=disable`).
    /// - Throws: when the server cannot be reached.
    public static func freshDatabase() async throws -> String {
        let server = try await server()
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        _ = try await withAdminConnection(database: "postgres") { connection, logger in
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
        }
        return "postgres://\(server.user)@127.0.0.1:\(server.port)/\(name)?sslmode=disable"
    }

    /// Runs `body` on a connection to `database` as the superuser (tests inspect and damage
    /// databases the way an administrator could).
    /// - Parameters:
    ///   - database: the database's name.
    ///   - body: what to do.
    /// - Returns: what `body` returns.
    /// - Throws: what connecting or `body` throws.
    public static func withAdminConnection<T: Sendable>(
        database: String, _ body: @Sendable (PostgresConnection, Logger) async throws -> T
    ) async throws -> T {
        let server = try await server()
        let logger = Logger(label: "tresor.tests.postgres")
        let configuration = PostgresConnection.Configuration(
            host: "127.0.0.1", port: server.port, username: server.user, password: nil, database: database, tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        do {
            let value = try await body(connection, logger)
            try await connection.close()
            return value
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// The first column of every row `sql` returns, as text, run as the superuser on `database`.
    /// - Parameters:
    ///   - sql: one statement (`… ::text` for columns of other types).
    ///   - database: the database's name.
    /// - Returns: the values.
    /// - Throws: what connecting or the statement throws.
    public static func texts(_ sql: String, database: String) async throws -> [String] {
        try await withAdminConnection(database: database) { connection, logger in
            var values: [String] = []
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) {
                values.append(try row.decode(String.self))
            }
            return values
        }
    }

    /// Every row of every table of `database`'s current schema as JSON text, one per line
    /// (what an attacker with a copy of the database reads).
    /// - Parameter database: the database's name.
    /// - Returns: the rows.
    /// - Throws: what connecting or reading throws.
    public static func dump(database: String) async throws -> String {
        let tables = try await texts(
            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1", database: database)
        var text = ""
        for table in tables {
            for row in try await texts("SELECT row_to_json(t)::text FROM \(table) t", database: database) { text += row + "\n" }
        }
        return text
    }

    /// The name of the database a URL from ``freshDatabase()`` names.
    public static func databaseName(of url: String) -> String {
        String(URLComponents(string: url)!.path.dropFirst())
    }

    /// The first call starts the server on a thread of its own (`initdb` takes seconds, a
    /// minute on a loaded machine, and Swift concurrency has one thread per core); every call
    /// waits for that start's outcome.
    private actor StartOnce {
        private var starting: Task<Server, any Error>?

        func server() async throws -> Server {
            let starting = self.starting ?? Task { try await offloaded { try TestPostgres.start() } }
            self.starting = starting
            return try await starting.value
        }
    }

    /// The script that starts the server.
    static let script = Repository.file("scripts/postgres-for-tests")

    /// The server, its settings for tests (no durability), watched so that it stops when this process ends.
    private static func start() throws -> Server {
        guard binDirectory != nil else {
            throw Failure("PostgreSQL is not installed (Debian: apt-get install postgresql); scripts/test installs it")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-pg-" + UUID().uuidString).path
        let port = try run(
            script.path,
            [
                "start", directory, "--watch", "\(getpid())",
                "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
            ])
        guard let port = Int(port.split(separator: "\n").last ?? "") else { throw Failure("postgres-for-tests printed no port: \(port)") }
        return Server(port: port, directory: directory, user: "tresor")
    }

    /// Runs a program to its end; returns its output (from a file), quoted when it fails. Spawned
    /// directly with every other descriptor closed: `pg_ctl start` leaves a server (and the
    /// script a watcher) running that would otherwise keep Foundation's `Process` waiting on an
    /// inherited descriptor.
    private static func run(_ program: String, _ arguments: [String]) throws -> String {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-pg-output-" + UUID().uuidString).path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let status = try spawn([program] + arguments, output: outputPath)
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard status == 0 else { throw Failure("\((program as NSString).lastPathComponent) failed: \(text.suffix(2000))") }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// posix_spawn with standard input from /dev/null, output and errors to `output`, and no
    /// other descriptor; returns the exit status.
    private static func spawn(_ argv: [String], output: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // No other descriptor of this process reaches the child, closed in the child itself:
        // marking them close-on-exec here first would miss one opened meanwhile by another
        // thread — such as the socket by which Foundation's `Process` learns that a program it
        // started exited, which the server and its watcher would then hold for the whole run,
        // and that program's exit would never be seen.
        ProcessSpawn.closeDescriptors(from: 3, in: &actions)
        let command = ["/bin/sh", "-c", "cd / && exec \"$@\"", "sh"] + argv
        let cArguments = command.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, cArguments, environ)
        guard spawned == 0 else { throw Failure("cannot start \(argv[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw Failure("waitpid failed") }
        }
        // WIFEXITED / WEXITSTATUS
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }
}
