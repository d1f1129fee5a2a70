import Foundation
import Synchronization
import Testing
import TresorKit
import TresorSystem
import TresorTestSupport

/// TresorKit's `async` surface: one `Keychain` shared by many tasks, and calls that wait for
/// the daemon without holding Swift concurrency's threads.
@Suite struct TresorKitAsyncTests {
    @Test func manyTasksShareOneKeychain() async throws {
        // No auto-lock: the tasks share the test process's cooperative threads with every
        // other suite, and once waited longer than the 300 s idle period for their turn.
        let daemon = try TresordFixture(passcode: "async-passcode", daemonArguments: ["--auto-lock", "0"])
        try daemon.register(id: "TESTA.async", team: "TESTA")
        let keychain = try daemon.keychain()
        // One request first, so the daemon hashes the (large) test runner once rather than once per task.
        _ = try TresorClient.connect(paths: daemon.paths, startDaemon: false).status()

        // Each task its own item: a mix-up between overlapping calls shows as a wrong secret.
        let read = try await withThrowingTaskGroup(of: (Int, Data).self) { group in
            for n in 0..<48 {
                group.addTask {
                    let item = ItemQuery.genericPassword(service: "async.example.com", account: "task-\(n)")
                    try await keychain.add(item, secret: Data("secret-\(n)".utf8))
                    try await keychain.update(item, secret: Data("rotated-\(n)".utf8))
                    return (n, try await keychain.secret(item))
                }
            }
            return try await group.reduce(into: [Int: Data]()) { $0[$1.0] = $1.1 }
        }
        #expect(read.count == 48)
        for (n, secret) in read { #expect(secret == Data("rotated-\(n)".utf8)) }
        let listed = try await keychain.attributes(.genericPassword(service: "async.example.com"))
        #expect(listed.count == 48)
        #expect(try await keychain.delete(.genericPassword(service: "async.example.com")) == 48)
        withExtendedLifetime(daemon) {}
    }

    /// Calls to a daemon that never answers are outstanding on more tasks than Swift
    /// concurrency has threads; other tasks still run meanwhile. Had the calls blocked those
    /// threads, nothing else would run until the calls gave up (60 s). Other suites' tests
    /// share these threads, so nothing here depends on how soon the other tasks run — only on
    /// their running while the calls still wait, which ends when the listener goes.
    @Test func waitingCallsLeaveConcurrencyThreadsFree() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tresorkit-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: root) }
        let paths = TresorPaths(environment: [
            "TRESOR_HOME": root.appendingPathComponent("home").path, "XDG_RUNTIME_DIR": root.appendingPathComponent("run").path,
        ])
        let listener = try NeverAnsweringListener(at: paths.socket)
        defer { listener.close() }
        let keychain = Keychain(client: try TresorClient.connect(paths: paths, startDaemon: false, timeout: .seconds(60)))
        let events = EventLog()
        let waiting = ProcessInfo.processInfo.activeProcessorCount * 4

        try await withThrowingTaskGroup(of: Void.self) { stalled in
            for _ in 0..<waiting {
                stalled.addTask {
                    events.append("calling")
                    _ = try? await keychain.secret(.genericPassword(service: "stalled.example.com"))
                    events.append("call ended")
                }
            }
            // Every call is under way before the other tasks start.
            while events.entries.filter({ $0 == "calling" }).count < waiting { try await Task.sleep(for: .milliseconds(10)) }
            try await withThrowingTaskGroup(of: Void.self) { others in
                for _ in 0..<32 {
                    others.addTask {
                        await Task.yield()
                        events.append("ran")
                    }
                }
                try await others.waitForAll()
            }
            listener.close()  // the calls end now: their connections are reset
            try await stalled.waitForAll()
        }
        let order = events.entries
        #expect(order.filter { $0 == "ran" }.count == 32)
        #expect(order.filter { $0 == "call ended" }.count == waiting)
        let firstEnd = try #require(order.firstIndex(of: "call ended"))
        #expect(order[..<firstEnd].filter { $0 == "ran" }.count == 32, "every other task ran while the calls still waited")
    }
}
