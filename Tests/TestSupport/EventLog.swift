import Synchronization

/// What happened, in the order it happened, from any task.
public final class EventLog: Sendable {
    private let events = Mutex<[String]>([])
    public init() {}
    public func append(_ event: String) { events.withLock { $0.append(event) } }
    public var entries: [String] { events.withLock { $0 } }
}
