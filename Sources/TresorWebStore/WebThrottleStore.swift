import Foundation

/// One counter of the sign-in, registration and sharing limits: failures (or registrations) of
/// one account name, one client address, or one account's shares with names nobody has.
public struct ThrottleKey: Hashable, Sendable, Comparable {
    public enum Table: String, Sendable, Comparable {
        /// Failed sign-ins per account name.
        case name
        /// Failed sign-ins per client address.
        case address
        /// Registrations per client address.
        case registration
        /// Names an account shared a note with that no account has, per sharing account.
        case unknownParticipant

        public static func < (lhs: Table, rhs: Table) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public var table: Table
    public var key: String

    public init(_ table: Table, _ key: String) {
        self.table = table
        self.key = key
    }

    public static func < (lhs: ThrottleKey, rhs: ThrottleKey) -> Bool { (lhs.table, lhs.key) < (rhs.table, rhs.key) }
}

/// A counter's state.
public struct ThrottleCounter: Sendable, Equatable {
    public var count: Int
    public var last: Date
    /// Reserved attempts whose check has not finished: while one runs, the wait runs from now.
    public var inFlight: Int

    public init(count: Int, last: Date, inFlight: Int = 0) {
        self.count = count
        self.last = last
        self.inFlight = inFlight
    }
}

/// Where the limits' counters live: daemon memory for one embedded daemon, the database for a
/// server of several instances (failures split over instances count as one). ``LoginThrottle``
/// holds the rules; a store only reads and writes counters, atomically.
public protocol WebThrottleStore: Sendable {
    /// Reads the counters of `keys`, lets `body` change them (nil: no counter), and writes them
    /// back — one atomic step, however many instances count at once.
    /// - Parameters:
    ///   - keys: the counters concerned.
    ///   - body: the rule; it must not block.
    /// - Returns: what `body` returns.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func update<T: Sendable>(_ keys: [ThrottleKey], _ body: @escaping @Sendable (inout [ThrottleKey: ThrottleCounter]) -> T) async throws -> T

    /// Forgets counters quiet since `before` (they would count from free anyway).
    /// - Parameter before: the cut-off.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func removeQuiet(before: Date) async throws
}
