import Foundation

/// Login rate limits (docs/WEB.md): failures are counted per account name and per client
/// address. The first `freeFailures` cost nothing; after that each attempt must wait 1 s,
/// 2 s, 4 s … up to 15 minutes after the last failure, and an attempt made earlier is
/// refused before any password is checked. A success clears the name's count (not the
/// address's: one's own account must not reset a guesser's budget); a count is forgotten
/// after 30 quiet minutes.
///
/// An attempt is *reserved* before its password is checked: the check and the count happen
/// in one atomic step of the counters' store, and the attempt counts as a failure until it is
/// known to have succeeded. So a burst of concurrent sign-ins — to one daemon or spread over
/// the instances of a server — checks at most the free number of passwords
/// (docs/SECURITY.md, "Throttles that cannot be raced").
public final class LoginThrottle: Sendable {
    public struct Limit: Sendable {
        public var freeFailures: Int
        public static let perName = Limit(freeFailures: 5)
        /// Looser: one user may mistype several names, and a proxy's clients may share an address.
        public static let perAddress = Limit(freeFailures: 20)
        /// Registrations per address: each costs a 600,000-round PBKDF2 run. Every
        /// registration counts, not only failures.
        public static let registrationsPerAddress = Limit(freeFailures: 20)
        /// Shares with a name no account has, per sharing account: sharing says whether a name
        /// exists, so trying names is slowed as guessing passwords is.
        public static let unknownParticipantsPerAccount = Limit(freeFailures: 20)
    }

    public static let maximumDelaySeconds = 15 * 60
    /// A counter quiet this long starts again from free.
    public static let forgetAfter = TimeInterval(2 * maximumDelaySeconds)

    private let store: any WebThrottleStore

    /// - Parameter store: where the counters live.
    public init(store: any WebThrottleStore) {
        self.store = store
    }

    /// Reserves a registration for `address`.
    /// - Parameters:
    ///   - address: the client's address.
    ///   - now: the time.
    /// - Returns: nil when it may go ahead (it is counted now), otherwise the seconds to wait.
    /// - Throws: ``NotesError/unavailable(_:)``.
    public func reserveRegistration(address: String, now: Date = Date()) async throws -> Int? {
        try await reserve(ThrottleKey(.registration, address), limit: .registrationsPerAddress, now: now)
    }

    /// Reserves a share of `account`'s with a participant named by the user: it counts as a
    /// name nobody has until ``participantLookupFinished(account:nameExists:now:)`` says otherwise.
    /// - Parameters:
    ///   - account: the sharing account's id.
    ///   - now: the time.
    /// - Returns: nil when it may go ahead (it is counted now), otherwise the seconds to wait.
    /// - Throws: ``NotesError/unavailable(_:)``.
    public func reserveParticipantLookup(account: String, now: Date = Date()) async throws -> Int? {
        try await reserve(ThrottleKey(.unknownParticipant, account), limit: .unknownParticipantsPerAccount, now: now)
    }

    /// A reserved share finished: a name that exists gives its count back; one nobody has
    /// stays counted, and the wait runs from now.
    /// - Parameters:
    ///   - account: the sharing account's id.
    ///   - nameExists: whether an account has the name.
    ///   - now: the time.
    /// - Throws: ``NotesError/unavailable(_:)``.
    public func participantLookupFinished(account: String, nameExists: Bool, now: Date = Date()) async throws {
        let key = ThrottleKey(.unknownParticipant, account)
        guard nameExists else { return try await finished([key], now: now) }
        try await store.update([key]) { counters in Self.giveBack(&counters[key]) }
    }

    /// A reserved registration finished (either way): the wait runs from now, the end of its
    /// hashing — a slow KDF must not use up the delay.
    /// - Parameters:
    ///   - address: the client's address.
    ///   - now: the time.
    /// - Throws: ``NotesError/unavailable(_:)``.
    public func registrationFinished(address: String, now: Date = Date()) async throws {
        try await finished([ThrottleKey(.registration, address)], now: now)
    }

    /// Reserves a password check for `name` from `address`; it counts as a failure of both
    /// until ``signInSucceeded(name:address:)`` says otherwise.
    /// - Parameters:
    ///   - name: the account name tried (case-folded).
    ///   - address: the client's address.
    ///   - now: the time.
    /// - Returns: nil when it may go ahead, or the seconds to wait (nothing counted).
    /// - Throws: ``NotesError/unavailable(_:)``.
    public func reserveSignIn(name: String, address: String, now: Date = Date()) async throws -> Int? {
        let nameKey = ThrottleKey(.name, name), addressKey = ThrottleKey(.address, address)
        return try await store.update([nameKey, addressKey]) { counters in
            let waits = [
                Self.wait(counters[nameKey], limit: .perName, now: now),
                Self.wait(counters[addressKey], limit: .perAddress, now: now),
            ].compactMap { $0 }
            if let wait = waits.max() { return wait }
            for key in [nameKey, addressKey] { Self.reserve(&counters[key], now: now) }
            return nil
        }
    }

    /// A reserved attempt succeeded: the name's count is cleared and the address gets back the
    /// failure its reservation counted.
    /// - Parameters:
    ///   - name: the account name.
    ///   - address: the client's address.
    /// - Throws: ``NotesError/unavailable(_:)``.
    public func signInSucceeded(name: String, address: String) async throws {
        let nameKey = ThrottleKey(.name, name), addressKey = ThrottleKey(.address, address)
        try await store.update([nameKey, addressKey]) { counters in
            counters[nameKey] = nil
            Self.giveBack(&counters[addressKey])
        }
    }

    /// A reserved attempt failed (it was counted at reservation): the waits run from now.
    /// - Parameters:
    ///   - name: the account name.
    ///   - address: the client's address.
    ///   - now: the time.
    /// - Throws: ``NotesError/unavailable(_:)``.
    public func signInFailed(name: String, address: String, now: Date = Date()) async throws {
        try await finished([ThrottleKey(.name, name), ThrottleKey(.address, address)], now: now)
    }

    /// Reserves an attempt on `key` alone: nil when it may go ahead (it is counted now), else
    /// the seconds to wait (nothing counted).
    private func reserve(_ key: ThrottleKey, limit: Limit, now: Date) async throws -> Int? {
        try await store.update([key]) { counters in
            if let wait = Self.wait(counters[key], limit: limit, now: now) { return wait }
            Self.reserve(&counters[key], now: now)
            return nil
        }
    }

    /// Counts an attempt reserved now: a failure until it is known to be none, in flight
    /// until it ends.
    static func reserve(_ counter: inout ThrottleCounter?, now: Date) {
        count(&counter, now: now)
        counter?.inFlight += 1
    }

    /// A reserved attempt that turned out no failure gives its count back; a counter left at
    /// nothing is forgotten.
    static func giveBack(_ counter: inout ThrottleCounter?) {
        guard var current = counter else { return }
        current.count -= 1
        current.inFlight = max(current.inFlight - 1, 0)
        counter = current.count > 0 || current.inFlight > 0 ? current : nil
    }

    /// Reserved attempts on `keys` ended: no longer in flight, and their waits run from `now`.
    private func finished(_ keys: [ThrottleKey], now: Date) async throws {
        try await store.update(keys) { counters in
            for key in keys {
                guard var counter = counters[key] else { continue }
                counter.last = max(counter.last, now)
                counter.inFlight = max(counter.inFlight - 1, 0)
                counters[key] = counter
            }
        }
    }

    /// Seconds until `name` from `address` may try again, or nil when it may now.
    /// - Parameters:
    ///   - name: the account name.
    ///   - address: the client's address.
    ///   - now: the time.
    /// - Returns: the wait, or nil.
    /// - Throws: ``NotesError/unavailable(_:)``.
    public func retryAfter(name: String, address: String, now: Date = Date()) async throws -> Int? {
        let nameKey = ThrottleKey(.name, name), addressKey = ThrottleKey(.address, address)
        return try await store.update([nameKey, addressKey]) { counters in
            [
                Self.wait(counters[nameKey], limit: .perName, now: now),
                Self.wait(counters[addressKey], limit: .perAddress, now: now),
            ].compactMap { $0 }.max()
        }
    }

    /// Counts a failure checked without a reservation (a passphrase reset's account password).
    /// - Parameters:
    ///   - name: the account name.
    ///   - address: the client's address.
    ///   - now: the time.
    /// - Throws: ``NotesError/unavailable(_:)``.
    public func recordFailure(name: String, address: String, now: Date = Date()) async throws {
        let keys = [ThrottleKey(.name, name), ThrottleKey(.address, address)]
        try await store.update(keys) { counters in
            for key in keys { Self.count(&counters[key], now: now) }
        }
    }

    /// Forgets counters quiet for longer than ``forgetAfter``.
    /// - Parameter now: the time.
    /// - Throws: ``NotesError/unavailable(_:)``.
    public func removeQuiet(now: Date = Date()) async throws {
        try await store.removeQuiet(before: now.addingTimeInterval(-Self.forgetAfter))
    }

    /// The wait after `count` failures: none before the free ones are used up; 1 s once they
    /// are, then doubling with each further failure.
    public static func delaySeconds(afterFailures count: Int, limit: Limit) -> Int {
        let excess = count - limit.freeFailures
        guard excess >= 0 else { return 0 }
        return excess >= 10 ? maximumDelaySeconds : min(1 << excess, maximumDelaySeconds)
    }

    static func wait(_ counter: ThrottleCounter?, limit: Limit, now: Date) -> Int? {
        guard let counter else { return nil }
        if now.timeIntervalSince(counter.last) > forgetAfter { return nil }
        let delay = delaySeconds(afterFailures: counter.count, limit: limit)
        // Within the free ones, no wait — even when another attempt, reserved after this
        // request's `now` was taken, has moved `last` past it.
        guard delay > 0 else { return nil }
        let last = counter.inFlight > 0 ? max(counter.last, now) : counter.last
        let remaining = last.addingTimeInterval(TimeInterval(delay)).timeIntervalSince(now)
        return remaining > 0 ? Int(remaining.rounded(.up)) : nil
    }

    static func count(_ counter: inout ThrottleCounter?, now: Date) {
        var current = counter ?? ThrottleCounter(count: 0, last: now, inFlight: 0)
        // Quiet for long enough (twice the longest delay): start again from free.
        if now.timeIntervalSince(current.last) > forgetAfter { current.count = 0 }
        current.count += 1
        current.last = now
        counter = current
    }
}
