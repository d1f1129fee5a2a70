import FoundationEssentials

/// The waits that slow guessing after consecutive wrong secrets: none for the
/// first four, then 1 min, 5 min, 15 min, 15 min and 1 h for every further one — Apple's
/// schedule. The keybag's passcode and the notes' passphrases both use it.
public enum GuessingDelay {
    /// The wait imposed after `failures` consecutive failures.
    public static func delay(afterFailures failures: Int) -> TimeInterval {
        switch failures {
        case ..<5: return 0
        case 5: return 60
        case 6: return 5 * 60
        case 7, 8: return 15 * 60
        default: return 60 * 60
        }
    }

    /// Seconds until the next attempt is allowed, or nil when it is allowed now.
    ///
    /// A clock set back before the last failure counts as no time elapsed, so it cannot
    /// stretch the wait beyond its length, nor shorten it.
    public static func remaining(afterFailures failures: Int, lastFailure: Date?, now: Date) -> Int? {
        guard let lastFailure else { return nil }
        let wait = delay(afterFailures: failures)
        guard wait > 0 else { return nil }
        let elapsed = max(0, now.timeIntervalSince(lastFailure))
        let remaining = wait - elapsed
        return remaining > 0 ? Int(remaining.rounded(.up)) : nil
    }
}
