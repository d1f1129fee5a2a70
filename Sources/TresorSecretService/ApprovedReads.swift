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
    /// One approved read: which item, by which program, run by which process.
    struct Read: Hashable {
        var collection: String
        var id: String
        /// The program that read it, by its own group (`SecretServiceClient.ownGroup`).
        var program: String
        /// The process that ran it: the client's parent.
        var parent: RunningProcess
    }

    /// How long a read may be written back: a push can take a while between `get` and `store`.
    static let lifetime: TimeInterval = 3_600
    /// The most reads kept: the oldest is forgotten first.
    static let limit = 64

    /// Each read kept, with the time it may be written back until.
    private(set) var reads: [Read: Date] = [:]

    /// Keeps `read`, to be written back within ``lifetime``.
    mutating func record(_ read: Read, now: Date = Date()) {
        reads = reads.filter { $0.value > now }
        reads[read] = now.addingTimeInterval(Self.lifetime)
        // Every read lives as long: the one that ends first is the oldest.
        if reads.count > Self.limit, let oldest = reads.min(by: { $0.value < $1.value })?.key { reads[oldest] = nil }
    }

    /// Uses `read` up: whether it was kept and may still be written back. A read is written back once.
    mutating func take(_ read: Read, now: Date = Date()) -> Bool {
        guard let until = reads.removeValue(forKey: read) else { return false }
        return until > now
    }
}
