import Foundation
import Synchronization
import TresorProtocol
import TresorSecretService

/// The generic Secret Service clients the user trusts now (docs/SECURITY.md, "Generic clients"):
/// granted ahead of time with `tresor secret-service trust add` (the executable under any parent),
/// or approved "for this session" when a request was put to them (the executable under the same
/// chain of ancestors only). Each lasts as long as the user chose.
///
/// Kept in the daemon's memory only: a file would be one more place a process of the user could
/// write trust into, and a daemon that stops forgets it, as the login session that approved it ends.
final class SecretServiceTrust: GenericClientTrust {
    private let entries = Mutex<[SecretServiceTrustEntry]>([])

    /// Whether the user trusts `client` now: a grant to its executable, or an approval for its
    /// executable under the very same parent chain.
    func trusts(_ client: SecretServiceClient) -> Bool { trusts(client, now: Date()) }

    func trusts(_ client: SecretServiceClient, now: Date) -> Bool {
        current(now).contains { entry in
            entry.executable == client.ownGroup && (entry.origin == .granted || entry.parentChain == client.parentChain)
        }
    }

    /// Trusts the executable of group `executable` — named by `path` — under any parent, for
    /// `duration` (nil: until the daemon stops).
    func grant(_ executable: String, path: String? = nil, for duration: TimeInterval?, now: Date = Date()) {
        add(
            SecretServiceTrustEntry(
                executable: executable, origin: .granted, parentChain: [], since: now.timeIntervalSince1970,
                until: duration.map { now.addingTimeInterval($0).timeIntervalSince1970 }, path: path))
    }

    /// Remembers the user's "for this session" approval of `client` for `duration`.
    func remember(_ client: SecretServiceClient, for duration: TimeInterval) { remember(client, for: duration, now: Date()) }

    func remember(_ client: SecretServiceClient, for duration: TimeInterval, now: Date) {
        add(
            SecretServiceTrustEntry(
                executable: client.ownGroup, origin: .approved, parentChain: client.parentChain, since: now.timeIntervalSince1970,
                until: now.addingTimeInterval(duration).timeIntervalSince1970))
    }

    /// Takes back all trust in `executable` (a group), or in every executable when nil.
    /// - Returns: how many entries were taken back.
    @discardableResult
    func remove(_ executable: String?) -> Int {
        entries.withLock { entries in
            let before = entries.count
            entries.removeAll { executable == nil || $0.executable == executable }
            return before - entries.count
        }
    }

    /// What is trusted now, the oldest first.
    func list(now: Date = Date()) -> [SecretServiceTrustEntry] { current(now) }

    private func add(_ entry: SecretServiceTrustEntry) {
        // A new answer for the same executable and chain replaces the old one.
        entries.withLock { entries in
            entries.removeAll { $0.executable == entry.executable && $0.origin == entry.origin && $0.parentChain == entry.parentChain }
            entries.append(entry)
        }
    }

    /// The entries still in force; the others are dropped.
    private func current(_ now: Date) -> [SecretServiceTrustEntry] {
        entries.withLock { entries in
            entries.removeAll { $0.until.map { $0 <= now.timeIntervalSince1970 } ?? false }
            return entries
        }
    }
}
