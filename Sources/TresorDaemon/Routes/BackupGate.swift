import Synchronization

/// Lets one backup, verification or restore run at a time.
final class BackupGate: Sendable {
    private let running = Mutex(false)

    /// Whether the caller may start (nothing else runs); it must ``leave()`` after.
    func enter() -> Bool {
        running.withLock { running in
            defer { running = true }
            return !running
        }
    }

    func leave() {
        running.withLock { $0 = false }
    }
}
