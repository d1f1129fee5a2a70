import Foundation
import TresorKit
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// The soak (`scripts/bench --soak DURATION`; BENCHMARKS.md, "Soak"): one home served by
/// `tresord --web`, a seeded mix of keychain operations (TresorKit, this executable registered as
/// an application), notes operations (TresorKit) and web note saves and opens (HTTP, one signed-in
/// account) for DURATION, the daemon SIGKILLed and restarted every `killEvery` seconds.
///
/// After every restart every acknowledged operation is checked (each live item's secret, each
/// note's and web note's body): `lost` counts those not found. Per daemon life, the RSS at the end
/// of its warm-up (a fifth of the life) is compared with the RSS before the kill; per minute, the
/// p99 of each kind of operation. Live data is bounded (items, notes and web notes replaced, not
/// accumulated), so memory must stay flat.
struct SoakBench {
    static let passcode = "soak passcode"
    static let appID = "SOAK.soak"
    static let service = "soak"
    static let webName = "soak", webPassword = "soak web password 1"
    static let maximumItems = 400, maximumNotes = 150, maximumWebNotes = 150

    let binDirectory: URL
    let seconds: Double
    let killEvery: Double
    let seed: UInt64

    func run() throws -> [String: Any] {
        let work = try makeTemporaryFolder("tresor-soak")
        defer { try? FileManager.default.removeItem(at: work) }
        let home = work.appendingPathComponent("home"), runtime = work.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let paths = TresorPaths(home: home.path, environment: ["XDG_RUNTIME_DIR": runtime.path, "HOME": work.path])
        let environment = ["XDG_RUNTIME_DIR": runtime.path, "HOME": work.path, "PATH": "/usr/bin:/bin"]
        let daemonLog = work.appendingPathComponent("tresord.log").path
        try SecureFiles.createDirectory(home)
        try SecureFiles.writeAtomically(Data(#"{"webRegistration": "open"}"#.utf8), to: paths.config)
        let port = try freeLoopbackPort()
        let tresord = binDirectory.appendingPathComponent("tresord").path

        func startDaemon() throws -> Child {
            let child = try Child(
                [tresord, "--home", home.path, "--auto-lock", "0", "--log-level", "warning", "--web", "\(port)"],
                environment: environment, output: daemonLog)
            let deadline = Date().addingTimeInterval(20)
            while (try? TresorClient.connect(paths: paths, startDaemon: false).status()) == nil {
                guard Date() < deadline else { throw BenchError("tresord did not answer; see \(daemonLog)") }
                usleep(20_000)
            }
            try waitForPort(port, seconds: 20, log: daemonLog)
            return child
        }

        var daemon = try startDaemon()
        try TresorClient.connect(paths: paths, startDaemon: false).initialize(passcode: Self.passcode)
        let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        try Child.run(
            [
                binDirectory.appendingPathComponent("tresor").path, "app", "register", "--home", home.path, "--id", Self.appID,
                "--team", "SOAK", "--exe", me, "--group", "SOAK.notes", "--passcode-stdin",
            ],
            environment: environment, stdin: Self.passcode + "\n", output: work.appendingPathComponent("cli.log").path)
        let web = HTTPConnection(port: port)
        let registration = try JSONSerialization.data(withJSONObject: [
            "name": Self.webName, "password": Self.webPassword, "passwordAgain": Self.webPassword,
        ])
        let registered = try web.send(
            "POST", "/api/accounts", headers: [("Origin", "http://127.0.0.1:\(port)"), ("Content-Type", "application/json")],
            body: Array(registration))
        guard registered.status == 201 else { throw BenchError("web registration answered \(registered.status)") }

        var state = SoakState(seed: seed)
        var keychain = TresorKit.Keychain(client: try TresorClient.connect(paths: paths, startDaemon: false))
        var notes = TresorKit.Notes(client: try TresorClient.connect(paths: paths, startDaemon: false))
        var session = try signIn(web)
        var lives: [[String: Any]] = []
        var lifeStarted = Date(), warmRSS = 0, lastRSS = 0, lastSample = Date.distantPast
        var checks = 0, lost = 0, restarts = 0, errors: [String: Int] = [:]
        let started = Date()
        var nextKill = started.addingTimeInterval(killEvery)
        log("soak: \(Int(seconds)) s, daemon killed every \(Int(killEvery)) s, seed \(seed)")

        while Date().timeIntervalSince(started) < seconds {
            do {
                try state.step(keychain: keychain, notes: notes, web: web, session: session, port: port)
            } catch {
                errors[String(describing: error).prefix(120).description, default: 0] += 1
            }
            let now = Date()
            if now.timeIntervalSince(lastSample) >= 1 {
                lastSample = now
                lastRSS = memory(of: daemon.pid).rssKB
                if warmRSS == 0 && now.timeIntervalSince(lifeStarted) >= min(killEvery, seconds) / 5 { warmRSS = lastRSS }
            }
            guard now >= nextKill || now.timeIntervalSince(started) >= seconds else { continue }
            let growth = warmRSS > 0 ? Double(lastRSS - warmRSS) / Double(warmRSS) : 0
            lives.append([
                "seconds": now.timeIntervalSince(lifeStarted), "rss_kb_after_warmup": warmRSS, "rss_kb_at_end": lastRSS,
                "growth": growth,
            ])
            log(
                "soak: life \(lives.count): RSS \(warmRSS) → \(lastRSS) kB (\(String(format: "%+.1f", growth * 100)) %), "
                    + "\(state.acknowledged) operations acknowledged")
            // The kill, the restart, and the check of everything acknowledged so far.
            kill(daemon.pid, SIGKILL)
            daemon.wait()
            daemon = try startDaemon()
            restarts += 1
            try TresorClient.connect(paths: paths, startDaemon: false).unlock(passcode: Self.passcode)
            keychain = TresorKit.Keychain(client: try TresorClient.connect(paths: paths, startDaemon: false))
            notes = TresorKit.Notes(client: try TresorClient.connect(paths: paths, startDaemon: false))
            web.disconnect()
            session = try signIn(web)
            let missing = state.verify(keychain: keychain, notes: notes, web: web, session: session)
            checks += state.live
            lost += missing.count
            if !missing.isEmpty { log("soak: LOST after restart \(restarts): \(missing.prefix(5))") }
            lifeStarted = Date()
            warmRSS = 0
            nextKill = lifeStarted.addingTimeInterval(killEvery)
        }
        kill(daemon.pid, SIGTERM)
        daemon.wait()

        let windows = state.windows()
        // p99 stability: each kind's highest minute p99 over its median minute p99, leaving out
        // the first minute (warm-up).
        var p99Ratio: [String: Double] = [:]
        for kind in SoakState.Kind.allCases.map(\.rawValue) {
            let p99s = windows.dropFirst().compactMap { (($0[kind] as? [String: Any])?["p99_ms"] as? Double) }.sorted()
            if p99s.count >= 2 { p99Ratio[kind] = p99s.last! / p99s[p99s.count / 2] }
        }
        let maxGrowth = lives.dropLast().compactMap { $0["growth"] as? Double }.max() ?? lives.last?["growth"] as? Double ?? 0
        return [
            "seconds": seconds, "kill_every_seconds": killEvery, "seed": seed, "restarts": restarts,
            "acknowledged": state.acknowledged, "checked_after_restarts": checks, "lost": lost,
            "errors": errors, "lives": lives, "max_rss_growth": maxGrowth, "minutes": windows, "p99_worst_over_median": p99Ratio,
            "checks": [
                "no_lost_operation": lost == 0, "rss_growth_at_most_10_percent": maxGrowth <= 0.10,
                "p99_within_2x_of_median_minute": p99Ratio.values.allSatisfy { $0 <= 2 },
            ],
        ]
    }

    private func signIn(_ web: HTTPConnection) throws -> WebSessionTokens {
        let (tokens, answer) = try WebSessionTokens.signIn(web, name: Self.webName, password: Self.webPassword, account: 0)
        guard let tokens else { throw BenchError("web sign-in answered \(answer.status)") }
        return tokens
    }
}

/// What the soak acknowledged, and its latencies by minute.
struct SoakState {
    enum Kind: String, CaseIterable {
        case itemAdd = "item_add", itemUpdate = "item_update", itemGet = "item_get", itemDelete = "item_delete"
        case noteCreate = "note_create", noteEdit = "note_edit", noteShow = "note_show", noteDelete = "note_delete"
        case webCreate = "web_note_create", webSave = "web_note_save", webOpen = "web_note_open"
    }

    private var random: SplitMix
    private var items: [String: String] = [:]
    private var notes: [String: String] = [:]
    private var webNotes: [String: String] = [:]
    private var next = 0
    private(set) var acknowledged = 0
    private let started = Date()
    /// Minute → kind → samples (ms).
    private var samples: [Int: [Kind: [Double]]] = [:]

    init(seed: UInt64) { random = SplitMix(state: seed) }

    var live: Int { items.count + notes.count + webNotes.count }

    private mutating func fresh(_ what: String) -> String {
        next += 1
        return "soak-\(what)-\(next)-\(UInt32.random(in: 0...UInt32.max, using: &random))"
    }

    private mutating func timed<T>(_ kind: Kind, _ body: () throws -> T) rethrows -> T {
        let began = nowNanos()
        let result = try body()
        samples[Int(Date().timeIntervalSince(started) / 60), default: [:]][kind, default: []].append(Double(nowNanos() - began) / 1e6)
        return result
    }

    /// One operation, chosen at random: 40 % keychain, 30 % notes, 30 % web.
    mutating func step(keychain: TresorKit.Keychain, notes client: TresorKit.Notes, web: HTTPConnection, session: WebSessionTokens, port: Int) throws
    {
        let roll = Int.random(in: 0..<100, using: &random)
        if roll < 40 {
            let account = items.keys.randomElement(using: &random)
            let choice = Int.random(in: 0..<4, using: &random)
            if account == nil || (choice == 0 && items.count < SoakBench.maximumItems) {
                let account = fresh("account"), secret = fresh("secret")
                _ = try timed(.itemAdd) {
                    try keychain.add(.genericPassword(service: SoakBench.service, account: account), secret: Data(secret.utf8))
                }
                items[account] = secret
            } else if choice == 1 || choice == 0 {
                let secret = fresh("secret")
                _ = try timed(.itemUpdate) {
                    try keychain.update(.genericPassword(service: SoakBench.service, account: account!), secret: Data(secret.utf8))
                }
                items[account!] = secret
            } else if choice == 2 {
                _ = try timed(.itemGet) { try keychain.secret(.genericPassword(service: SoakBench.service, account: account!)) }
            } else {
                _ = try timed(.itemDelete) { try keychain.delete(.genericPassword(service: SoakBench.service, account: account!)) }
                items[account!] = nil
            }
        } else if roll < 70 {
            let id = notes.keys.randomElement(using: &random)
            let choice = Int.random(in: 0..<4, using: &random)
            if id == nil || (choice == 0 && notes.count < SoakBench.maximumNotes) {
                let body = fresh("body"), title = fresh("title")
                let note = try timed(.noteCreate) { try client.create(title: title, body: body) }
                notes[note.id] = body
            } else if choice == 1 || choice == 0 {
                let body = fresh("body")
                _ = try timed(.noteEdit) { try client.edit(id!, body: body) }
                notes[id!] = body
            } else if choice == 2 {
                _ = try timed(.noteShow) { try client.show(id!) }
            } else {
                try timed(.noteDelete) { try client.delete(id!) }
                notes[id!] = nil
            }
        } else {
            let id = webNotes.keys.randomElement(using: &random)
            let choice = Int.random(in: 0..<3, using: &random)
            if id == nil || (choice == 0 && webNotes.count < SoakBench.maximumWebNotes) {
                let body = fresh("web-body")
                let json = try JSONSerialization.data(withJSONObject: ["title": fresh("web-title"), "body": body])
                let answer = try timed(.webCreate) {
                    try web.send("POST", "/api/notes", headers: session.headers(port: port, writing: true), body: Array(json))
                }
                guard answer.status == 201, let id = answer.json?["id"] as? String else { throw BenchError("web create answered \(answer.status)") }
                webNotes[id] = body
            } else if choice == 1 || choice == 0 {
                let body = fresh("web-body")
                let json = try JSONSerialization.data(withJSONObject: ["body": body])
                let answer = try timed(.webSave) {
                    try web.send("PATCH", "/api/notes/\(id!)", headers: session.headers(port: port, writing: true), body: Array(json))
                }
                guard answer.status == 200 else { throw BenchError("web save answered \(answer.status)") }
                webNotes[id!] = body
            } else {
                let answer = try timed(.webOpen) { try web.send("GET", "/api/notes/\(id!)", headers: session.headers(port: port, writing: false)) }
                guard answer.status == 200 else { throw BenchError("web open answered \(answer.status)") }
            }
        }
        acknowledged += 1
    }

    /// Every acknowledged item, note and web note, as last acknowledged; returns what is not.
    func verify(keychain: TresorKit.Keychain, notes client: TresorKit.Notes, web: HTTPConnection, session: WebSessionTokens) -> [String] {
        var missing: [String] = []
        for (account, secret) in items {
            let found = try? keychain.secret(.genericPassword(service: SoakBench.service, account: account))
            if found != Data(secret.utf8) { missing.append("item \(account)") }
        }
        for (id, body) in notes where (try? client.show(id).body) != body { missing.append("note \(id)") }
        for (id, body) in webNotes {
            let answer = try? web.send("GET", "/api/notes/\(id)", headers: session.headers(port: web.port, writing: false))
            if answer?.status != 200 || answer?.json?["body"] as? String != body { missing.append("web note \(id)") }
        }
        return missing
    }

    /// Per minute: each kind's count, p50 and p99.
    func windows() -> [[String: Any]] {
        samples.keys.sorted().map { minute in
            var window: [String: Any] = ["minute": minute]
            for (kind, values) in samples[minute]! { window[kind.rawValue] = summary(values) }
            return window
        }
    }
}
