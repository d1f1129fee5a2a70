import Dispatch
import Synchronization

/// Connections to one daemon for calls that may overlap: a call takes an idle connection, or
/// opens one when all are busy, and gives it back. The daemon answers one request at a time
/// per connection, so overlapping calls on one connection would wait for each other. At most
/// ``mostOpen`` calls run at once; more wait for one to finish, since the daemon answers a
/// process over its share of connections `503 unavailable` (docs/API.md, "Connections").
final class ConnectionPool: Sendable {
    private let first: TresorClient
    private let idle: Mutex<[TresorClient]>
    /// Idle connections kept beyond this many are closed: each holds a descriptor in the daemon.
    private static let keptIdle = 8
    /// Calls on their own connection at once: well within the daemon's share for one process
    /// (64), with room for the process's other clients.
    static let mostOpen = 16
    private let running = DispatchSemaphore(value: mostOpen)

    init(_ first: TresorClient) {
        self.first = first
        idle = Mutex([first])
    }

    /// Runs `body` on a connection no other call is using. A connection that failed (the
    /// daemon stopped, a timeout) is not used again.
    func use<Result>(_ body: (TresorClient) throws -> Result) throws -> Result {
        running.wait()
        defer { running.signal() }
        let client = try idle.withLock { $0.popLast() } ?? TresorClient.connect(paths: first.paths, startDaemon: false, timeout: first.timeout)
        var healthy = true
        defer {
            if healthy { idle.withLock { if $0.count < Self.keptIdle { $0.append(client) } } }
        }
        do {
            return try body(client)
        } catch let error as TresorClientError {
            healthy = false
            throw error
        }
    }
}
