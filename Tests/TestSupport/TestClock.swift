import Foundation
import Synchronization

/// A clock a test moves by hand, handed to the code under test as its `clock` (`read`): delays,
/// expiries and retention periods pass in a step instead of in real time.
public final class TestClock: Sendable {
    private let start: Date?
    private let offset = Mutex<TimeInterval>(0)

    /// A clock that stands at `start` until advanced.
    /// - Parameter start: the time it shows first; by default a fixed date, the same in every run.
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { self.start = start }

    private init(following: Void) { start = nil }

    /// A clock that follows the real one, ahead of it by what it was advanced: for code that
    /// also compares with the real time (a database's `now()`).
    public static func running() -> TestClock { TestClock(following: ()) }

    /// The time it shows now.
    public var now: Date { (start ?? Date()).addingTimeInterval(offset.withLock { $0 }) }

    /// ``now`` as the closure the code under test takes.
    public var read: @Sendable () -> Date { { self.now } }

    /// Moves the clock `seconds` ahead (back, when negative: a clock set back).
    public func advance(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }
}
