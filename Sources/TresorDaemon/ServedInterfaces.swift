import Synchronization
import TresorProtocol

/// What the daemon serves besides its socket, as `tresor status` shows it: each part records
/// itself once it answers, or why it could not start.
final class ServedInterfaces: Sendable {
    private let state = Mutex(ServingInfo())

    /// Records what changed.
    func update(_ change: (inout ServingInfo) -> Void) { state.withLock { change(&$0) } }

    /// What is served now.
    var current: ServingInfo { state.withLock { $0 } }
}
