import FoundationEssentials
import TresorSystem

/// The items generic clients read with the user's approval, each with the process that ran the
/// client: that process may have the same program hand back exactly what it read without asking
/// the user twice (``SecretServiceProvider/writesBackAnApprovedRead(_:)``).
///
/// git asks its credential helper for a password (`get`), and once the push succeeded runs the
/// helper again to store the same password (`store`), a replacement that changes nothing. Only
/// the process that ran the approved read, running the same program again for the same item, is
/// let through, once, so nobody else learns from it whether a guess equals the secret.
struct ApprovedReads {
    /// One approved read.
    struct Read: Equatable {
        var collection: String
        var id: String
        /// The program that read it, by its own group (`SecretServiceClient.ownGroup`).
        var program: String
        /// The process that ran it: the client's parent.
        var parent: RunningProcess
        var until: Date
    }

    /// How long a read may be written back: a push can take a while between `get` and `store`.
    static let lifetime: TimeInterval = 3_600
    /// The most reads kept: the oldest is forgotten first.
    static let limit = 64

    private(set) var reads: [Read] = []

    /// Keeps a read of item `id` of `collection` by `program`, run by `parent`.
    mutating func record(collection: String, id: String, program: String, parent: RunningProcess, now: Date = Date()) {
        forgetExpired(now)
        reads.removeAll { $0.collection == collection && $0.id == id && $0.program == program && $0.parent == parent }
        reads.append(Read(collection: collection, id: id, program: program, parent: parent, until: now.addingTimeInterval(Self.lifetime)))
        if reads.count > Self.limit { reads.removeFirst(reads.count - Self.limit) }
    }

    /// Whether `program`, run by `parent`, read item `id` of `collection` with the user's approval
    /// and has not written it back yet.
    func contains(collection: String, id: String, program: String, parent: RunningProcess, now: Date = Date()) -> Bool {
        reads.contains { $0.collection == collection && $0.id == id && $0.program == program && $0.parent == parent && $0.until > now }
    }

    /// Forgets that read: a read is written back once.
    mutating func remove(collection: String, id: String, program: String, parent: RunningProcess) {
        reads.removeAll { $0.collection == collection && $0.id == id && $0.program == program && $0.parent == parent }
    }

    private mutating func forgetExpired(_ now: Date) {
        reads.removeAll { $0.until <= now }
    }
}
