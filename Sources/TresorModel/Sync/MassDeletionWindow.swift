import FoundationEssentials

/// The mass-deletion hold's arithmetic, for keychain items and notes alike (docs/SYNC.md,
/// "Conflicts and deletions"): deletions arriving from other devices that add up, within
/// 24 hours of the user's last confirmation, to more than 50, or to more than a quarter of
/// what there was once there were at least 20, wait for the user — however many syncs they
/// come in.
public struct MassDeletionWindow: Codable, Equatable, Sendable {
    /// When the window started: the user's last confirmation, or the first deletion after a
    /// window ended.
    public var start: Date
    /// Deletions applied since.
    public var deleted: Int

    /// How long a window lasts.
    public static let length: TimeInterval = 24 * 3600
    /// More deletions than this in a window are a mass deletion, however many there were.
    public static let mostDeletions = 50
    /// From this many, more than a quarter deleted is a mass deletion.
    public static let quarterFrom = 20

    /// - Parameters:
    ///   - start: when the window started.
    ///   - deleted: deletions applied since.
    public init(start: Date, deleted: Int = 0) {
        self.start = start
        self.deleted = deleted
    }

    /// The window as of `now`: `stored` while it lasts, else a new one starting now. A clock
    /// set back before the stored start ends it, too.
    /// - Parameters:
    ///   - stored: the window last recorded, if any.
    ///   - now: the device's clock.
    /// - Returns: the window deletions count into.
    public static func current(_ stored: MassDeletionWindow?, now: Date) -> MassDeletionWindow {
        guard let stored, now >= stored.start, now.timeIntervalSince(stored.start) < length else { return MassDeletionWindow(start: now) }
        return stored
    }

    /// Whether `count` more deletions, with those applied in the window, make a mass deletion.
    /// - Parameters:
    ///   - count: the deletions arriving.
    ///   - remaining: how many there are now (items or notes), before the arriving deletions.
    /// - Returns: true when they must wait for the user.
    public func isMassDeletion(adding count: Int, remaining: Int) -> Bool {
        guard count > 0 else { return false }
        let total = deleted + count
        // What there was when the window started: what is left and what it deleted.
        let before = remaining + deleted
        return total > Self.mostDeletions || (before >= Self.quarterFrom && total * 4 > before)
    }
}
