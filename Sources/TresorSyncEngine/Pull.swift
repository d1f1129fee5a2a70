import Foundation
import TresorKeychain
import TresorSync
import TresorSyncProtocol

/// What a pull did.
public struct PullSummary: Sendable, Equatable {
    /// Changes of other devices applied.
    public var applied = 0
    /// Losing versions kept as conflicts.
    public var conflictsKept = 0
    /// Changes waiting after the pull: for an unlock, or for the user (a mass deletion).
    public var held = 0
    /// Of those, deletions waiting for the user.
    public var heldDeletions = 0

    public init() {}
}

extension SyncEngine {
    /// Fetches the records after this device's progress page by page, verifies each page whole
    /// (``SyncProgress/applying(_:list:keys:)``: a forged, replayed, reordered, dropped or swapped
    /// record refuses the page and nothing of it is applied) and applies it by the conflict rules,
    /// the page's changes and the new progress in one transaction.
    /// - Parameter allowDeletions: lets a held mass deletion through (the user confirmed it).
    /// - Returns: what was applied, kept and held.
    /// - Throws: ``SyncError/pageRefused(counter:recordID:reason:)`` for a page that does not
    ///   verify; ``SyncEngineError``; the transport's errors. Pages applied before stay.
    @discardableResult
    public func pull(allowDeletions: Bool = false) async throws -> PullSummary {
        var summary = PullSummary()
        if allowDeletions {
            try keychain.syncTransaction { transaction in try releaseHeld(transaction, deletionsAllowed: true, summary: &summary) }
        }
        var more = true
        var arrivals = PullArrivals()
        while more {
            let batch = try await fetchVerified()
            guard !batch.pages.isEmpty else {
                if let refusal = batch.refusal { throw refusal }
                break
            }
            // A mass deletion is judged on every page fetched, not page by page: one that
            // spans pages waits whole.
            let holdDeletions = try keychain.syncTransaction { transaction in
                let deletions = try batch.pages.flatMap(\.received.records).filter {
                    try !arrivals.new.contains($0.recordID) && isDeletion($0, transaction)
                }.count
                return try !allowDeletions && isMassDeletion(adding: deletions, transaction)
            }
            for page in batch.pages {
                try keychain.syncTransaction { transaction in
                    // Another pull committed this page meanwhile: applying it again would apply it twice.
                    guard try self.progress(transaction) == page.after else { return }
                    try apply(
                        page.received.records, served: page.served, transaction, holdDeletions: holdDeletions, arrivals: &arrivals,
                        summary: &summary)
                    try transaction.setState(try JSONEncoder().encode(page.received.progress), named: StateName.progress)
                }
            }
            if let refusal = batch.refusal { throw refusal }
            more = batch.more
        }
        try keychain.syncTransaction { transaction in
            // The user confirmed what this pull deleted: the next 24 hours count from now.
            if allowDeletions { try confirmDeletions(transaction) }
            let held = try transaction.held().filter { $0.reason != HoldReason.unreadable }
            summary.held = held.count
            summary.heldDeletions = held.filter { $0.reason == HoldReason.deletion }.count
        }
        return summary
    }

    /// Applies what waited for an unlock, in the server's order (call it after the keybag unlocks).
    /// - Returns: what was applied and what still waits.
    /// - Throws: ``SyncError/pageRefused(counter:recordID:reason:)`` for a kept record that no
    ///   longer verifies (nothing applied then); storage errors.
    @discardableResult
    public func applyHeld() throws -> PullSummary {
        var summary = PullSummary()
        try keychain.syncTransaction { transaction in
            try releaseHeld(transaction, deletionsAllowed: false, summary: &summary)
            let held = try transaction.held().filter { $0.reason != HoldReason.unreadable }
            summary.held = held.count
            summary.heldDeletions = held.filter { $0.reason == HoldReason.deletion }.count
        }
        return summary
    }

    /// Pages fetched and verified in a row (each after the one before), up to
    /// ``pagesPerBatch``; a refused page ends the batch, the pages before it verified.
    struct VerifiedBatch {
        var pages: [(after: SyncProgress, served: [SyncRecord], received: ReceivedPage)] = []
        var more = false
        var refusal: (any Error)?
    }

    static let pagesPerBatch = 20

    private func fetchVerified() async throws -> VerifiedBatch {
        var batch = VerifiedBatch()
        var progress = try keychain.syncTransaction { try self.progress($0) }
        while batch.pages.count < Self.pagesPerBatch {
            let page: SyncPage
            do {
                page = try await transport.page(after: progress.lastCounter, limit: pageSize)
            } catch  where !batch.pages.isEmpty {
                // The pages fetched before are applied; the next pull resumes after them.
                batch.refusal = error
                break
            }
            guard !page.records.isEmpty else {
                batch.more = false
                break
            }
            let received: ReceivedPage
            do {
                received = try progress.applying(page.records, list: list, keys: keys)
            } catch {
                batch.refusal = error
                break
            }
            batch.pages.append((progress, page.records, received))
            progress = received.progress
            batch.more = page.more
            guard page.more else { break }
        }
        return batch
    }

    /// The progress committed last.
    func progress(_ transaction: KeychainSyncTransaction) throws -> SyncProgress {
        try Self.progress(transaction)
    }

    static func progress(_ transaction: KeychainSyncTransaction) throws -> SyncProgress {
        guard let stored = try transaction.state(named: StateName.progress) else { return SyncProgress() }
        return try JSONDecoder().decode(SyncProgress.self, from: stored)
    }

    /// The server's cursor up to which this device applied its records: where a pull starts.
    /// Needs no key, so a locked keychain answers too.
    /// - Parameter keychain: the login keychain.
    /// - Returns: the counter of the last record applied; 0 before the first.
    /// - Throws: storage errors.
    public static func appliedCursor(in keychain: KeychainStore) throws -> UInt64 {
        try keychain.syncTransaction { try progress($0).lastCounter }
    }
}
