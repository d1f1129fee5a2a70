import Foundation

/// What a test waited for and did not see within its time.
public struct WaitTimedOut: Error, CustomStringConvertible {
    public var what: String
    public var seconds: Double
    public var description: String { "\(what): not within \(seconds) s" }
}

/// Waits until `condition` holds — something another process or thread does — asking again every
/// 20 ms.
/// - Parameters:
///   - what: what is waited for, in words, for the failure.
///   - seconds: how long at most.
///   - condition: asked until it is true.
/// - Throws: ``WaitTimedOut`` once `seconds` have passed; whatever `condition` throws.
/// Disfavoured, so that async code gets the form that does not block its thread.
@_disfavoredOverload
public func waitUntil(_ what: String, seconds: Double = 60, _ condition: () throws -> Bool) throws {
    let deadline = Date() + seconds
    while try !condition() {
        guard Date() < deadline else { throw WaitTimedOut(what: what, seconds: seconds) }
        usleep(20_000)
    }
}

/// ``waitUntil(_:seconds:_:)`` for a condition that awaits, sleeping without holding a thread.
public func waitUntil(_ what: String, seconds: Double = 60, _ condition: () async throws -> Bool) async throws {
    let deadline = Date() + seconds
    while try await !condition() {
        guard Date() < deadline else { throw WaitTimedOut(what: what, seconds: seconds) }
        try await Task.sleep(for: .milliseconds(20))
    }
}
