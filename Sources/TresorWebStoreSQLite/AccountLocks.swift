import Foundation
import Synchronization
import TresorWebStore

/// A lock per account, for work that must not interleave with the same account's (a quota
/// check and the write it allows). One daemon serves a home, so a lock in its memory is
/// enough. Taken on Dispatch threads, never on Swift concurrency's.
final class AccountLocks: Sendable {
    private let locks = Mutex<[AccountID: NSLock]>([:])

    /// Runs `body` holding `account`'s lock.
    func withLock<T>(_ account: AccountID, _ body: () throws -> T) throws -> T {
        let lock = locks.withLock { locks in
            if let lock = locks[account] { return lock }
            let lock = NSLock()
            locks[account] = lock
            return lock
        }
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
