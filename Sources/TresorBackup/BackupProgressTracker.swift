import Synchronization
import TresorProtocol

/// Where the backup, verification or restore in flight stands, for the progress route: written
/// by the operation as it goes, read by any request meanwhile.
public final class BackupProgressTracker: Sendable {
    private let state = Mutex(BackupProgress(running: false))

    public init() {}

    /// What the operation has done so far.
    public var current: BackupProgress { state.withLock { $0 } }

    /// Starts `operation` over `bytesTotal` bytes (0 when not known).
    func start(_ operation: String, bytesTotal: Int) {
        state.withLock { $0 = BackupProgress(running: true, operation: operation, bytesTotal: bytesTotal) }
    }

    func update(bytesDone: Int? = nil, bytesTotal: Int? = nil, itemsDone: Int? = nil) {
        state.withLock { progress in
            if let bytesDone { progress.bytesDone = bytesDone }
            if let bytesTotal { progress.bytesTotal = bytesTotal }
            if let itemsDone { progress.itemsDone = itemsDone }
        }
    }

    func finish() {
        state.withLock { $0.running = false }
    }
}
