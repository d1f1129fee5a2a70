import Foundation
import TresorNotes
import TresorNotesDomain
import TresorSystem

/// The embedded web store: a home's notes database (``NotesStore``, SQLite), sealed under the
/// home's keybag — the same notes the CLI sees, the local account's among them. Each call runs
/// the store's blocking work off Swift concurrency's threads. One daemon serves a home, so a
/// quota check and its write are made one step by a lock per account in this process. Each area
/// of ``WebStore`` is answered in its `SQLiteWebStore+Area.swift`, as `PostgresWebStore`'s are.
/// (`Sendable` is stated here: the area protocols its extensions conform to imply it, and Swift
/// wants a class's `Sendable` in the class's own file.)
public final class SQLiteWebStore: WebStore, Sendable {
    let opened: @Sendable () throws -> NotesStore
    private let quotaLocks = AccountLocks()

    /// - Parameter store: opens the home's notes store (it throws `notInitialized` before
    ///   `tresor init`, as every notes request does).
    public init(store: @escaping @Sendable () throws -> NotesStore) {
        self.opened = store
    }

    /// Runs `body` with the store on a Dispatch thread.
    func run<T: Sendable>(_ body: @escaping @Sendable (NotesStore) throws -> T) async throws -> T {
        let opened = self.opened
        return try await offloaded { try body(opened()) }
    }

    /// Runs `write` unless it would take `account` past `quota`, the check and the write under
    /// the account's lock.
    func within<T>(_ quota: StorageQuota?, account: AccountID, _ store: NotesStore, adding: Int? = nil, _ write: () throws -> T) throws -> T {
        guard let quota else { return try write() }
        return try quotaLocks.withLock(account) {
            var check = quota
            if let adding { check.addingBytes = adding }
            try check.check(used: try store.storedBytes(account: account))
            return try write()
        }
    }

    public func checkHealth() async throws {
        // The home's database is a file beside the daemon: it answers while the daemon does.
    }

    /// The owner of note `id` (a quota is its owner's).
    func owner(of id: String, _ store: NotesStore) throws -> AccountID {
        try store.noteOwner(id)
    }
}
