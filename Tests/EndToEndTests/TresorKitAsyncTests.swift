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
        try harness.startDaemon()
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
    /// threads, nothing else would run until the calls timed out.
    @Test func waitingCallsLeaveConcurrencyThreadsFree() async throws {
        let harness = try Harness()
        let listener = try NeverAnsweringListener(at: harness.paths.socket)
        defer { listener.close() }
        let keychain = Keychain(client: try TresorClient.connect(paths: harness.paths, startDaemon: false, timeout: .seconds(3)))
        let events = EventLog()

        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<(ProcessInfo.processInfo.activeProcessorCount * 4) {
                group.addTask {
                    await #expect(throws: TresorClientError.daemonNotAnswering(seconds: 3)) {
                        try await keychain.secret(.genericPassword(service: "stalled.example.com"))
                    }
                    events.append("timed out")
                }
            }
            for _ in 0..<32 {
                group.addTask {
                    await Task.yield()
                    events.append("ran")
                }
            }
            try await group.waitForAll()
        }
        let order = events.entries
        let firstTimeout = try #require(order.firstIndex(of: "timed out"))
        #expect(order.filter { $0 == "ran" }.count == 32)
        #expect(order[..<firstTimeout].filter { $0 == "ran" }.count == 32, "every other task ran before a waiting call gave up")
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
struct NeverAnsweringListener {
    let descriptor: Int32

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

    func close() { Glibc.close(descriptor) }
}
