import Foundation
import Logging
import Synchronization

/// Logs a repeated event once per interval rather than once per occurrence (docs/WEB.md,
/// "Availability"): a flood of bad requests — throttled sign-ins, refused connections,
/// requests for notes one may not see — must not fill the disk with the log. The first
/// occurrence of a kind in an interval is logged, saying how many of that kind were left out
/// since the last line; the others are only counted.
package final class RepeatedLogLimiter: Sendable {
    /// Seconds between two lines of one kind.
    let interval: TimeInterval
    /// Kinds tracked at most; kinds are labels and error codes, so a few dozen in practice.
    static let capacity = 1024

    private struct Window {
        var started: Date
        var suppressed: Int
    }

    private let windows = Mutex<[String: Window]>([:])

    package init(interval: TimeInterval = 10) {
        self.interval = interval
    }

    /// Whether an occurrence of `kind` is to be logged now: nil when it is only counted,
    /// otherwise how many occurrences were left out before it.
    package func admit(_ kind: String, now: Date = Date()) -> Int? {
        windows.withLock { windows in
            if var window = windows[kind], now.timeIntervalSince(window.started) < interval {
                window.suppressed += 1
                windows[kind] = window
                return nil
            }
            let suppressed = windows[kind]?.suppressed ?? 0
            if windows[kind] == nil, windows.count >= Self.capacity { windows.removeAll(keepingCapacity: true) }
            windows[kind] = Window(started: now, suppressed: 0)
            return suppressed
        }
    }

    /// Logs `message` at notice level unless one of its kind was logged less than `interval`
    /// ago; adds `repeated` (how many were left out) when some were.
    package func notice(_ message: String, _ logger: Logger, metadata: Logger.Metadata = [:], kind: String? = nil, source: String? = nil) {
        guard let suppressed = admit(kind ?? message) else { return }
        var metadata = metadata
        if suppressed > 0 { metadata["repeated"] = "\(suppressed)" }
        logger.notice("\(message)", metadata: metadata, source: source)
    }
}
