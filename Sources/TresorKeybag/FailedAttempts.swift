import Foundation

/// The consecutive wrong passcodes since the last success, kept on disk so a restart does
/// not reset them (docs/API.md, "Limits").
///
/// Each failure is remembered by a tag — an HMAC, under a device-key subkey, of the
/// PBKDF2 output of the wrong passcode — so the same wrong passcode typed twice counts once
/// without the passcode itself being stored.
struct FailedAttempts: Codable, Equatable {
    var tags: [Data] = []
    var lastFailureAt: Date?
    /// The keybag generation this count belongs to (nil in files written before counts recorded it). A
    /// file older than the keybag — copied back from before a passcode change — counts as
    /// damaged; one newer is a change interrupted between its two writes.
    var generation: Int? = nil

    var count: Int { tags.count }

    /// Keeps the file bounded; past this many distinct failures the delay is at its maximum anyway.
    static let maximumRemembered = 64

    /// Seconds until the next attempt is allowed, or nil when it is allowed now.
    func retryAfter(now: Date) -> Int? {
        GuessingDelay.remaining(afterFailures: count, lastFailure: lastFailureAt, now: now)
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
