import Foundation
import Synchronization

/// Login rate limits (docs/WEB.md): failures are counted per account name and per client
/// address. The first `freeFailures` cost nothing; after that each attempt must wait 1 s,
/// 2 s, 4 s … up to 15 minutes after the last failure, and an attempt made earlier is
/// refused before any password is checked. A success clears the name's count (not the
/// address's: one's own account must not reset a guesser's budget); a count is forgotten
/// after 30 quiet minutes.
///
/// An attempt is *reserved* before its password is checked: the check and the count happen
/// under one lock, and the attempt counts as a failure until it is known to have succeeded.
/// So a burst of concurrent sign-ins checks at most the free number of passwords — checking
/// first and counting after the slow KDF let all of a burst through (docs/SECURITY.md).
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
        /// Reserved attempts whose check has not finished: while one runs, the wait runs from
        /// now, so a burst arriving during a slow check cannot outlast the delay.
        var inFlight = 0
    }

    private struct Tables {
        var names: [String: Failures] = [:]
        var addresses: [String: Failures] = [:]
        var registrations: [String: Failures] = [:]
    }

    private let tables = Mutex(Tables())

    /// Reserves a registration for `address`: nil when it may go ahead (it is counted now),
    /// otherwise the seconds to wait (nothing counted).
    func reserveRegistration(address: String, now: Date = Date()) -> Int? {
        tables.withLock { tables in
            if let wait = Self.wait(tables.registrations[address], limit: .registrationsPerAddress, now: now) { return wait }
            Self.count(address, in: &tables.registrations, now: now)
            tables.registrations[address]?.inFlight += 1
            return nil
        }
    }

    /// A reserved registration finished (either way): the wait runs from now, the end of its
    /// hashing, not from its start — a slow KDF must not use up the delay.
    func registrationFinished(address: String, now: Date = Date()) {
        tables.withLock { tables in
            guard var failures = tables.registrations[address] else { return }
            failures.last = max(failures.last, now)
            failures.inFlight = max(failures.inFlight - 1, 0)
            tables.registrations[address] = failures
        }
    }

    /// Reserves a password check for `name` from `address`: nil when it may go ahead — it is
    /// then counted as a failure of both until ``signInSucceeded(name:address:)`` says
    /// otherwise —, or the seconds to wait (nothing counted, no password to check).
    func reserveSignIn(name: String, address: String, now: Date = Date()) -> Int? {
        tables.withLock { tables in
            let waits = [
                Self.wait(tables.names[name], limit: .perName, now: now),
                Self.wait(tables.addresses[address], limit: .perAddress, now: now),
            ].compactMap { $0 }
            if let wait = waits.max() { return wait }
            Self.count(name, in: &tables.names, now: now)
            Self.count(address, in: &tables.addresses, now: now)
            tables.names[name]?.inFlight += 1
            tables.addresses[address]?.inFlight += 1
            return nil
        }
    }

    /// A reserved attempt succeeded: the name's count is cleared and the address gets back
    /// the failure its reservation counted.
    func signInSucceeded(name: String, address: String) {
        tables.withLock { tables in
            tables.names[name] = nil
            if var failures = tables.addresses[address] {
                failures.count -= 1
                failures.inFlight = max(failures.inFlight - 1, 0)
                tables.addresses[address] = failures.count > 0 || failures.inFlight > 0 ? failures : nil
            }
        }
    }

    /// A reserved attempt failed (it was counted at reservation): the waits run from now, the
    /// end of the check, as they would for a failure counted after it.
    func signInFailed(name: String, address: String, now: Date = Date()) {
        tables.withLock { tables in
            for (key, isName) in [(name, true), (address, false)] {
                guard var failures = isName ? tables.names[key] : tables.addresses[key] else { continue }
                failures.last = max(failures.last, now)
                failures.inFlight = max(failures.inFlight - 1, 0)
                if isName { tables.names[key] = failures } else { tables.addresses[key] = failures }
            }
        }
    }

    /// Seconds until `name` from `address` may try again, or nil when it may now.
    func retryAfter(name: String, address: String, now: Date = Date()) -> Int? {
        tables.withLock { tables in
            [
                Self.wait(tables.names[name], limit: .perName, now: now),
                Self.wait(tables.addresses[address], limit: .perAddress, now: now),
            ].compactMap { $0 }.max()
        }
    }

    /// Counts a failure that was checked without a reservation (a passphrase reset's account
    /// password).
    func recordFailure(name: String, address: String, now: Date = Date()) {
        tables.withLock { tables in
            Self.count(name, in: &tables.names, now: now)
            Self.count(address, in: &tables.addresses, now: now)
        }
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
        // Quiet for long enough: the count is forgotten (see `count`).
        if now.timeIntervalSince(failures.last) > TimeInterval(2 * maximumDelaySeconds) { return nil }
        let delay = delaySeconds(afterFailures: failures.count, limit: limit)
        let last = failures.inFlight > 0 ? max(failures.last, now) : failures.last
        let remaining = last.addingTimeInterval(TimeInterval(delay)).timeIntervalSince(now)
        return remaining > 0 ? Int(remaining.rounded(.up)) : nil
    }

    private static func count(_ key: String, in table: inout [String: Failures], now: Date) {
        var failures = table[key] ?? Failures(count: 0, last: now, inFlight: 0)
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
