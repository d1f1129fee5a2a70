import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// 16 registered clients at once, each on its own connection and thread, running a mixed
/// sequence of keychain operations on their own items through the real daemon: no request may
/// fail and no write may be lost. Latencies are printed, never asserted (the machine is shared).
///
/// `TRESOR_LOAD_OPS=<n>` sets the operations per client (50 by default); `TRESOR_LOAD_SEED`
/// replays a sequence (the seed is printed).
@Suite(.blocksItsThread, .serialized) struct LoadTests {
    static let clients = 16
    static let service = "load.tresor"

    @Test func sixteenConcurrentClientsLoseNoWrite() throws {
        let environment = ProcessInfo.processInfo.environment
        let operationsPerClient = environment["TRESOR_LOAD_OPS"].flatMap { Int($0) } ?? 50
        let seed = environment["TRESOR_LOAD_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
        print("LoadTests: seed \(seed) (replay with TRESOR_LOAD_SEED=\(seed)), \(Self.clients) clients × \(operationsPerClient) operations")

        let passcode = "e2e-load-passcode-\(UUID().uuidString.prefix(8))"
        let harness = try Harness(configuration: #"{"autoLockSeconds": 0}"#)
        harness.secrets = [passcode]
        // Started as Harness.startDaemon does, without its failing connects (see TestDaemon).
        let daemon = TestDaemon(harness)
        try daemon.start()
        try #require(try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n").succeeded)
        // The clients are threads of this test runner: register it as an application.
        try harness.registerTestRunner(id: "TEAML.load", team: "TEAML", passcode: passcode)

        let recorder = LoadRecorder()
        let paths = harness.paths
        let connected = DispatchGroup()
        let finished = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        for index in 0..<Self.clients {
            connected.enter()
            finished.enter()
            let thread = Thread {
                defer { finished.leave() }
                var client = LoadClient(index: index, seed: seed &+ UInt64(index), paths: paths, recorder: recorder)
                do {
                    try client.connect()
                } catch {
                    recorder.fail("client \(index): connect: \(error)")
                    connected.leave()
                    return
                }
                connected.leave()
                start.wait()
                client.run(operations: operationsPerClient)
                recorder.finished(client: index, items: client.items, uncertain: client.uncertain)
            }
            thread.name = "load-client-\(index)"
            thread.start()
        }
        try #require(connected.wait(timeout: .now() + 60) == .success, "the clients did not connect within 60 s")
        let began = Date()
        for _ in 0..<Self.clients { start.signal() }
        let inTime = finished.wait(timeout: .now() + 240) == .success
        let elapsed = Date().timeIntervalSince(began)
        try #require(inTime, "the clients did not finish within 240 s")

        let (errors, expected, uncertain) = recorder.results
        let (latencies, errorCounts) = recorder.report
        print(LoadRecorder.report(latencies, errors: errorCounts, clients: Self.clients, elapsed: elapsed))
        #expect(errors.count == 0, "requests failed; the first: \(errors.prefix(5))")
        #expect(expected.count == Self.clients, "every client reported its items")

        // Every item a client added and did not delete is there, with its secret and label — as
        // the CLI (keychain access, revealing another application's secrets with the passcode) sees it.
        let wanted = expected.values.reduce(into: [String: LoadClient.Expected]()) { $0.merge($1) { first, _ in first } }
        let listed = try harness.tresor(["item", "find", "--service", Self.service, "--json"])
        let attributes = listed.succeeded ? try CLIJSON.decode([KeychainItem].self, from: Data(listed.stdout.utf8)) : []
        let revealed = try harness.tresor(
            ["item", "find", "--service", Self.service, "--show-secrets", "--passcode-stdin", "--json"], input: passcode + "\n")
        #expect(revealed.succeeded || wanted.isEmpty, "\(revealed.stdout)")
        let items = revealed.succeeded ? try CLIJSON.decode([KeychainItem].self, from: Data(revealed.stdout.utf8)) : []
        #expect(attributes.count == items.count, "find lists \(attributes.count) items, find --show-secrets \(items.count)")
        var seen: [String: LoadClient.Expected] = [:]
        for item in items {
            guard let account = item.attributes?.account else {
                Issue.record("item \(item.id) without an account")
                continue
            }
            #expect(seen[account] == nil, "two items for \(account)")
            seen[account] = LoadClient.Expected(
                secret: item.secret.map { String(decoding: $0, as: UTF8.self) } ?? "<none>", label: item.attributes?.label ?? "<none>")
            #expect(item.attributes?.accessGroup == "TEAML.load")
        }
        let lost = wanted.keys.filter { seen[$0] == nil }.sorted()
        let unexpected = seen.keys.filter { wanted[$0] == nil && uncertain[$0] == nil }.sorted()
        let wrong = wanted.filter { seen[$0.key] != nil && seen[$0.key] != $0.value }.keys.sorted()
        #expect(lost.isEmpty, "lost writes: \(lost.prefix(10))")
        #expect(unexpected.isEmpty, "items that should have been deleted: \(unexpected.prefix(10))")
        #expect(wrong.isEmpty, "items with a stale secret or label: \(wrong.prefix(10))")
        // A request that failed must have changed nothing, or — at worst — everything.
        var appliedDespiteError: [String] = []
        for (account, states) in uncertain.sorted(by: { $0.key < $1.key }) {
            let now = seen[account]
            #expect(now == states.before || now == states.after, "\(account) is half-changed after a failed request")
            if now == states.after && now != states.before { appliedDespiteError.append(account) }
        }
        #expect(appliedDespiteError.count == 0, "requests answered with an error were applied all the same: \(appliedDespiteError.prefix(5))…")
        print(
            "LoadTests: the CLI finds \(items.count) items; the clients expect \(wanted.count) (+ \(uncertain.count) left by failed requests): "
                + "\(lost.count) lost, \(wrong.count) stale, \(unexpected.count) undeleted; "
                + "\(appliedDespiteError.count) of \(uncertain.count) failed requests were applied anyway")

        let status = try harness.status()
        #expect(status.keybag == .unlocked)
        #expect(status.pid == daemon.pid, "the daemon that served the load is still the one running")
        try harness.expectNoSecretLeaked()
    }
}

/// The kinds of operation a load client runs.
enum LoadOperation: String, CaseIterable, Sendable {
    case add, getByPrimaryKey, findByLabel, update, delete
}

/// Collects every client's errors, final items and latencies.
final class LoadRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [String] = []
    private var errorCounts: [LoadOperation: Int] = [:]
    private var items: [Int: [String: LoadClient.Expected]] = [:]
    private var uncertain: [String: LoadClient.Uncertain] = [:]
    private var latencies: [LoadOperation: [Double]] = [:]

    func fail(_ message: String, operation: LoadOperation? = nil) {
        lock.withLock {
            errors.append(message)
            if let operation { errorCounts[operation, default: 0] += 1 }
        }
    }

    func record(_ operation: LoadOperation, seconds: Double) {
        lock.withLock { latencies[operation, default: []].append(seconds) }
    }

    func finished(client: Int, items: [String: LoadClient.Expected], uncertain: [String: LoadClient.Uncertain]) {
        lock.withLock {
            self.items[client] = items
            self.uncertain.merge(uncertain) { first, _ in first }
        }
    }

    var results: (errors: [String], items: [Int: [String: LoadClient.Expected]], uncertain: [String: LoadClient.Uncertain]) {
        lock.withLock { (errors, items, uncertain) }
    }

    var report: (latencies: [LoadOperation: [Double]], errors: [LoadOperation: Int]) {
        lock.withLock { (latencies, errorCounts) }
    }

    static func report(_ latencies: [LoadOperation: [Double]], errors: [LoadOperation: Int], clients: Int, elapsed: Double) -> String {
        func percentile(_ sorted: [Double], _ p: Double) -> Double {
            sorted[min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))]
        }
        func ms(_ seconds: Double) -> String { String(format: "%7.1f", seconds * 1000) }
        let total = latencies.values.map(\.count).reduce(0, +) + errors.values.reduce(0, +)
        var lines = [
            String(
                format: "LoadTests: %d operations by %d concurrent clients in %.1f s (%.0f operations/s)",
                total, clients, elapsed, Double(total) / max(elapsed, 0.001)),
            "  operation         count   p50 ms   p99 ms   max ms   errors",
        ]
        for operation in LoadOperation.allCases {
            guard let values = latencies[operation]?.sorted(), !values.isEmpty else { continue }
            lines.append(
                "  " + operation.rawValue.padding(toLength: 16, withPad: " ", startingAt: 0)
                    + String(format: "%6d", values.count) + "  " + ms(percentile(values, 0.5)) + "  "
                    + ms(percentile(values, 0.99)) + "  " + ms(values.last!) + String(format: "   %6d", errors[operation] ?? 0))
        }
        return lines.joined(separator: "\n")
    }
}

/// One client: its own connection, its own items, a seeded sequence of operations.
struct LoadClient {
    struct Expected: Equatable, Sendable {
        var secret: String
        var label: String
    }

    let index: Int
    let paths: TresorPaths
    let recorder: LoadRecorder
    private var rng: SplitMix64Seeded
    private var keychain: Keychain?
    /// The states an item may be in after a request that failed: before it, or after it.
    struct Uncertain: Sendable {
        var before: Expected?
        var after: Expected?
    }

    /// Account → what the keychain must hold for it.
    private(set) var items: [String: Expected] = [:]
    /// Accounts whose last request failed.
    private(set) var uncertain: [String: Uncertain] = [:]
    private var counter = 0

    init(index: Int, seed: UInt64, paths: TresorPaths, recorder: LoadRecorder) {
        self.index = index
        self.paths = paths
        self.recorder = recorder
        rng = SplitMix64Seeded(seed: seed)
    }

    mutating func connect() throws {
        keychain = Keychain(client: try TresorClient.connect(paths: paths, startDaemon: false))
    }

    private mutating func fresh(_ account: String) -> Expected {
        counter += 1
        return Expected(
            secret: "load-secret-\(index)-\(counter)-\(UUID().uuidString.prefix(8))", label: "load-label-\(account)-v\(counter)")
    }

    private func query(_ account: String) -> ItemQuery { .genericPassword(service: LoadTests.service, account: account) }

    mutating func run(operations: Int) {
        guard let keychain else { return }
        for _ in 0..<operations {
            let roll = Int.random(in: 0..<100, using: &rng)
            var operation: LoadOperation
            switch roll {
            case ..<30: operation = .add
            case ..<50: operation = .getByPrimaryKey
            case ..<65: operation = .findByLabel
            case ..<85: operation = .update
            default: operation = .delete
            }
            if items.isEmpty { operation = .add }
            let account = operation == .add ? "client\(index)-item\(counter + 1)" : items.keys.sorted().randomElement(using: &rng)!
            let began = DispatchTime.now().uptimeNanoseconds
            var attempted: Expected?
            do {
                switch operation {
                case .add:
                    let expected = fresh(account)
                    attempted = expected
                    try keychain.add(query(account), secret: Data(expected.secret.utf8)) { $0.label = expected.label }
                    items[account] = expected
                case .getByPrimaryKey:
                    let secret = try keychain.secret(query(account))
                    if secret != Data(items[account]!.secret.utf8) { recorder.fail("client \(index): \(account) has a wrong secret") }
                case .findByLabel:
                    var byLabel = ItemQuery(.genericPassword)
                    byLabel.attributes.label = items[account]!.label
                    let found = try keychain.attributes(byLabel)
                    if found.count != 1 || found.first?.account != account {
                        recorder.fail("client \(index): label of \(account) finds \(found.map { $0.account ?? "?" })")
                    }
                case .update:
                    let expected = fresh(account)
                    attempted = expected
                    var changes = ItemAttributes()
                    changes.label = expected.label
                    let count = try keychain.update(query(account), secret: Data(expected.secret.utf8), changes: changes)
                    if count != 1 { recorder.fail("client \(index): update of \(account) changed \(count) items") }
                    items[account] = expected
                case .delete:
                    let count = try keychain.delete(query(account))
                    if count != 1 { recorder.fail("client \(index): delete of \(account) removed \(count) items") }
                    items[account] = nil
                }
            } catch {
                recorder.fail("client \(index): \(operation.rawValue) \(account): \(error)", operation: operation)
                // The outcome is unknown: the end check accepts either state, and this client
                // leaves the item alone from now on.
                let old = items[account]
                switch operation {
                case .add, .update: uncertain[account] = Uncertain(before: old, after: attempted)
                case .delete: uncertain[account] = Uncertain(before: old, after: nil)
                case .getByPrimaryKey, .findByLabel: break
                }
                if operation != .getByPrimaryKey && operation != .findByLabel { items[account] = nil }
                continue
            }
            recorder.record(operation, seconds: Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9)
        }
    }
}
