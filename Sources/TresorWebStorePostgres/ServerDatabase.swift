import Foundation
import Logging
import PostgresNIO
import Synchronization
import TresorNotesDomain
import TresorWebStore

/// The server's connection pool, and the one way its stores talk to PostgreSQL: each step in
/// a transaction of its own (or one statement), within a deadline, with PostgreSQL's failures
/// turned into ``NotesError``s — a database that went away is ``NotesError/unavailable(_:)``
/// (`503`), and whatever the step changed was rolled back with its transaction.
public final class ServerDatabase: Sendable {
    let client: PostgresClient
    public let logger: Logger
    /// How long one step may wait for the database (for a connection, then for its answers).
    let timeout: Duration

    init(client: PostgresClient, timeout: Duration, logger: Logger) {
        self.client = client
        self.timeout = timeout
        self.logger = logger
    }

    /// Runs `body` on a connection of the pool, outside a transaction (reads of one statement).
    public func read<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await withinDeadline {
            try await self.client.withConnection { connection in try await body(connection) }
        }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws. A
    /// deadlock PostgreSQL broke is tried again (twice at most).
    public func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await withinDeadline {
                    try await self.client.withConnection { connection in
                        try await connection.query("BEGIN", logger: self.logger)
                        do {
                            let value = try await body(connection)
                            // Past the deadline the caller was told `unavailable`: never commit after that.
                            try Task.checkCancellation()
                            try await connection.query("COMMIT", logger: self.logger)
                            return value
                        } catch {
                            _ = try? await connection.query("ROLLBACK", logger: self.logger)
                            throw error
                        }
                    }
                }
            } catch let error as ServerDatabaseError where error.isRetryable && attempt < 3 {
                continue
            }
        }
    }

    /// `body` within ``timeout``, its failures in Tresor's words. The deadline holds even when
    /// the pool does not heed cancellation (it keeps trying to connect to a database that is
    /// gone): the caller gets `unavailable` at the deadline, and `body`, cancelled, ends on its
    /// own — a transaction it had begun commits whole or not at all.
    private func withinDeadline<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let timeout = self.timeout
        let race = DeadlineRace<T>()
        let work = Task {
            do { race.finish(.success(try await body())) } catch { race.finish(.failure(error)) }
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            race.finish(.failure(NotesError.unavailable("the database did not answer within \(timeout.components.seconds) s: try again shortly")))
        }
        defer {
            timer.cancel()
            work.cancel()
        }
        do {
            return try await withTaskCancellationHandler {
                try await race.value()
            } onCancel: {
                race.finish(.failure(CancellationError()))
            }
        } catch {
            throw Self.translated(error)
        }
    }

    /// PostgreSQL's failures in Tresor's words: a lost or refused connection, a server shutting
    /// down or out of connections is `unavailable`; anything else names its SQLSTATE only (a
    /// server's message or detail may quote stored values).
    static func translated(_ error: any Error) -> any Error {
        switch error {
        case is NotesError, is ServerDatabaseError, is ServerSetupError: return error
        case is CancellationError: return NotesError.unavailable("the database did not answer in time: try again shortly")
        case let error as PSQLError:
            guard error.code == .server, let state = error.serverInfo?[.sqlState] else {
                return NotesError.unavailable("the database cannot be reached just now (\(error.code)): try again shortly")
            }
            // 08: connection exception; 53: insufficient resources; 57P01–03: shutting down.
            if state.hasPrefix("08") || state.hasPrefix("53") || ["57P01", "57P02", "57P03"].contains(state) {
                return NotesError.unavailable("the database cannot serve just now (SQLSTATE \(state)): try again shortly")
            }
            // 22021: a value PostgreSQL's text cannot hold (a NUL byte, bytes that are not UTF-8) — the
            // request's input, not the server's fault.
            if state == "22021" {
                return NotesError.invalid("text may not contain a NUL byte or bytes that are not UTF-8")
            }
            return ServerDatabaseError(sqlState: state)
        default:
            return error
        }
    }
}

/// The first of a step's outcome and its deadline, handed to the one waiting for it.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var result: Result<T, any Error>?
        var waiting: CheckedContinuation<T, any Error>?
    }

    private let state = Mutex(State())

    /// Settles the race (later calls change nothing).
    func finish(_ result: Result<T, any Error>) {
        let waiting: CheckedContinuation<T, any Error>? = state.withLock { state in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume(with: result)
    }

    /// The outcome, once settled.
    func value() async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let settled: Result<T, any Error>? = state.withLock { state in
                if let result = state.result { return result }
                state.waiting = continuation
                return nil
            }
            if let settled { continuation.resume(with: settled) }
        }
    }
}

/// A statement PostgreSQL refused, named by its SQLSTATE alone.
public struct ServerDatabaseError: Error, CustomStringConvertible {
    public var sqlState: String

    /// A unique constraint was violated (a name taken meanwhile).
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// A deadlock or serialization failure: the same step may simply run again.
    public var isRetryable: Bool { sqlState == "40P01" || sqlState == "40001" }

    public var description: String { "the database refused a statement (SQLSTATE \(sqlState))" }
}

extension PostgresConnection {
    /// Rows of `query`, each decoded as `T` (a tuple of columns).
    public func rows<each Column: PostgresDecodable>(_ query: PostgresQuery, _ logger: Logger, as type: (repeat each Column).Type) async throws
        -> [(repeat each Column)]
    {
        var decoded: [(repeat each Column)] = []
        for try await row in try await self.query(query, logger: logger) {
            decoded.append(try row.decode(type))
        }
        return decoded
    }

    /// The first row of `query` decoded as `T`, or nil.
    public func row<each Column: PostgresDecodable>(_ query: PostgresQuery, _ logger: Logger, as type: (repeat each Column).Type) async throws
        -> (repeat each Column)?
    {
        for try await row in try await self.query(query, logger: logger) {
            return try row.decode(type)
        }
        return nil
    }

    /// The first column of each row of `query`, decoded as `T`.
    public func column<T: PostgresDecodable>(_ query: PostgresQuery, _ logger: Logger, as type: T.Type) async throws -> [T] {
        var decoded: [T] = []
        for try await row in try await self.query(query, logger: logger) {
            decoded.append(try row.decode(T.self))
        }
        return decoded
    }

    /// The first column of the first row of `query` decoded as `T`, or nil when there is no row.
    public func value<T: PostgresDecodable>(_ query: PostgresQuery, _ logger: Logger, as type: T.Type) async throws -> T? {
        for try await row in try await self.query(query, logger: logger) {
            return try row.decode(T.self)
        }
        return nil
    }

    /// Runs a statement (its rows, if any, are read and dropped).
    public func run(_ query: PostgresQuery, _ logger: Logger) async throws {
        for try await _ in try await self.query(query, logger: logger) {}
    }

    /// How many rows `query` returns (`… RETURNING 1` counts what a statement changed).
    public func count(_ query: PostgresQuery, _ logger: Logger) async throws -> Int {
        var count = 0
        for try await _ in try await self.query(query, logger: logger) { count += 1 }
        return count
    }
}
