import Foundation
import Synchronization
import TresorKeybag
import TresorKeychain
import TresorKit
import TresorProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Keychain scenarios through the daemon, at growing item counts in one home.
///
/// Set-up: a temporary home with a passcode, this executable registered as application
/// `BENCH.bench` (`tresor app register`). The store is grown between measurements *in-process*
/// with `KeychainStore` on the same home while the daemon is stopped (the bulk-fill
/// path); everything measured goes through a freshly started `tresord`.
struct KeychainBench {
    static let passcode = "bench passcode 1"
    static let appID = "BENCH.bench"
    static let service = "bench"
    static let cliService = "bench.cli"
    static let cliItems = 20

    let binDirectory: URL
    let counts: [Int]
    let smoke: Bool
    let work: URL
    let home: URL
    let runtime: URL
    let paths: TresorPaths
    var environment: [String: String]

    init(binDirectory: URL, counts: [Int], smoke: Bool) throws {
        self.binDirectory = binDirectory
        self.counts = counts
        self.smoke = smoke
        work = try makeTemporaryFolder("tresor-bench")
        home = work.appendingPathComponent("home")
        runtime = work.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        paths = TresorPaths(home: home.path, environment: ["XDG_RUNTIME_DIR": runtime.path, "HOME": work.path])
        environment = ["XDG_RUNTIME_DIR": runtime.path, "HOME": work.path, "PATH": "/usr/bin:/bin"]
    }

    var tresor: String { binDirectory.appendingPathComponent("tresor").path }
    var tresord: String { binDirectory.appendingPathComponent("tresord").path }
    var daemonLog: String { work.appendingPathComponent("tresord.log").path }

    // MARK: Daemon

    /// Starts `tresord` on the home and waits until its socket answers; `arguments` and
    /// `environment` are added to the usual ones (the Secret Service scenario's bus).
    func startDaemon(arguments extra: [String] = [], environment added: [String: String] = [:]) throws -> Child {
        let child = try Child(
            [tresord, "--home", home.path, "--auto-lock", "0", "--log-level", "warning"] + extra,
            environment: environment.merging(added) { $1 }, output: daemonLog)
        let deadline = Date().addingTimeInterval(20)
        while true {
            if let client = try? TresorClient.connect(paths: paths, startDaemon: false), (try? client.status()) != nil { break }
            guard Date() < deadline else { throw BenchError("tresord did not answer; see \(daemonLog)") }
            usleep(20_000)
        }
        return child
    }

    func stopDaemon(_ child: Child) {
        kill(child.pid, SIGTERM)
        child.wait()
    }

    func connect() throws -> TresorKit.Keychain {
        TresorKit.Keychain(client: try TresorClient.connect(paths: paths, startDaemon: false))
    }

    // MARK: Fill (in-process, daemon stopped)

    /// Adds items `range` with TresorKeychain directly on the home's store.
    /// - Returns: the fill's seconds, and the keychain's own part of each operation the daemon
    ///   serves, measured here without socket, HTTP or JSON (`in_process_…`).
    func fill(_ range: Range<Int>, cliItems: Bool) throws -> (seconds: Double, inProcess: [String: Any]) {
        guard !range.isEmpty || cliItems else { return (0, [:]) }
        let keybag = try Keybag.open(paths: paths)
        try keybag.unlock(passcode: try Passcode(Self.passcode))
        let keychain = try KeychainStore(file: paths.loginKeychain, keybag: keybag)
        let app = Caller(accessGroups: [Self.appID], defaultAccessGroup: Self.appID)
        let secret = Data(repeating: 0x5A, count: 32)
        let start = nowNanos()
        for i in range {
            try keychain.add(.genericPassword, attributes: Self.attributes(i), secret: secret, caller: app)
            if i % 20_000 == 19_999 { log("  filled \(i + 1)") }
        }
        let seconds = Double(nowNanos() - start) / 1e9
        if cliItems {
            let cli = Caller(accessGroups: ["tresor"], defaultAccessGroup: "tresor", seesEveryGroup: true)
            for k in 0..<Self.cliItems {
                var attributes = ItemAttributes()
                attributes.service = Self.cliService
                attributes.account = "cli-\(k)"
                // What a script reads with `tresor item get` (docs/API.md, "The tresor tool needs you present").
                attributes.readableByScripts = true
                try keychain.add(.genericPassword, attributes: attributes, secret: Data("cli secret \(k)".utf8), caller: cli)
            }
        }
        // The keychain alone: the lookups the daemon serves, made here without socket, HTTP or
        // JSON — what a lookup costs before the transport (BENCHMARKS.md §1).
        var rng = SplitMix(state: UInt64(range.upperBound) &+ 7)
        let lookups = smoke ? 50 : 2000
        var samples: [Double] = []
        for n in 0..<(lookups + 100) {
            var query = Self.query("acct-\(Int.random(in: 0..<range.upperBound, using: &rng))")
            (query.limit, query.returnData, query.returnAttributes) = (.one, true, false)
            let time = try timeMs {
                guard try keychain.copyMatchingFromIndex(query, caller: app)?.first?.secret != nil else {
                    throw BenchError("in-process lookup found nothing")
                }
            }
            if n >= 100 { samples.append(time) }
        }
        let lookup = summary(samples)
        // The same for a find by label, as the daemon answers TresorKit's `attributes` (§5).
        samples = []
        for n in 0..<(lookups / 4 + 100) {
            var query = ItemQuery(.genericPassword, attributes: ItemAttributes())
            query.attributes.label = "label-\(Int.random(in: 0..<range.upperBound, using: &rng))"
            (query.limit, query.returnData, query.returnAttributes) = (.all, false, true)
            let time = try timeMs {
                guard try keychain.copyMatchingFromIndex(query, caller: app)?.count == 1 else {
                    throw BenchError("in-process find by label did not find one item")
                }
            }
            if n >= 100 { samples.append(time) }
        }
        let find = summary(samples)
        // Writes, each committed and synced as the daemon's are: what a write costs before the
        // transport (`fdatasync` included: "Durable adds").
        let writes = smoke ? 30 : 300
        var adds: [Double] = [], updates: [Double] = [], deletes: [Double] = []
        for i in 0..<writes {
            adds.append(try timeMs { try keychain.add(.genericPassword, attributes: Self.attributes(-1 - i), secret: secret, caller: app) })
        }
        for _ in 0..<writes {
            let query = Self.query("acct-\(Int.random(in: 0..<range.upperBound, using: &rng))")
            updates.append(
                try timeMs { try keychain.update(query, changes: ItemAttributes(), secret: Data(repeating: 0x5B, count: 32), caller: app) })
        }
        for i in 0..<writes {
            deletes.append(try timeMs { try keychain.delete(Self.query("acct-\(-1 - i)"), caller: app) })
        }
        keychain.close()
        return (
            seconds,
            [
                "in_process_lookup": lookup, "in_process_find_by_label": find, "in_process_add": summary(adds),
                "in_process_update": summary(updates), "in_process_delete": summary(deletes),
            ]
        )
    }

    static func attributes(_ i: Int) -> ItemAttributes {
        var attributes = ItemAttributes()
        attributes.service = service
        attributes.account = "acct-\(i)"
        attributes.label = "label-\(i)"
        return attributes
    }

    static func query(_ account: String) -> ItemQuery { .genericPassword(service: service, account: account) }

    // MARK: Run

    func run(checkpoint: ([String: Any]) -> Void = { _ in }) throws -> [String: Any] {
        // A new home: keybag with a passcode, this executable registered.
        var daemon = try startDaemon()
        let setupClient = try TresorClient.connect(paths: paths, startDaemon: false)
        try setupClient.initialize(passcode: Self.passcode)
        let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        try Child.run(
            [tresor, "app", "register", "--home", home.path, "--id", Self.appID, "--team", "BENCH", "--exe", me, "--passcode-stdin"],
            environment: environment, stdin: Self.passcode + "\n", output: work.appendingPathComponent("cli.log").path)
        let upload = try attachmentUpload(daemonPID: daemon.pid)
        stopDaemon(daemon)
        let noteList = try noteListThroughDaemon()

        var perCount: [[String: Any]] = []
        var filled = 0
        for count in counts {
            do {
                log("keychain: filling to \(count) items (in-process, daemon stopped)")
                let (fillSeconds, inProcess) = try fill(filled..<count, cliItems: filled == 0)
                filled = count
                daemon = try startDaemon()
                var result: [String: Any] = [
                    "items": count, "fill_seconds": fillSeconds, "fill_items": count - (perCount.last?["items"] as? Int ?? 0),
                ]
                result.merge(inProcess) { $1 }
                let idle = memory(of: daemon.pid)
                // Unlock through the daemon: one PBKDF2 run (600,000 rounds) + HKDF + unwraps.
                let unlockClient = try TresorClient.connect(paths: paths, startDaemon: false)
                result["keybag_unlock_ms"] = try timeMs { try unlockClient.unlock(passcode: Self.passcode) }
                result["daemon_rss_kb_started"] = idle.rssKB
                log("keychain @\(count): measuring through the daemon (pid \(daemon.pid))")
                try measure(count: count, daemonPID: daemon.pid, into: &result)
                let mem = memory(of: daemon.pid)
                result["daemon_rss_kb"] = mem.rssKB
                result["daemon_hwm_kb"] = mem.hwmKB
                result["database_bytes"] = filesSize(in: home, prefix: "login.keychain.db")
                stopDaemon(daemon)
                result["database_bytes_after_stop"] = filesSize(in: home, prefix: "login.keychain.db")
                perCount.append(result)
                let p50 = { (key: String) in ((result[key] as? [String: Any])?["p50_ms"] as? Double) ?? -1 }
                log("keychain @\(count): lookup p50 \(p50("lookup")) ms, status p50 \(p50("status")) ms, RSS \(mem.rssKB) kB")
                checkpoint(["counts": perCount])
            } catch {
                // Keep what the smaller counts measured; say where it stopped.
                log("keychain @\(count) failed: \(error)")
                try? FileManager.default.removeItem(at: work)
                return ["counts": perCount, "attachment_upload": upload, "note_list": noteList, "error": "at \(count) items: \(error)"]
            }
        }
        try? FileManager.default.removeItem(at: work)
        return ["counts": perCount, "attachment_upload": upload, "note_list": noteList]
    }

    func measure(count: Int, daemonPID: pid_t, into result: inout [String: Any]) throws {
        let keychain = try connect()
        var rng = SplitMix(state: UInt64(count))
        let lookups = smoke ? 50 : 2000
        let adds = smoke ? 30 : 500
        // A find by label goes through the attribute index (schema v5): as many as the lookups.
        let finds = smoke ? 30 : 500
        let clis = smoke ? 5 : 30

        for _ in 0..<50 { _ = try keychain.secret(Self.query("acct-\(Int.random(in: 0..<count, using: &rng))")) }
        // Profiling hook: TRESOR_BENCH_PROFILE=N runs N extra lookups after a 3 s pause, so a
        // profiler can attach to the daemon (its pid is logged).
        if let n = ProcessInfo.processInfo.environment["TRESOR_BENCH_PROFILE"].flatMap(Int.init) {
            log("profile: daemon pid \(daemonPID), \(n) lookups in 3 s")
            sleep(3)
            for _ in 0..<n { _ = try keychain.secret(Self.query("acct-\(Int.random(in: 0..<count, using: &rng))")) }
            log("profile: lookups done")
        }

        var samples: [Double] = []
        let daemonCPU0 = cpuMs(of: daemonPID), clientCPU0 = selfCPUMs(), wall0 = nowNanos()
        for _ in 0..<lookups {
            let account = "acct-\(Int.random(in: 0..<count, using: &rng))"
            samples.append(try timeMs { _ = try keychain.secret(Self.query(account)) })
        }
        var lookup = summary(samples)
        // Where a lookup's time goes: CPU of the daemon and of this client per lookup.
        lookup["daemon_cpu_ms_per_op"] = (cpuMs(of: daemonPID) - daemonCPU0) / Double(lookups)
        lookup["client_cpu_ms_per_op"] = (selfCPUMs() - clientCPU0) / Double(lookups)
        lookup["wall_ms_per_op"] = Double(nowNanos() - wall0) / 1e6 / Double(lookups)
        result["lookup"] = lookup
        result["daemon_rss_kb_after_lookups"] = memory(of: daemonPID).rssKB

        // Apple's SecItemCopyMatching (TresorSecurity) against TresorKit's lookup on the same
        // connection, alternating one of each, so both see the same machine at the same moment.
        result["secitem_lookup"] = try SecItemBench(keychain: keychain, service: Self.service).measure(
            lookups: lookups, accounts: { "acct-\(Int.random(in: 0..<count, using: &rng))" })

        // The transport's floor on the same connection: `GET /v1/status` does no keychain work,
        // so lookup minus this is what the lookup itself costs (BENCHMARKS.md §1).
        samples = []
        let statusCPU0 = cpuMs(of: daemonPID)
        for _ in 0..<lookups { samples.append(try timeMs { _ = try keychain.client.status() }) }
        var status = summary(samples)
        status["daemon_cpu_ms_per_op"] = (cpuMs(of: daemonPID) - statusCPU0) / Double(lookups)
        result["status"] = status
        // The same two requests from the raw client of the transport table (no TresorKit, no
        // JSON coding on the client's side), beside the floors `TransportBench` measured.
        let raw = TransportBench(binDirectory: binDirectory, work: work, requests: lookups)
        result["raw_status"] = try raw.measure(socket: paths.socket.path, TransportBench.status)
        let searches = (0..<500).map { _ in
            let account = "acct-\(Int.random(in: 0..<count, using: &rng))"
            let body =
                #"{"query":{"itemClass":"genp","attributes":{"service":"\#(Self.service)","account":"\#(account)"},"limit":"one","returnData":true,"returnAttributes":false}}"#
            return TransportBench.request("POST", "/v1/items/search", body: Data(body.utf8))
        }
        var rawCPU0 = cpuMs(of: daemonPID)
        result["raw_lookup"] = try raw.measure(socket: paths.socket.path, searches)
        (result["raw_lookup"] as? [String: Any]).map {
            var row = $0; row["daemon_cpu_ms_per_op"] = (cpuMs(of: daemonPID) - rawCPU0) / Double(lookups + 200); result["raw_lookup"] = row
        }
        // The same lookups as `GET /v1/items/secret` (no JSON either way), as TresorKit now asks them.
        let secretLookups = (0..<500).map { _ in
            TransportBench.request("GET", ItemSecretQuery.path(for: Self.query("acct-\(Int.random(in: 0..<count, using: &rng))"))!)
        }
        rawCPU0 = cpuMs(of: daemonPID)
        var secretRow = try raw.measure(socket: paths.socket.path, secretLookups)
        secretRow["daemon_cpu_ms_per_op"] = (cpuMs(of: daemonPID) - rawCPU0) / Double(lookups + 200)
        result["raw_secret_lookup"] = secretRow
        // A lookup's floor with any protocol on this socket: SwiftNIO's HTTP/1 pipeline and the
        // keychain in a synchronous handler, nothing else (`transport-floor keychain`, §1).
        let floorSocket = work.appendingPathComponent("keychain-floor-\(count).sock").path
        unlink(floorSocket)
        let floor = try Child(
            [binDirectory.appendingPathComponent("transport-floor").path, "keychain", floorSocket, home.path],
            environment: environment, stdinData: Data((Self.passcode + "\n").utf8))
        defer { kill(floor.pid, SIGKILL); floor.wait() }
        try raw.waitForSocket(floorSocket)
        let floorLookups = (0..<500).map { _ in TransportBench.request("GET", "/acct-\(Int.random(in: 0..<count, using: &rng))") }
        guard try RawHTTPClient(path: floorSocket).roundTrip(floorLookups[0]) == 200 else {
            throw BenchError("transport-floor keychain did not find an item")
        }
        result["keychain_floor_lookup"] = try raw.measure(socket: floorSocket, floorLookups)
        // The same lookups, each on a new connection: a one-shot client's cost (§3).
        rawCPU0 = cpuMs(of: daemonPID)
        var fresh = try raw.measureNewConnections(socket: paths.socket.path, searches)
        fresh["daemon_cpu_ms_per_op"] = (cpuMs(of: daemonPID) - rawCPU0) / Double(lookups + 100)
        result["raw_lookup_new_connection"] = fresh

        samples = []
        for _ in 0..<finds {
            var query = ItemQuery(.genericPassword, attributes: ItemAttributes())
            query.attributes.label = "label-\(Int.random(in: 0..<count, using: &rng))"
            samples.append(
                try timeMs {
                    guard try keychain.attributes(query).count == 1 else { throw BenchError("find by label did not find one item") }
                })
        }
        result["find_by_label"] = summary(samples)
        result["daemon_rss_kb_after_find"] = memory(of: daemonPID).rssKB

        samples = []
        let secret = Data(repeating: 0x33, count: 32)
        let addCPU0 = cpuMs(of: daemonPID)
        for i in 0..<adds {
            samples.append(try timeMs { try keychain.add(Self.query("new-\(count)-\(i)"), secret: secret) })
        }
        var add = summary(samples)
        add["daemon_cpu_ms_per_op"] = (cpuMs(of: daemonPID) - addCPU0) / Double(adds)
        result["add"] = add

        samples = []
        for _ in 0..<adds {
            let account = "acct-\(Int.random(in: 0..<count, using: &rng))"
            let newSecret = Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) })
            samples.append(try timeMs { try keychain.update(Self.query(account), secret: newSecret) })
        }
        result["update"] = summary(samples)

        samples = []
        for i in 0..<adds {
            samples.append(try timeMs { try keychain.delete(Self.query("new-\(count)-\(i)")) })
        }
        result["delete"] = summary(samples)
        // The disk's own floor under each of those writes, right after them (BENCHMARKS.md, "Update and delete").
        result["disk_sync"] = try diskSyncFloor(writes: adds)

        // One CLI process per operation (the keychain-access application reading its own group).
        // As README writes it (no --group): the CLI sees every group, so the daemon answers
        // from the group-less lookup index (schema v3; before it, every row was opened).
        samples = []
        for k in 0..<clis {
            let arguments = [tresor, "item", "get", "--home", home.path, "--service", Self.cliService, "--account", "cli-\(k % Self.cliItems)"]
            samples.append(try timeMs { try Child.run(arguments, environment: environment) })
        }
        result["cli_get"] = summary(samples)
        // With --group: the whole primary key is known, the blind index answers (O(log n)).
        samples = []
        for k in 0..<clis {
            let arguments = [
                tresor, "item", "get", "--home", home.path, "--service", Self.cliService, "--account", "cli-\(k % Self.cliItems)", "--group",
                "tresor",
            ]
            samples.append(try timeMs { try Child.run(arguments, environment: environment) })
        }
        result["cli_get_group"] = summary(samples)
        // The floor: the same binary starting, parsing and exiting without touching the daemon.
        samples = []
        for _ in 0..<clis {
            samples.append(try timeMs { try Child.run([tresor, "--help"], environment: environment) })
        }
        result["cli_help"] = summary(samples)

        result["concurrent"] = try concurrent(count: count)
    }

    /// What one synced commit costs this disk at least, in the home's folder: a 4 KiB page
    /// written and `fdatasync`ed, `writes` times — once each write appending (the file grows:
    /// the sync also commits its size, as a WAL just truncated by a checkpoint grows), once
    /// each overwriting the file's first pages (its size stays, as a WAL reused after a
    /// checkpoint that did not truncate it).
    func diskSyncFloor(writes: Int) throws -> [String: Any] {
        let file = home.appendingPathComponent("sync-floor").path
        defer { unlink(file) }
        let fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw BenchError("cannot create \(file)") }
        defer { close(fd) }
        let page = [UInt8](repeating: 0x42, count: 4096)
        var appending: [Double] = [], overwriting: [Double] = []
        for i in 0..<writes {
            appending.append(
                timeMs {
                    _ = pwrite(fd, page, page.count, off_t(i * page.count)); _ = fdatasync(fd)
                })
        }
        for i in 0..<writes {
            overwriting.append(
                timeMs {
                    _ = pwrite(fd, page, page.count, off_t((i % 16) * page.count)); _ = fdatasync(fd)
                })
        }
        return ["append_fdatasync": summary(appending), "overwrite_fdatasync": summary(overwriting)]
    }

    /// Mixed operations from 1, 4, 16 clients (each its own connection, on its own thread):
    /// 70 % lookup, 10 % add, 10 % update, 10 % delete (of the client's own added items).
    func concurrent(count: Int) throws -> [[String: Any]] {
        let duration = smoke ? 0.5 : 3.0
        var results: [[String: Any]] = []
        for clients in [1, 4, 16] {
            let latencies = Mutex<[Double]>([])
            let errors = Mutex<[String]>([])
            let ops = Atomic<Int>(0)
            let keychains = try (0..<clients).map { _ in try connect() }
            let start = nowNanos()
            let end = start + UInt64(duration * 1e9)
            var threads: [Thread] = []
            let group = DispatchGroup()
            for c in 0..<clients {
                group.enter()
                let keychain = Unchecked(keychains[c])  // each thread owns its own connection
                let seed = UInt64(count * 100 + clients * 17 + c)
                let thread = Thread {
                    defer { group.leave() }
                    var rng = SplitMix(state: seed)
                    var mine: [String] = []
                    var local: [Double] = []
                    local.reserveCapacity(20_000)
                    var serial = 0
                    let secret = Data(repeating: 0x44, count: 32)
                    do {
                        while nowNanos() < end {
                            let dice = Int.random(in: 0..<10, using: &rng)
                            let t = nowNanos()
                            switch dice {
                            case 0:
                                let account = "conc-\(count)-\(clients)-\(c)-\(serial)"
                                serial += 1
                                try keychain.value.add(Self.query(account), secret: secret)
                                mine.append(account)
                            case 1:
                                try keychain.value.update(Self.query("acct-\(Int.random(in: 0..<count, using: &rng))"), secret: secret)
                            case 2:
                                if let account = mine.popLast() {
                                    try keychain.value.delete(Self.query(account))
                                } else {
                                    _ = try keychain.value.secret(Self.query("acct-\(Int.random(in: 0..<count, using: &rng))"))
                                }
                            default:
                                _ = try keychain.value.secret(Self.query("acct-\(Int.random(in: 0..<count, using: &rng))"))
                            }
                            local.append(Double(nowNanos() - t) / 1e6)
                        }
                        for account in mine { try keychain.value.delete(Self.query(account)) }
                    } catch {
                        errors.withLock { $0.append("\(error)") }
                    }
                    ops.add(local.count, ordering: .relaxed)
                    latencies.withLock { $0 += local }
                }
                thread.stackSize = 1 << 20
                threads.append(thread)
                thread.start()
            }
            group.wait()
            let elapsed = Double(nowNanos() - start) / 1e9
            let firstError = errors.withLock { $0.first }
            if let firstError { throw BenchError("concurrent clients failed: \(firstError)") }
            var entry = summary(latencies.withLock { $0 })
            entry["clients"] = clients
            entry["seconds"] = elapsed
            entry["ops_per_second"] = Double(ops.load(ordering: .relaxed)) / duration
            results.append(entry)
        }
        return results
    }
}

/// Hands a non-Sendable value to the one thread that uses it.
struct Unchecked<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
