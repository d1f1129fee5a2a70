import Foundation
import Logging
import TresorKeybag
import TresorNotes
import TresorNotesDomain
import TresorWebStore
import TresorWebStorePostgres
import TresorWebStoreSQLite

#if canImport(Glibc)
import Glibc
#endif

/// The web server's throughput (BENCHMARKS.md, "Web server"): sign-in, note list,
/// note open and note save through `tresord --web` — 1 instance on a home's SQLite, 1 and 2
/// instances on one PostgreSQL database (docs/WEB.md, "Running a Tresor server") — at each
/// scale of `accounts` × `notesPerAccount`, seeded directly through each backend's `WebStore`.
/// Requests/s, p50/p99 from a fixed number of keep-alive connections (WebLoad.swift), the
/// daemons' RSS after the load, and CPU per request of the daemon and of PostgreSQL.
struct WebBench {
    static let passcode = "bench web passcode"
    /// The seeded accounts' password (and the sign-in accounts'): typed into the API only.
    static let password = "bench web password"
    /// Seeded accounts' PBKDF2 rounds: cheap, so that 10,000 accounts seed in seconds and the
    /// sessions the load uses are signed in fast. The sign-in accounts keep production's.
    static let seededRounds = 1000
    /// Sessions the load spreads its requests over: the embedded daemon keeps 4096 at most
    /// (docs/WEB.md, "Limits").
    static let maxSessions = 2000

    let binDirectory: URL
    let smoke: Bool
    /// Account counts, one scale each (the largest first).
    let accountCounts: [Int]
    let notesPerAccount: Int
    let connections: Int
    let phaseSeconds: Double
    let signInAccounts: Int
    let configs: [String]

    init(binDirectory: URL, smoke: Bool, accountCounts: [Int]?, notesPerAccount: Int?, seconds: Double?, configs: [String]?) {
        self.binDirectory = binDirectory
        self.smoke = smoke
        self.accountCounts = accountCounts ?? (smoke ? [20] : [10_000, 1_000])
        self.notesPerAccount = notesPerAccount ?? (smoke ? 10 : 100)
        connections = smoke ? 4 : 16
        phaseSeconds = seconds ?? (smoke ? 0.5 : 10)
        signInAccounts = smoke ? 4 : 16
        self.configs = configs ?? ["sqlite-1", "postgres-1", "postgres-2"]
    }

    func run() throws -> [String: Any] {
        let work = try makeTemporaryFolder("tresor-bench-web")
        defer { try? FileManager.default.removeItem(at: work) }
        var result: [String: Any] = [
            "connections": connections, "phase_seconds": phaseSeconds, "seeded_password_rounds": Self.seededRounds,
            "signin_password_rounds": 600_000, "signin_accounts": signInAccounts, "notes_per_account": notesPerAccount,
        ]
        let postgres: PostgresServer?
        if configs.contains(where: { $0.hasPrefix("postgres") }) {
            if let bin = PostgresServer.binDirectory {
                postgres = try PostgresServer(bin: bin)
            } else {
                postgres = nil
                result["postgres"] = "not installed (Debian: postgresql)"
                log("web: PostgreSQL is not installed: its configurations are left out")
            }
        } else {
            postgres = nil
        }
        defer { postgres?.finish() }
        var scales: [[String: Any]] = []
        for (index, accounts) in accountCounts.enumerated() {
            var scale: [String: Any] = ["accounts": accounts, "notes_per_account": notesPerAccount]
            let folder = work.appendingPathComponent("scale-\(index)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            var measured: [String: Any] = [:]
            var seeding: [String: Any] = [:]
            if configs.contains("sqlite-1") {
                let (figures, seed) = try sqlite(accounts: accounts, work: folder)
                measured["sqlite-1"] = figures
                seeding["sqlite"] = seed
            }
            if let postgres, configs.contains(where: { $0.hasPrefix("postgres") }) {
                let instances = configs.compactMap { $0.hasPrefix("postgres-") ? Int($0.dropFirst("postgres-".count)) : nil }
                let (figures, seed) = try self.postgres(postgres, accounts: accounts, database: "bench_\(index)", instances: instances, work: folder)
                for (key, value) in figures { measured[key] = value }
                seeding["postgres"] = seed
            }
            scale["configs"] = measured
            scale["seeding"] = seeding
            scales.append(scale)
            try? FileManager.default.removeItem(at: folder)
        }
        result["scales"] = scales
        // The target (BENCHMARKS.md, "Web server"): note open on PostgreSQL p50 ≤ 2× SQLite's, at the largest scale.
        if let first = scales.first?["configs"] as? [String: Any],
            let pg = ((first["postgres-1"] as? [String: Any])?["phases"] as? [String: Any])?["open"] as? [String: Any],
            let lite = ((first["sqlite-1"] as? [String: Any])?["phases"] as? [String: Any])?["open"] as? [String: Any],
            let pgP50 = pg["p50_ms"] as? Double, let liteP50 = lite["p50_ms"] as? Double, liteP50 > 0
        {
            result["open_p50_postgres_over_sqlite"] = pgP50 / liteP50
            result["open_target_met"] = pgP50 <= 2 * liteP50
        }
        return result
    }

    // MARK: Seeding

    /// Which accounts get a session for the load: all of them up to ``maxSessions``, otherwise
    /// that many spread evenly over all.
    func sessionAccounts(_ accounts: Int) -> [Int] {
        let count = min(accounts, Self.maxSessions)
        return (0..<count).map { $0 * accounts / count }
    }

    static func accountName(_ index: Int) -> String { "a\(index)" }
    static func signInName(_ index: Int) -> String { "signin-\(index)" }

    static func noteBody(account: Int, note: Int, edit: Int = 0) -> String {
        var body = "Note \(note) of account \(account), edit \(edit)\n"
        for line in 0..<12 { body += "Line \(line): some words of an ordinary note to make it about a kilobyte long.\n" }
        return body
    }

    /// Registers `accounts` accounts (cheap rounds) with `notesPerAccount` notes each through
    /// `store`, `concurrency` accounts at a time; the sign-in accounts through `signInStore`
    /// (production rounds). Returns the note ids of the accounts in `keep`.
    func seed(store: any WebStore, signInStore: any WebStore, accounts: Int, keep: Set<Int>, concurrency: Int, what: String) async throws
        -> (ids: [Int: [String]], figures: [String: Any])
    {
        let start = nowNanos()
        let password = try AccountPassword(Self.password)
        for index in 0..<signInAccounts {
            _ = try await signInStore.registerAccount(name: Self.signInName(index), password: password)
        }
        let notes = notesPerAccount
        let progress = ManagedCounter()
        let ids = try await withThrowingTaskGroup(of: [Int: [String]].self) { group in
            for slice in 0..<concurrency {
                group.addTask {
                    var kept: [Int: [String]] = [:]
                    for account in stride(from: slice, to: accounts, by: concurrency) {
                        let owner = try await store.registerAccount(name: Self.accountName(account), password: password)
                        var mine: [String] = []
                        for note in 0..<notes {
                            let created = try await store.createNote(
                                NoteDraft(title: "Note \(note)", body: Self.noteBody(account: account, note: note)), account: owner.id, quota: nil)
                            if keep.contains(account) { mine.append(created.id) }
                        }
                        if keep.contains(account) { kept[account] = mine }
                        let done = progress.add(1)
                        if done % max(1, accounts / 10) == 0 {
                            log("web: \(what): \(done) of \(accounts) accounts seeded (\(Int(Double(nowNanos() - start) / 1e9)) s)")
                        }
                    }
                    return kept
                }
            }
            var all: [Int: [String]] = [:]
            for try await part in group { all.merge(part) { a, _ in a } }
            return all
        }
        let seconds = Double(nowNanos() - start) / 1e9
        log("web: \(what): \(accounts) accounts × \(notes) notes seeded in \(Int(seconds)) s (\(Int(Double(accounts * notes) / seconds)) notes/s)")
        return (ids, ["seconds": seconds, "notes_per_s": Double(accounts * notes) / seconds, "concurrency": concurrency])
    }

    // MARK: The configurations

    /// One daemon on a home whose notes database holds the accounts (the embedded web side).
    func sqlite(accounts: Int, work: URL) throws -> ([String: Any], [String: Any]) {
        let home = try BenchHome(work: work, name: "sqlite", binDirectory: binDirectory)
        let keep = Set(sessionAccounts(accounts))
        let seeded: (ids: [Int: [String]], figures: [String: Any])
        do {
            let keybag = try Keybag.create(paths: home.paths, passcode: try Passcode(Self.passcode))
            let production = try NotesStore(paths: home.paths, keybag: keybag, settings: .production)
            let cheap = try NotesStore(paths: home.paths, keybag: keybag, settings: .insecureForTesting(kdfRounds: Self.seededRounds))
            let productionStore = SQLiteWebStore(store: { production })
            let cheapStore = SQLiteWebStore(store: { cheap })
            seeded = try blocking {
                try await seed(store: cheapStore, signInStore: productionStore, accounts: accounts, keep: keep, concurrency: 4, what: "sqlite")
            }
        }
        let port = try freeLoopbackPort()
        home.extraArguments = ["--web", "\(port)"]
        try home.start()
        defer { home.stop() }
        try Child.run([home.tresor, "unlock", "--passcode-stdin"], environment: home.environment, stdin: Self.passcode + "\n", output: home.log)
        try waitForPort(port, seconds: 20, log: home.log)
        guard let pid = home.pid else { throw BenchError("no daemon") }
        var figures = try measure(name: "sqlite-1", ports: [port], daemons: [pid], postgres: nil, ids: seeded.ids, accounts: accounts)
        figures["notes_db_bytes"] = filesSize(in: home.home, prefix: "notes.db")
        return (figures, seeded.figures)
    }

    /// 1 and 2 daemons (`instances`) on one PostgreSQL database, seeded with
    /// `synchronous_commit=off` and measured after a restart with the defaults.
    func postgres(_ server: PostgresServer, accounts: Int, database: String, instances: [Int], work: URL) throws
        -> ([String: Any], [String: Any])
    {
        let keyFile = work.appendingPathComponent("server.key")
        var keyBytes = Data(count: 32)
        var rng = SystemRandomNumberGenerator()
        for index in 0..<32 { keyBytes[index] = UInt8.random(in: 0...255, using: &rng) }
        guard FileManager.default.createFile(atPath: keyFile.path, contents: keyBytes, attributes: [.posixPermissions: 0o600]) else {
            throw BenchError("cannot write \(keyFile.path)")
        }
        try server.start(seeding: true)
        try server.createDatabase(database)
        let url = server.url(database)
        let keep = Set(sessionAccounts(accounts))
        let seeded = try blocking { () async throws -> (ids: [Int: [String]], figures: [String: Any]) in
            var logger = Logger(label: "tresor-bench.web")
            logger.logLevel = .warning
            let key = try ServerKey(file: keyFile.path)
            let lifetimes = SessionLifetimes(sessionSeconds: 43200, idleSeconds: 28800, secureSessionSeconds: 300)
            let cheap = try await PostgresWebStorage.open(
                url: try DatabaseURL(parsing: url), key: key, lifetimes: lifetimes, logger: logger, passwordRounds: Self.seededRounds)
            let production = try await PostgresWebStorage.open(url: try DatabaseURL(parsing: url), key: key, lifetimes: lifetimes, logger: logger)
            do {
                let seeded = try await seed(
                    store: cheap.store, signInStore: production.store, accounts: accounts, keep: keep, concurrency: 8, what: "postgres")
                await cheap.close()
                await production.close()
                return seeded
            } catch {
                await cheap.close()
                await production.close()
                throw error
            }
        }
        // Measured with PostgreSQL's defaults (fsync on, synchronous_commit on).
        server.stop()
        try server.start(seeding: false)
        var figures: [String: Any] = [:]
        for count in instances {
            var homes: [BenchHome] = []
            var ports: [Int] = []
            defer { homes.forEach { $0.stop() } }
            for index in 0..<count {
                let home = try BenchHome(work: work, name: "pg\(count)-\(index)", binDirectory: binDirectory)
                let port = try freeLoopbackPort()
                home.extraArguments = ["--web", "\(port)", "--database", url, "--server-key-file", keyFile.path]
                try home.start()
                try waitForPort(port, seconds: 20, log: home.log)
                homes.append(home)
                ports.append(port)
            }
            let name = "postgres-\(count)"
            figures[name] = try measure(
                name: name, ports: ports, daemons: homes.compactMap(\.pid), postgres: server, ids: seeded.ids, accounts: accounts)
        }
        figures["database_bytes"] = server.databaseBytes(database)
        server.stop()
        return (figures, seeded.figures)
    }

    // MARK: The load

    /// Signs in the sessions, then runs the four phases against `ports` (connections spread
    /// over them), with the daemons' RSS and CPU.
    func measure(name: String, ports: [Int], daemons: [pid_t], postgres: PostgresServer?, ids: [Int: [String]], accounts: Int) throws -> [String: Any]
    {
        let connections = self.connections
        // The sessions: one per account of `sessionAccounts`, signed in through the API.
        let chosen = sessionAccounts(accounts)
        var sessions = [WebSessionTokens?](repeating: nil, count: chosen.count)
        let lock = NSLock()
        var failure: String?
        let setupStart = nowNanos()
        DispatchQueue.concurrentPerform(iterations: connections) { thread in
            let connection = HTTPConnection(port: ports[thread % ports.count])
            for slot in stride(from: thread, to: chosen.count, by: connections) {
                do {
                    let (tokens, answer) = try WebSessionTokens.signIn(
                        connection, name: Self.accountName(chosen[slot]), password: Self.password, account: chosen[slot])
                    lock.lock()
                    sessions[slot] = tokens
                    if tokens == nil, failure == nil { failure = "\(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self))" }
                    lock.unlock()
                } catch {
                    lock.lock()
                    if failure == nil { failure = "\(error)" }
                    lock.unlock()
                }
            }
        }
        if let failure { throw BenchError("\(name): signing in the load's sessions: \(failure)") }
        let tokens = sessions.compactMap { $0 }
        let setupSeconds = Double(nowNanos() - setupStart) / 1e9
        log("web: \(name): \(tokens.count) sessions signed in in \(String(format: "%.1f", setupSeconds)) s")

        var phases: [String: Any] = [:]
        let notes = notesPerAccount
        func phase(_ phaseName: String, _ request: @escaping (Int, HTTPConnection, Int) throws -> HTTPConnection.Answer) {
            let daemonCPU = daemons.map { cpuMs(of: $0) }.reduce(0, +)
            let pgCPU = postgres?.cpuMs() ?? 0
            var figures = runLoad(ports: ports, connections: connections, seconds: phaseSeconds, request)
            let count = max(1, figures["n"] as? Int ?? 1)
            figures["daemon_cpu_ms_per_request"] = (daemons.map { cpuMs(of: $0) }.reduce(0, +) - daemonCPU) / Double(count)
            if let postgres { figures["postgres_cpu_ms_per_request"] = (postgres.cpuMs() - pgCPU) / Double(count) }
            figures["daemon_rss_MB"] = daemons.map { Double(memory(of: $0).rssKB) / 1024 }
            log(
                "web: \(name) \(phaseName): \(Int(figures["requests_per_s"] as? Double ?? 0)) req/s, p50 \(String(format: "%.2f", figures["p50_ms"] as? Double ?? 0)) ms, "
                    + "p99 \(String(format: "%.2f", figures["p99_ms"] as? Double ?? 0)) ms, errors \(figures["errors"] ?? 0)"
                    + ((figures["first_error"] as? String).map { " (\($0))" } ?? ""))
            phases[phaseName] = figures
        }
        let signIns = signInAccounts
        phase("signin") { thread, connection, _ in
            try WebSessionTokens.signIn(connection, name: Self.signInName(thread % signIns), password: Self.password, account: -1).1
        }
        phase("list") { thread, connection, n in
            let session = tokens[(thread + n * connections) % tokens.count]
            return try connection.send("GET", "/api/notes", headers: session.headers(port: connection.port, writing: false))
        }
        phase("open") { thread, connection, n in
            let session = tokens[(thread + n * connections) % tokens.count]
            let id = ids[session.account]![Self.pick(thread, n, notes)]
            return try connection.send("GET", "/api/notes/\(id)", headers: session.headers(port: connection.port, writing: false))
        }
        // Each connection saves only its own sessions' notes, so no two edit one note at once,
        // and names the revision it last saw (docs/WEB.md, "Revisions"): every save is `saved`.
        let revisions = (0..<connections).map { _ in RevisionBox() }
        phase("save") { thread, connection, n in
            let own = (tokens.count - thread + connections - 1) / connections
            guard own > 0 else { return HTTPConnection.Answer(status: 599, headers: [], body: Array("no session for this connection".utf8)) }
            let session = tokens[thread + (n % own) * connections]
            let note = Self.pick(thread, n / own, notes)
            let id = ids[session.account]![note]
            let box = revisions[thread]
            let base = box.revisions[id] ?? 1
            let body = try JSONSerialization.data(withJSONObject: [
                "body": Self.noteBody(account: session.account, note: note, edit: n + 1), "base": ["revision": base],
            ])
            let answer = try connection.send(
                "PATCH", "/api/notes/\(id)", headers: session.headers(port: connection.port, writing: true), body: Array(body))
            if answer.status == 200, let json = answer.json {
                if let revision = json["revision"] as? Int { box.revisions[id] = Int64(revision) }
                if json["outcome"] as? String != "saved" { box.otherOutcomes += 1 }
            }
            return answer
        }
        if var save = phases["save"] as? [String: Any] {
            save["not_saved_outcomes"] = revisions.map(\.otherOutcomes).reduce(0, +)
            phases["save"] = save
        }
        let rss = daemons.map { Double(memory(of: $0).rssKB) / 1024 }
        let hwm = daemons.map { Double(memory(of: $0).hwmKB) / 1024 }
        log("web: \(name): daemon RSS after the load \(rss.map { String(format: "%.1f", $0) }.joined(separator: ", ")) MB")
        return [
            "phases": phases, "instances": ports.count, "sessions": tokens.count, "session_setup_seconds": setupSeconds,
            "daemon_rss_MB": rss, "daemon_hwm_MB": hwm,
        ]
    }

    /// A note index for request `n` of connection `thread`, spread over the account's notes.
    static func pick(_ thread: Int, _ n: Int, _ notes: Int) -> Int {
        var mix = SplitMix(state: UInt64(thread) << 32 | UInt64(n))
        return Int(mix.next() % UInt64(notes))
    }
}

final class RevisionBox {
    var revisions: [String: Int64] = [:]
    var otherOutcomes = 0
}

final class ManagedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add(_ n: Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += n
        return value
    }
}

/// A throwaway PostgreSQL for the web scenarios, started by `scripts/postgres-for-tests` (as the
/// tests' is): Debian's, `initdb` in a temporary folder (as the `postgres` user when run as root),
/// on a free loopback port, stopped at the end. Unlike the tests' it keeps `fsync` and
/// `synchronous_commit` on while measuring; only seeding runs with `synchronous_commit=off`.
final class PostgresServer {
    static let binDirectory: String? = {
        ["/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin"]
            .first { FileManager.default.isExecutableFile(atPath: $0 + "/pg_ctl") }
    }()
    /// `scripts/postgres-for-tests`, from this file's place in the repository.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/postgres-for-tests").path

    let bin: String
    let directory: URL
    let port: Int
    private var running = false
    private let environment = ["PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"]

    init(bin: String) throws {
        self.bin = bin
        directory = try makeTemporaryFolder("tresor-bench-pg")
        port = try freeLoopbackPort()
    }

    /// Starts the server (making its database cluster the first time); seeding without waiting for each commit's flush.
    func start(seeding: Bool) throws {
        try Child.run(
            [Self.script, "start", directory.path, "--port", "\(port)"] + (seeding ? ["-c", "synchronous_commit=off"] : []),
            environment: environment, output: directory.path + "/start.log")
        running = true
    }

    /// Stops the server and removes its folder.
    func finish() {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func stop() {
        guard running else { return }
        try? Child.run([Self.script, "stop", directory.path], environment: environment, output: directory.path + "/stop.log")
        running = false
    }

    func createDatabase(_ name: String) throws {
        try Child.run(
            [bin + "/createdb", "-h", "127.0.0.1", "-p", "\(port)", "-U", "tresor", name], environment: environment,
            output: directory.path + "/createdb.log")
    }

    func url(_ database: String) -> String { "postgres://tresor@127.0.0.1:\(port)/\(database)?sslmode=disable" }

    /// The database's size on disk (`pg_database_size`).
    func databaseBytes(_ name: String) -> Int {
        let out = directory.path + "/size.txt"
        try? FileManager.default.removeItem(atPath: out)
        try? Child.run(
            [bin + "/psql", "-h", "127.0.0.1", "-p", "\(port)", "-U", "tresor", "-d", name, "-Atc", "SELECT pg_database_size(current_database())"],
            environment: environment, output: out)
        return Int((try? String(contentsOfFile: out, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
    }

    /// CPU time of the postmaster and every backend it started, in milliseconds.
    func cpuMs() -> Double {
        guard let text = try? String(contentsOfFile: directory.path + "/data/postmaster.pid", encoding: .utf8),
            let first = text.split(separator: "\n").first, let postmaster = Int32(first)
        else { return 0 }
        var total = tresor_bench.cpuMs(of: postmaster)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(name), let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, Int32(fields[1]) == postmaster { total += tresor_bench.cpuMs(of: pid) }
        }
        return total
    }
}
