import Synchronization
import TresorProtocol

/// Where the backup, verification or restore in flight stands, for the progress route: written
/// by the operation as it goes, read by any request meanwhile. Also how an operation is
/// cancelled when the client that asked for it goes away (Ctrl-C): ``cancel(_:)``, seen by the
/// operation at its next chunk of the file (``checkCancelled()``).
public final class BackupProgressTracker: Sendable {
    private let state = Mutex(BackupProgress(running: false))
    /// The operation admitted last, and whether it was cancelled.
    private let admitted = Mutex((operation: UInt64(0), cancelled: false))

    public init() {}

    /// What the operation has done so far.
    public var current: BackupProgress { state.withLock { $0 } }

    /// Admits the next operation, not cancelled.
    /// - Returns: its number, for ``cancel(_:)``.
    public func admit() -> UInt64 {
        admitted.withLock { admitted in
            admitted = (admitted.operation + 1, false)
            return admitted.operation
        }
    }

    /// Cancels operation `operation`, if it is still the one admitted last; a later one goes on.
    /// - Parameter operation: what ``admit()`` returned.
    public func cancel(_ operation: UInt64) {
        admitted.withLock { if $0.operation == operation { $0.cancelled = true } }
    }

    /// Ends the operation with ``BackupError/cancelled`` when it was cancelled.
    func checkCancelled() throws {
        if admitted.withLock({ $0.cancelled }) { throw BackupError.cancelled }
    }

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
