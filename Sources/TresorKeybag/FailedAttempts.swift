import Foundation

/// The consecutive wrong passcodes since the last success, kept on disk so a restart does
/// not reset them (SPEC §3.4).
///
/// Each failure is remembered by a tag — an HMAC, under a device-key subkey, of the
/// PBKDF2 output of the wrong passcode — so the same wrong passcode typed twice counts once
/// without the passcode itself being stored.
struct FailedAttempts: Codable, Equatable {
    var tags: [Data] = []
    var lastFailureAt: Date?

    var count: Int { tags.count }

    /// Keeps the file bounded; past this many distinct failures the delay is at its maximum anyway.
    static let maximumRemembered = 64

    /// The wait imposed after `failures` consecutive failures: none for the first four, then
    /// 1 min, 5 min, 15 min, 15 min and 1 h for every further one (Apple's schedule).
    static func delay(afterFailures failures: Int) -> TimeInterval {
        switch failures {
        case ..<5: return 0
        case 5: return 60
        case 6: return 5 * 60
        case 7, 8: return 15 * 60
        default: return 60 * 60
        }
    }

    /// Seconds until the next attempt is allowed, or nil when it is allowed now.
    func retryAfter(now: Date) -> Int? {
        guard let last = lastFailureAt else { return nil }
        let wait = Self.delay(afterFailures: count)
        guard wait > 0 else { return nil }
        // A clock set back must not stretch the wait beyond its length.
        let elapsed = max(0, now.timeIntervalSince(last))
        let remaining = wait - elapsed
        return remaining > 0 ? Int(remaining.rounded(.up)) : nil
    }

    /// A clock set back before the last failure would otherwise hold the wait until it caught
    /// up: count the wait from now instead.
    mutating func clamp(to now: Date) {
        if let last = lastFailureAt, last > now { lastFailureAt = now }
    }

    /// Records a failure; returns false when this wrong passcode was already counted.
    mutating func record(tag: Data, at now: Date) -> Bool {
        guard !tags.contains(tag) else { return false }
        tags.append(tag)
        if tags.count > Self.maximumRemembered { tags.removeFirst(tags.count - Self.maximumRemembered) }
        lastFailureAt = now
        return true
    }

    /// What to assume when the file is damaged: a lockout as after five failures, so
    /// corrupting the file is no way to skip the delays.
    static func assumedAfterDamage(now: Date) -> FailedAttempts {
        FailedAttempts(tags: (0..<5).map { Data([UInt8($0)]) }, lastFailureAt: now)
    }

    static func file(_ deviceKey: DeviceKey) -> AuthenticatedFile<FailedAttempts> {
        AuthenticatedFile(
            magic: Data("TRUA".utf8), version: 1, name: "unlock-attempts", macKey: deviceKey.derive("file-mac.unlock-attempts"))
    }
}
