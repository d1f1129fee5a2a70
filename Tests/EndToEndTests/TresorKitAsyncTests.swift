import Foundation
import Synchronization
import Testing
import TresorKit

/// TresorKit's `async` surface: one `Keychain` shared by many tasks, and calls that wait for
/// the daemon without holding Swift concurrency's threads.
@Suite struct TresorKitAsyncTests {
    @Test func manyTasksShareOneKeychain() async throws {
        let harness = try Harness()
        let passcode = "async-passcode"
        // No auto-lock: the tasks share the test process's two cooperative threads with every
        // other suite, and once waited longer than the 300 s idle period for their turn.
        try harness.startDaemon(extraArguments: ["--auto-lock", "0"])
        try #require(try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n").succeeded)
        try harness.registerTestRunner(id: "TESTA.async", team: "TESTA", passcode: passcode)
        let keychain = Keychain(client: try TresorKitClient.connect(harness))

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
        withExtendedLifetime(harness) {}
    }

    /// Calls to a daemon that never answers are outstanding on more tasks than Swift
    /// concurrency has threads; other tasks still run meanwhile. Had the calls blocked those
    /// threads, nothing else would run until the calls gave up (60 s). Other suites' tests
    /// share these threads, so nothing here depends on how soon the other tasks run — only on
    /// their running while the calls still wait, which ends when the listener goes.
    @Test func waitingCallsLeaveConcurrencyThreadsFree() async throws {
        let harness = try Harness()
        let listener = try NeverAnsweringListener(at: harness.paths.socket)
        defer { listener.close() }
        let keychain = Keychain(client: try TresorClient.connect(paths: harness.paths, startDaemon: false, timeout: .seconds(60)))
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
        withExtendedLifetime(harness) {}
    }
}

/// What happened, in the order it happened, from any task.
final class EventLog: Sendable {
    private let events = Mutex<[String]>([])
    func append(_ event: String) { events.withLock { $0.append(event) } }
    var entries: [String] { events.withLock { $0 } }
}

/// A Unix socket that takes connections into its backlog and never accepts or answers them.
/// Closing it resets the connections waiting there.
final class NeverAnsweringListener: Sendable {
    let descriptor: Int32
    private let closed = Mutex(false)

    init(at socketURL: URL) throws {
        try FileManager.default.createDirectory(at: socketURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(socketURL.path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0 && listen(descriptor, 128) == 0)
    }

    /// Closes the socket once, however often it is called: a second close could hit a
    /// descriptor another thread has been given since.
    func close() {
        let first = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        if first { Glibc.close(descriptor) }
    }
}
