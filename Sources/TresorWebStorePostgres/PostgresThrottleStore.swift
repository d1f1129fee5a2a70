import Foundation
import PostgresNIO
import TresorWebStore

/// A server's sign-in and registration counters, in its database: failures split over several
/// instances count as one. Each update holds a transaction-scoped advisory lock per counter
/// (taken in a fixed order), so two instances counting the same name at once take turns.
/// `last` is kept in seconds since Foundation's reference date, which give back the very same
/// `Date`: a counter read back a hair later than it was written would make a wait of none one
/// of a second.
final class PostgresThrottleStore: WebThrottleStore {
    private let db: ServerDatabase

    init(db: ServerDatabase) {
        self.db = db
    }

    func update<T: Sendable>(_ keys: [ThrottleKey], _ body: @escaping @Sendable (inout [ThrottleKey: ThrottleCounter]) -> T) async throws -> T {
        let keys = Array(Set(keys)).sorted()
        return try await db.transaction { [logger = db.logger] connection in
            var counters: [ThrottleKey: ThrottleCounter] = [:]
            for key in keys {
                try await connection.run(
                    "SELECT pg_advisory_xact_lock(\(ServerSchema.throttleLockSpace)::integer, hashtext(\(key.table.rawValue + ":" + key.key)))",
                    logger)
                if let (count, last, inFlight) = try await connection.row(
                    "SELECT count, last, in_flight FROM web_throttles WHERE kind = \(key.table.rawValue) AND key = \(key.key)", logger,
                    as: (Int, Double, Int).self)
                {
                    counters[key] = ThrottleCounter(count: count, last: Date(timeIntervalSinceReferenceDate: last), inFlight: inFlight)
                }
            }
            let before = counters
            let result = body(&counters)
            for key in keys where counters[key] != before[key] {
                if let counter = counters[key] {
                    try await connection.run(
                        """
                        INSERT INTO web_throttles (kind, key, count, last, in_flight)
                        VALUES (\(key.table.rawValue), \(key.key), \(counter.count), \(counter.last.timeIntervalSinceReferenceDate), \(counter.inFlight))
                        ON CONFLICT (kind, key) DO UPDATE SET count = EXCLUDED.count, last = EXCLUDED.last, in_flight = EXCLUDED.in_flight
                        """, logger)
                } else {
                    try await connection.run("DELETE FROM web_throttles WHERE kind = \(key.table.rawValue) AND key = \(key.key)", logger)
                }
            }
            return result
        }
    }

    func removeQuiet(before: Date) async throws {
        try await db.read { [logger = db.logger] connection in
            try await connection.run("DELETE FROM web_throttles WHERE last < \(before.timeIntervalSinceReferenceDate)", logger)
        }
    }
}
