import Foundation
import Synchronization
import TresorWebStore

/// The embedded daemon's sign-in and registration counters, in its memory (one process serves
/// the home: a lock makes each update atomic).
public final class MemoryThrottleStore: WebThrottleStore {
    /// Counters kept at most; the stalest go first (a flood of made-up names must not grow
    /// memory without bound).
    public static let capacity = 10_000

    private let counters = Mutex<[ThrottleKey: ThrottleCounter]>([:])

    public init() {}

    public func update<T: Sendable>(_ keys: [ThrottleKey], _ body: @escaping @Sendable (inout [ThrottleKey: ThrottleCounter]) -> T) async throws -> T
    {
        counters.withLock { counters in
            var selected: [ThrottleKey: ThrottleCounter] = [:]
            for key in keys { selected[key] = counters[key] }
            let result = body(&selected)
            for key in keys {
                if let counter = selected[key] {
                    let isNew = counters[key] == nil
                    if isNew, counters.count >= Self.capacity, let stalest = Self.stalest(counters, table: key.table) {
                        counters[stalest] = nil
                    }
                    counters[key] = counter
                } else {
                    counters[key] = nil
                }
            }
            return result
        }
    }

    public func removeQuiet(before: Date) async throws {
        counters.withLock { counters in counters = counters.filter { $0.value.last >= before } }
    }

    private static func stalest(_ counters: [ThrottleKey: ThrottleCounter], table: ThrottleKey.Table) -> ThrottleKey? {
        counters.filter { $0.key.table == table }.min(by: { $0.value.last < $1.value.last })?.key
    }
}
