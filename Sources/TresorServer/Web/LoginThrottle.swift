import Foundation
import Synchronization

/// Login rate limits (docs/WEB.md): failures are counted per account name and per client
/// address. The first `freeFailures` cost nothing; after that each attempt must wait 1 s,
/// 2 s, 4 s … up to 15 minutes after the last failure, and an attempt made earlier is
/// refused before any password is checked. A success clears the name's count (not the
/// address's: one's own account must not reset a guesser's budget); a count is forgotten
/// after 30 quiet minutes.
final class LoginThrottle: Sendable {
    struct Limit: Sendable {
        var freeFailures: Int
        static let perName = Limit(freeFailures: 5)
        /// Looser: every client shares loopback, and one user may mistype several names.
        static let perAddress = Limit(freeFailures: 20)
        /// Registrations per address: each costs a 600,000-round PBKDF2 run, so a flood of
        /// them would keep the daemon's CPU busy. Every registration counts, not only failures.
        static let registrationsPerAddress = Limit(freeFailures: 20)
    }

    static let maximumDelaySeconds = 15 * 60
    /// Counters kept at most per table; the stalest go first (a flood of made-up names must
    /// not grow memory without bound).
    static let capacity = 10_000

    private struct Failures {
        var count: Int
        var last: Date
    }

    private let names = Mutex<[String: Failures]>([:])
    private let addresses = Mutex<[String: Failures]>([:])
    private let registrations = Mutex<[String: Failures]>([:])

    /// Seconds until `address` may register again, or nil when it may now.
    func registrationRetryAfter(address: String, now: Date = Date()) -> Int? {
        Self.wait(registrations.withLock { $0[address] }, limit: .registrationsPerAddress, now: now)
    }

    /// Counts a registration attempt that reached the password hash.
    func recordRegistration(address: String, now: Date = Date()) {
        Self.count(address, in: registrations, now: now)
    }

    /// Seconds until `name` from `address` may try again, or nil when it may now.
    func retryAfter(name: String, address: String, now: Date = Date()) -> Int? {
        let waits = [
            Self.wait(names.withLock { $0[name] }, limit: .perName, now: now),
            Self.wait(addresses.withLock { $0[address] }, limit: .perAddress, now: now),
        ].compactMap { $0 }
        return waits.max()
    }

    func recordFailure(name: String, address: String, now: Date = Date()) {
        Self.count(name, in: names, now: now)
        Self.count(address, in: addresses, now: now)
    }

    func recordSuccess(name: String) {
        names.withLock { _ = $0.removeValue(forKey: name) }
    }

    /// The wait after `count` failures: none before the free ones are used up; 1 s once they
    /// are, then doubling with each further failure.
    static func delaySeconds(afterFailures count: Int, limit: Limit) -> Int {
        let excess = count - limit.freeFailures
        guard excess >= 0 else { return 0 }
        return excess >= 10 ? maximumDelaySeconds : min(1 << excess, maximumDelaySeconds)
    }

    private static func wait(_ failures: Failures?, limit: Limit, now: Date) -> Int? {
        guard let failures else { return nil }
        let delay = delaySeconds(afterFailures: failures.count, limit: limit)
        let remaining = failures.last.addingTimeInterval(TimeInterval(delay)).timeIntervalSince(now)
        return remaining > 0 ? Int(remaining.rounded(.up)) : nil
    }

    private static func count(_ key: String, in table: borrowing Mutex<[String: Failures]>, now: Date) {
        table.withLock { table in
            var failures = table[key] ?? Failures(count: 0, last: now)
            // Quiet for long enough (twice the longest delay): start again from free.
            if now.timeIntervalSince(failures.last) > TimeInterval(2 * maximumDelaySeconds) { failures.count = 0 }
            failures.count += 1
            failures.last = now
            if table[key] == nil, table.count >= capacity, let stalest = table.min(by: { $0.value.last < $1.value.last }) {
                table[stalest.key] = nil
            }
            table[key] = failures
        }
    }
}
