import Foundation
import Logging
import Synchronization
import TresorNotes
import TresorTestSupport
import TresorWebStore
import TresorWebStorePostgres
import TresorWebStoreSQLite

/// One backend's sessions, counters, invites, password-reset codes and events, made fresh for one check.
struct WebStores: Sendable {
    var sessions: any WebSessionStore
    var throttles: any WebThrottleStore
    var invites: any WebInviteStore
    var passwordResets: any WebInviteStore
    var events: any WebEventBus
    /// Releases the backend (closes the database's pool).
    var close: @Sendable () async -> Void
}

/// How the conformance checks make stores: the embedded backend's, or a server's on a fresh
/// PostgreSQL database.
enum Backend: String, Sendable, CustomStringConvertible {
    case embedded, postgres

    var description: String { rawValue }

    /// Lifetimes short enough for the checks to pass them by moving `now` on.
    static let lifetimes = SessionLifetimes(sessionSeconds: 3600, idleSeconds: 600, secureSessionSeconds: 60)

    /// Fresh stores of this backend.
    /// - Returns: the stores.
    /// - Throws: when PostgreSQL cannot be started or reached.
    func makeStores() async throws -> WebStores {
        switch self {
        case .embedded:
            return WebStores(
                sessions: MemorySessionStore(lifetimes: Self.lifetimes), throttles: MemoryThrottleStore(), invites: MemoryInviteStore(.registration),
                passwordResets: MemoryInviteStore(.passwordReset), events: LocalEventBus(feed: NoteChangeFeed()), close: {})
        case .postgres:
            let listening = Locked(false)
            let storage = try await ServerStorageFixture.open(url: try await TestPostgres.freshDatabase()) { listening.withLock { $0 = true } }
            // Events published before the listening connection listens would not come back.
            try await waitUntil("the store to listen for changes") { listening.withLock { $0 } }
            return WebStores(
                sessions: storage.sessions, throttles: storage.throttles, invites: storage.invites,
                passwordResets: storage.passwordResets, events: storage.events,
                close: { await storage.close() })
        }
    }
}

/// Opening a server's storage the way the tests do.
enum ServerStorageFixture {
    /// A server key the tests share (every instance of a server has the same one).
    static let key = try! ServerKey(bytes: Data(repeating: 0x5a, count: 32))

    /// Opens the storage of the database `url` names. The default deadline is generous: the
    /// test process runs many suites at once on two cores, and a starved step is not the
    /// database's fault.
    /// - Parameters:
    ///   - url: the database.
    ///   - key: the server key.
    ///   - listening: called each time the events connection listens.
    ///   - clock: the time the notes store reads.
    /// - Returns: the storage (account passwords hashed with 1,000 rounds, as the embedded
    ///   store's tests do).
    /// - Throws: what opening throws.
    static func open(
        url: String, key: ServerKey = key, timeout: Duration = TestPostgres.stepDeadline, listening: @escaping @Sendable () -> Void = {},
        clock: @escaping @Sendable () -> Date = { Date() }
    ) async throws -> PostgresWebStorage {
        try await PostgresWebStorage.open(
            url: try DatabaseURL(parsing: url), key: key, lifetimes: Backend.lifetimes, timeout: timeout,
            logger: Logger(label: "tresor.tests.server"), listening: listening, passwordRounds: 1_000, clock: clock)
    }
}

/// A value shared by tasks and callbacks of a test (a class, so closures capture it freely).
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    func withLock<T: Sendable>(_ body: (inout sending Value) -> sending T) -> sending T {
        mutex.withLock(body)
    }
}
