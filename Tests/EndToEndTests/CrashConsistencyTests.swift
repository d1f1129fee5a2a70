import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorSystem
#if canImport(Glibc)
import Glibc
#endif

/// SIGKILL the daemon at random moments of a random (seeded) sequence of keychain and passcode
/// operations, restart it, and check that what was acknowledged survived and nothing
/// half-written is visible (SPEC §3.3, §3.4, §7).
///
/// The seed is printed; `TRESOR_CRASH_SEED=<seed>` replays the same sequence of decisions (the
/// kill moments are timing, so outcomes may still differ). `TRESOR_CRASH_KILLS=<n>` sets the
/// number of kills (50 by default; thousands for a long run). `TRESOR_CRASH_DEBUG=1` adds every
/// killed command and its output to the printed summary.
///
/// The CLI is a copy of `tresor` with no `tresord` beside it or on PATH, so a command that finds
/// the daemon dead fails instead of starting one; the test restarts its own daemon
/// (``TestDaemon``: as `Harness.startDaemon`, trace-level log) after every kill. Needs ~1.5 s
/// per kill here.
@Suite(.serialized) struct CrashConsistencyTests {
    @Test func acknowledgedOperationsSurviveSIGKILL() throws {
        let environment = ProcessInfo.processInfo.environment
        let kills = environment["TRESOR_CRASH_KILLS"].flatMap { Int($0) } ?? 50
        let seed = environment["TRESOR_CRASH_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
        print("CrashConsistencyTests: seed \(seed) (replay with TRESOR_CRASH_SEED=\(seed)), \(kills) kills")

        let driver = try CrashDriver(seed: seed)
        defer { print(driver.summary) }
        try driver.run(kills: kills)

        // No temporary file of an interrupted atomic write may stay behind.
        let leftovers = try driver.temporaryFilesInHome()
        #expect(leftovers.isEmpty, "temporary files left in the home after \(kills) kills (seed \(seed)): \(leftovers)")
        // Passcodes: in no command output, not in the trace-level daemon log, not in any file;
        // item secrets (printed by `item get` on purpose): not in the log, not in the clear in any
        // file. Every one of them starts with a marker prefix, so one search per text finds any.
        let harness = driver.harness
        let log = harness.daemonLog
        let files = try harness.homeFiles()
        for (name, text) in [("command output", harness.transcript), ("output of a killed command", driver.killedTranscript.joined())] {
            #expect(!text.contains(CrashDriver.passcodePrefix), "a passcode appeared in the \(name)")
        }
        for marker in [CrashDriver.passcodePrefix, CrashDriver.secretPrefix] {
            #expect(!log.contains(marker), "\(marker)… appeared in the daemon log")
            for (url, data) in files {
                #expect(data.range(of: Data(marker.utf8)) == nil, "\(marker)… appeared in the clear in \(url.lastPathComponent)")
            }
        }
        if harness.secrets.count <= 100 { try harness.expectNoSecretLeaked() }
    }
}

/// SplitMix64: a small, seedable generator so a failing run can be replayed.
struct SplitMix64Seeded: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A broken invariant: the run stops there (the model is no longer trustworthy).
struct CrashInvariantViolation: Error, CustomStringConvertible {
    var description: String
}

/// Drives one home: the model of what must (and may) be there, the operations, the kills.
final class CrashDriver {
    static let service = "crash.tresor"
    static let passcodePrefix = "crash-passcode-"
    static let secretPrefix = "crash-secret-"
    static let maximumLiveItems = 12

    /// One state of an item: its secret and its label (the attribute the updates change).
    struct Version: Hashable, CustomStringConvertible {
        var secret: String
        var label: String
        var description: String { "(\(label), \(secret))" }
    }

    enum Operation: String, CaseIterable {
        case add, updateSecret, updateLabel, updateBoth, delete, passcodeChange
    }

    let harness: Harness
    let daemon: TestDaemon
    let seed: UInt64
    private var rng: SplitMix64Seeded
    /// A copy of `tresor` in a folder without `tresord`, run with a PATH without it: after a
    /// kill the CLI must fail, not start a daemon of its own behind the test's back.
    private let cli: URL
    private let cliEnvironment: [String: String]

    /// Account → the states the item may be in; `nil` is "absent". One element once known.
    private var items: [String: Set<Version?>] = [:]
    /// The passcodes that may be current (two after an unacknowledged change).
    private var passcodes: [String]
    /// Accounts operated on since the last check.
    private var touched: Set<String> = []
    /// The item an unacknowledged operation was about, and its state had it happened.
    private var pending: (account: String, applied: Set<Version?>)?
    private var nextItem = 0
    private var nextVersion = 0
    private var nextPasscode = 1
    private var cycle = 0

    private(set) var killedTranscript: [String] = []
    /// Wall time of acknowledged operations, per kind (to spread the kill moments over them).
    private var durations: [Operation: [Double]] = [:]

    // Figures for the report.
    private var operations: [Operation: Int] = [:]
    private var killedAcknowledged: [Operation: Int] = [:]
    private var killedFailed: [Operation: Int] = [:]
    private var unacknowledgedApplied = 0
    private var unacknowledgedNotApplied = 0
    private var failureMessages: [String: Int] = [:]
    private var restarts = 0
    private var connectedKills = 0
    private var itemGets = 0
    private var sqliteChecks = 0
    static let sqlite = ["/usr/bin/sqlite3", "/bin/sqlite3", "/usr/local/bin/sqlite3"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }.map { URL(fileURLWithPath: $0) }
    private var started = Date()

    init(seed: UInt64) throws {
        self.seed = seed
        rng = SplitMix64Seeded(seed: seed)
        harness = try Harness(configuration: #"{"autoLockSeconds": 0}"#)
        daemon = TestDaemon(harness)
        let folder = harness.root.appendingPathComponent("cli")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        cli = folder.appendingPathComponent("tresor")
        // A hard link keeps the binary's content (the daemon recognises its CLI by hash); a copy if the
        // file system refuses.
        if link(Harness.binaries.appendingPathComponent("tresor").path, cli.path) != 0 {
            try FileManager.default.copyItem(at: Harness.binaries.appendingPathComponent("tresor"), to: cli)
        }
        var environment = harness.environment
        environment["PATH"] = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .filter { !FileManager.default.fileExists(atPath: "\($0)/tresord") }
            .joined(separator: ":")
        cliEnvironment = environment
        let first = "\(Self.passcodePrefix)\(seed)-0-\(UUID().uuidString.prefix(8))"
        passcodes = [first]
        harness.secrets = [first]
    }

    // MARK: The run

    func run(kills: Int) throws {
        started = Date()
        try daemon.start()
        let initialized = try tresor(["init", "--passcode-stdin"], input: passcodes[0] + "\n")
        guard initialized.succeeded else { throw violation("init failed: \(initialized.stderr)") }
        // One passcode change without a kill: its duration sets the window of the killed ones.
        try perform(.passcodeChange, kill: false)
        for kill in 1...max(1, kills) {
            cycle = kill
            for _ in 0..<Int.random(in: 0...2, using: &rng) {
                try perform(pickOperation(), kill: false)
            }
            try perform(pickOperation(), kill: true)
            try daemon.start()
            restarts += 1
            try verifyAfterRestart()
            if kill % 10 == 0 || kill == kills {
                print("CrashConsistencyTests: \(kill)/\(kills) kills survived, \(liveAccounts.count) items, "
                      + "\(String(format: "%.0f", Date().timeIntervalSince(started))) s")
            }
        }
    }

    private var liveAccounts: [String] {
        items.filter { $0.value.count == 1 && $0.value.first! != nil }.keys.sorted()
    }

    private func pickOperation() -> Operation {
        let live = liveAccounts.count
        let roll = Int.random(in: 0..<100, using: &rng)
        if roll < 10 { return .passcodeChange }
        if live == 0 { return .add }
        // Adds win more often while the keychain is small, so it settles around 6–12 items.
        if roll < (live < 6 ? 60 : 40) { return live >= Self.maximumLiveItems ? .delete : .add }
        if roll < 62 { return .updateSecret }
        if roll < 74 { return .updateLabel }
        if roll < 86 { return .updateBoth }
        return .delete
    }

    // MARK: Operations

    private func newVersion(item: Int, from old: Version?, secret: Bool, label: Bool) -> Version {
        nextVersion += 1
        var version = old ?? Version(secret: "", label: "")
        if secret {
            version.secret = "\(Self.secretPrefix)\(seed)-\(item)-v\(nextVersion)-\(UUID().uuidString.prefix(6))"
        }
        if label { version.label = "crash-label-\(item)-v\(nextVersion)" }
        return version
    }

    /// Runs one operation through the CLI; with `kill`, SIGKILLs the daemon while it runs.
    private func perform(_ operation: Operation, kill: Bool) throws {
        operations[operation, default: 0] += 1
        var arguments: [String]
        var input: String
        let account: String?
        // What the model becomes if the operation happened, and if it did not.
        var applied: Set<Version?> = []
        var notApplied: Set<Version?> = []
        var newPasscode: String?
        switch operation {
        case .add:
            nextItem += 1
            let name = "item-\(nextItem)"
            let version = newVersion(item: nextItem, from: nil, secret: true, label: true)
            account = name
            arguments = ["item", "add", "--service", Self.service, "--account", name, "--label", version.label, "--secret-stdin"]
            input = version.secret + "\n"
            applied = [version]
            notApplied = [nil]
        case .updateSecret, .updateLabel, .updateBoth:
            let name = liveAccounts.randomElement(using: &rng)!
            let old = items[name]!.first!!
            let number = Int(name.dropFirst("item-".count))!
            let version = newVersion(
                item: number, from: old, secret: operation != .updateLabel, label: operation != .updateSecret)
            account = name
            arguments = ["item", "update", "--service", Self.service, "--account", name]
            input = ""
            if operation != .updateSecret { arguments += ["--set", "label=\(version.label)"] }
            if operation != .updateLabel {
                arguments.append("--secret-stdin")
                input = version.secret + "\n"
            }
            applied = [version]
            notApplied = [old]
        case .delete:
            let name = liveAccounts.randomElement(using: &rng)!
            account = name
            arguments = ["item", "delete", "--service", Self.service, "--account", name]
            input = ""
            applied = [nil]
            notApplied = items[name]!
        case .passcodeChange:
            account = nil
            let current = passcodes[0]
            let new = "\(Self.passcodePrefix)\(seed)-\(nextPasscode)-\(UUID().uuidString.prefix(8))"
            nextPasscode += 1
            harness.secrets.append(new)
            newPasscode = new
            arguments = ["passcode", "change", "--passcode-stdin"]
            input = "\(current)\n\(new)\n\(new)\n"
        }
        arguments.append("--json")
        if let account { touched.insert(account) }

        let began = Date()
        let result = kill ? try runKillingTheDaemon(arguments, input: input, operation: operation) : try tresor(arguments, input: input)
        let elapsed = Date().timeIntervalSince(began)
        if result.succeeded {
            durations[operation, default: []].append(elapsed)
            if kill { killedAcknowledged[operation, default: 0] += 1 }
            if let account { items[account] = applied }
            if let newPasscode { passcodes = [newPasscode] }
            if operation == .delete && !result.stdout.contains("\"count\" : 1") {
                throw violation("delete of \(account!) acknowledged with \(result.stdout), expected a count of 1")
            }
            if operation != .add && operation != .delete && operation != .passcodeChange && !result.stdout.contains("\"count\" : 1") {
                throw violation("\(operation) of \(account!) acknowledged with \(result.stdout), expected a count of 1")
            }
            return
        }
        guard kill else {
            throw violation("\(operation) failed with no kill: \(result.stdout)\(result.stderr)")
        }
        killedFailed[operation, default: 0] += 1
        // The daemon died: the CLI must report a lost connection, never a keychain answer.
        let error = try? APICoding.decoder.decode(ErrorResponse.self, from: Data(result.stdout.utf8)).error
        guard let error, error.code == .internal, error.message.contains("tresord") else {
            throw violation("\(operation) killed: expected a connection failure, got \(result.stdout)\(result.stderr)")
        }
        failureMessages[Self.category(error.message), default: 0] += 1
        if let account {
            items[account] = applied.union(notApplied)
            pending = (account, applied)
        }
        if let newPasscode { passcodes = [passcodes[0], newPasscode] }
    }

    private static func category(_ message: String) -> String {
        message.replacingOccurrences(of: #"/[^ ;]*"#, with: "…", options: .regularExpression)
    }

    /// Starts the CLI, SIGKILLs the daemon after a random delay, waits for the CLI to end.
    ///
    /// Half of the kills come 0–30 ms (uniform) after the CLI started: it needs ~20 ms to load,
    /// so these mostly hit before or as it connects. The other half come 0–30 ms after the daemon
    /// accepted the CLI's connection — the request in flight — skewed towards the first
    /// milliseconds, since an item request takes only a few; for a passcode change (two PBKDF2
    /// runs) anywhere within 1.25 × the time such a change takes.
    private func runKillingTheDaemon(_ arguments: [String], input: String, operation: Operation) throws -> Harness.Result {
        let afterConnect = Bool.random(using: &rng)
        var delay = Double.random(in: 0...0.030, using: &rng)
        if afterConnect {
            // An item request is served in a few milliseconds: favour the first ones (u³ × 30 ms).
            delay = 0.030 * pow(Double.random(in: 0...1, using: &rng), 3)
            if operation == .passcodeChange, let measured = durations[operation]?.sorted(), !measured.isEmpty {
                delay = Double.random(in: 0...max(0.030, measured[measured.count / 2] * 1.25), using: &rng)
            }
        }

        let process = Process()
        process.executableURL = cli
        process.arguments = arguments
        process.environment = cliEnvironment
        let stdout = Pipe(), stderr = Pipe(), stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        let daemonPID = daemon.pid
        let before = Self.sockets(of: daemonPID)
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        var connected = false
        if afterConnect {
            // Wait until the daemon has accepted the CLI's connection.
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning && Date() < deadline && !connected {
                connected = !Self.sockets(of: daemonPID).subtracting(before).isEmpty
                if !connected { usleep(200) }
            }
            if connected { connectedKills += 1 }
        }
        usleep(useconds_t(delay * 1_000_000))
        daemon.kill()
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline { usleep(2_000) }
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw violation("\(arguments.prefix(2).joined(separator: " ")) still ran 60 s after the daemon was killed")
        }
        let out = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let err = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        killedTranscript.append(
            "$ tresor \(arguments.joined(separator: " ")) [daemon killed \(String(format: "%.1f", delay * 1000)) ms after \(connected ? "connect" : "start")]\n\(out)\(err)")
        return Harness.Result(status: process.terminationStatus, stdout: out, stderr: err)
    }

    /// The sockets process `pid` has open (`socket:[inode]`): a new one in the daemon's table
    /// is an accepted connection.
    private static func sockets(of pid: Int32) -> Set<String> {
        let folder = "/proc/\(pid)/fd"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        return Set(entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0) }
            .filter { $0.hasPrefix("socket:") })
    }

    // MARK: Checking after a restart

    private func verifyAfterRestart() throws {
        let status = try decode(DaemonStatus.self, try tresor(["status", "--json"]))
        guard status.pid == daemon.pid else { throw violation("the daemon answering is pid \(status.pid), not ours (\(daemon.pid))") }
        guard status.keybag == .lockedSinceStart else { throw violation("after restart the keybag is \(status.keybag), not locked since start") }
        guard status.problem == nil else { throw violation("after restart the daemon reports a problem: \(status.problem!)") }
        try unlockResolvingThePasscode()

        let listed = try findAll(showSecrets: false)
        let revealed = try findAll(showSecrets: true)
        guard Set(listed.map(\.id)) == Set(revealed.map(\.id)) else {
            throw violation("find and find --show-secrets list different items: \(listed.map(\.id)) vs \(revealed.map(\.id))")
        }
        let labels = Dictionary(listed.map { ($0.id, $0.attributes?.label) }, uniquingKeysWith: { first, _ in first })
        var observed: [String: Version] = [:]
        for item in revealed {
            guard let attributes = item.attributes, attributes.service == Self.service, let account = attributes.account,
                  let possible = items[account]
            else { throw violation("orphan item \(item.id) (\(item.attributes?.account ?? "no account")) is not in the model") }
            guard observed[account] == nil else { throw violation("two items for \(account)") }
            guard attributes.accessGroup == "tresor" else { throw violation("\(account) is in group \(attributes.accessGroup ?? "none")") }
            guard let secret = item.secret else { throw violation("\(account): find --show-secrets returned no secret") }
            let version = Version(secret: String(decoding: secret, as: UTF8.self), label: attributes.label ?? "")
            guard labels[item.id] == attributes.label else { throw violation("\(account): the two listings disagree on the label") }
            guard possible.contains(version) else {
                throw violation("\(account) is \(version); the model allows only \(possible.map { $0?.description ?? "absent" })")
            }
            observed[account] = version
        }
        for (account, possible) in items where observed[account] == nil {
            guard possible.contains(nil) else {
                throw violation("\(account) is missing; acknowledged as \(possible.map { $0?.description ?? "absent" })")
            }
        }
        // Rows the listing cannot show (metadata that does not open is skipped by a search) are
        // orphans too: count the raw rows, and check the file's integrity, with sqlite3 if present.
        if let sqlite = Self.sqlite {
            let database = harness.paths.home.appendingPathComponent("login.keychain.db").path
            let raw = try harness.run(sqlite, ["-readonly", database, "PRAGMA integrity_check; SELECT count(*) FROM genp;"])
            sqliteChecks += 1
            guard raw.succeeded, raw.stdout == "ok\n\(observed.count)\n" else {
                throw violation("the keychain file holds \(raw.stdout.split(separator: "\n")) (integrity, genp rows), "
                                + "the CLI lists \(observed.count) items \(raw.stderr)")
            }
        }
        // Each item changed since the last check, and a few others, readable on its own with the
        // right secret (find --show-secrets above already opened every one).
        let others = observed.keys.filter { !touched.contains($0) }.sorted().shuffled(using: &rng).prefix(3)
        let sample = Set(others).union(touched)
        touched = []
        for (account, version) in observed.sorted(by: { $0.key < $1.key }) where sample.contains(account) {
            let get = try tresor(["item", "get", "--service", Self.service, "--account", account])
            itemGets += 1
            guard get.succeeded, get.stdout == version.secret else {
                throw violation("item get \(account): status \(get.status), \(get.stderr)")
            }
        }
        // Items that were uncertain and turned out absent really are absent.
        for (account, possible) in items where observed[account] == nil && possible.count > 1 {
            let get = try tresor(["item", "get", "--service", Self.service, "--account", account])
            guard !get.succeeded, get.stderr.contains("-25300") else {
                throw violation("\(account) is not listed but item get says: \(get.status) \(get.stdout)\(get.stderr)")
            }
        }
        // The model now knows the state exactly.
        if let (account, applied) = pending {
            if applied.contains(observed[account]) { unacknowledgedApplied += 1 } else { unacknowledgedNotApplied += 1 }
            pending = nil
        }
        for account in Array(items.keys) {
            items[account] = observed[account].map { version -> Set<Version?> in [version] }
        }
    }

    /// After an unacknowledged passcode change exactly one of the two passcodes opens the keybag.
    private func unlockResolvingThePasscode() throws {
        if passcodes.count == 1 {
            let result = try tresor(["unlock", "--passcode-stdin", "--json"], input: passcodes[0] + "\n")
            guard result.succeeded else { throw violation("the acknowledged passcode no longer unlocks: \(result.stdout)") }
            return
        }
        let order = passcodes.shuffled(using: &rng)
        let first = try tresor(["unlock", "--passcode-stdin", "--json"], input: order[0] + "\n")
        let working: String
        if first.succeeded {
            // Check the other one fails too.
            guard try tresor(["lock"]).succeeded else { throw violation("lock failed") }
            let other = try tresor(["unlock", "--passcode-stdin", "--json"], input: order[1] + "\n")
            guard !other.succeeded, try decode(ErrorResponse.self, other).error.code == .authFailed else {
                throw violation("after an interrupted passcode change both the old and the new passcode unlock (\(other.stdout))")
            }
            let again = try tresor(["unlock", "--passcode-stdin", "--json"], input: order[0] + "\n")
            guard again.succeeded else { throw violation("the working passcode stopped working: \(again.stdout)") }
            working = order[0]
        } else {
            guard try decode(ErrorResponse.self, first).error.code == .authFailed else {
                throw violation("unlock after an interrupted passcode change: \(first.stdout)")
            }
            let second = try tresor(["unlock", "--passcode-stdin", "--json"], input: order[1] + "\n")
            guard second.succeeded else {
                throw violation("after an interrupted passcode change neither the old nor the new passcode unlocks (\(second.stdout))")
            }
            working = order[1]
        }
        if working == passcodes[1] { unacknowledgedApplied += 1 } else { unacknowledgedNotApplied += 1 }
        passcodes = [working]
    }

    private func findAll(showSecrets: Bool) throws -> [KeychainItem] {
        let result = try tresor(["item", "find", "--json"] + (showSecrets ? ["--show-secrets"] : []))
        if result.succeeded { return try decode([KeychainItem].self, result) }
        let error = try decode(ErrorResponse.self, result).error
        guard error.code == .itemNotFound else {
            throw violation("item find\(showSecrets ? " --show-secrets" : ""): \(error.code.rawValue): \(error.message)")
        }
        return []
    }

    // MARK: Helpers

    private func tresor(_ arguments: [String], input: String? = nil) throws -> Harness.Result {
        try harness.run(cli, arguments, input: input, environment: cliEnvironment)
    }

    private func decode<T: Decodable>(_ type: T.Type, _ result: Harness.Result) throws -> T {
        do {
            return try APICoding.decoder.decode(T.self, from: Data(result.stdout.utf8))
        } catch {
            throw violation("cannot decode \(T.self) from: \(result.stdout)\(result.stderr)")
        }
    }

    private func violation(_ message: String) -> CrashInvariantViolation {
        CrashInvariantViolation(description: "seed \(seed), kill \(cycle): \(message)")
    }

    /// `.<name>.tmp-<pid>` files: what `SecureFiles.writeAtomically` leaves when interrupted.
    func temporaryFilesInHome() throws -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: harness.paths.home.path)
        var found: [String] = []
        while let path = enumerator?.nextObject() as? String {
            let name = (path as NSString).lastPathComponent
            if name.hasPrefix("."), name.contains(".tmp-") { found.append(path) }
        }
        return found
    }

    var summary: String {
        func list(_ counts: [Operation: Int]) -> String {
            Operation.allCases.compactMap { operation in counts[operation].map { "\(operation.rawValue) \($0)" } }.joined(separator: ", ")
        }
        let total = operations.values.reduce(0, +)
        return """
            CrashConsistencyTests summary (seed \(seed)): \(restarts) kills survived, \(total) operations \
            in \(String(format: "%.1f", Date().timeIntervalSince(started))) s
              operations: \(list(operations))
              killed and still acknowledged: \(list(killedAcknowledged))
              killed and failed: \(list(killedFailed))
              unacknowledged outcomes found after restart: applied \(unacknowledgedApplied), not applied \(unacknowledgedNotApplied)
              failures of killed commands: \(failureMessages.sorted { $0.key < $1.key }.map { "\($0.value)× \($0.key)" }.joined(separator: "; "))
              kills timed from the CLI's connection: \(connectedKills); item gets checked: \(itemGets); raw row counts checked: \(sqliteChecks)
            \(ProcessInfo.processInfo.environment["TRESOR_CRASH_DEBUG"] != nil ? killedTranscript.joined(separator: "\n") : "")
            """
    }
}

/// `tresord` for a harness's home, started and killed as `Harness.startDaemon` / `killDaemon`
/// do (trace-level log appended to the home's daemon log) — but waiting for its socket with a
/// plain `connect`, not with `TresorClient.connect`.
///
/// A `TresorClient.connect` that finds no daemon closes its socket twice (once in
/// `UnixSocketHTTP.init`, once more in its `deinit`): in this multi-threaded test runner, the
/// second `close` can hit a descriptor another test has just opened. Waiting for a restart that
/// way after every kill made that happen, so these tests do not. They leave the daemon running
/// at the end: `Harness.deinit` then reaches it, and stops it, with a connection that succeeds.
final class TestDaemon {
    let harness: Harness
    private var process: Process?

    init(_ harness: Harness) {
        self.harness = harness
    }

    var pid: Int32 { process?.processIdentifier ?? 0 }

    func start() throws {
        let paths = harness.paths
        try SecureFiles.createDirectory(paths.daemonLog.deletingLastPathComponent())
        if !FileManager.default.fileExists(atPath: paths.daemonLog.path) {
            FileManager.default.createFile(atPath: paths.daemonLog.path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        let log = try FileHandle(forWritingTo: paths.daemonLog)
        log.seekToEndOfFile()
        let process = Process()
        process.executableURL = Harness.binaries.appendingPathComponent("tresord")
        process.arguments = ["--home", paths.home.path, "--log-level", "trace"]
        process.environment = harness.environment
        process.standardOutput = log
        process.standardError = log
        try process.run()
        try log.close()
        self.process = process
        let deadline = Date().addingTimeInterval(15)
        while !Self.answers(socket: paths.socket.path) {
            guard process.isRunning, Date() < deadline else { throw HarnessError.daemonDidNotStart(harness.daemonLog) }
            usleep(20_000)
        }
    }

    /// SIGKILL: no chance to clean up, as in a crash.
    func kill() {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    /// Whether something listens on `path`; the socket is closed exactly once.
    static func answers(socket path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return result == 0
    }
}
