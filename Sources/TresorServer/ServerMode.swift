import Foundation
import TresorWebStore

/// A server's web backend (docs/WEB.md, "Running a Tresor server") and what keeps it running.
struct ServerBackend: Sendable {
    let backend: WebBackend
    /// Runs the backend's connections (the pool, the listener for other instances' events)
    /// until cancelled.
    let run: @Sendable () async -> Void
}

extension Daemon {
    /// The server's backend when `--database` names one; nil for the embedded mode.
    func openServerBackend(lifetimes: SessionLifetimes) async throws -> ServerBackend? {
        nil
    }
}
