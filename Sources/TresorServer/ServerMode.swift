import Foundation
import TresorWebStore

/// A server's web backend (docs/WEB.md, "Running a Tresor server") and what keeps it running.
struct ServerBackend: Sendable {
    let backend: WebBackend
    /// Runs the backend's connections (the pool, the listener for other instances' events)
    /// until cancelled, then closes them.
    let run: @Sendable () async -> Void
}

extension Daemon {
    /// The server's backend when `--database` names one; nil for the embedded web side.
    /// - Throws: ``DaemonError/configuration(_:)`` while accounts and notes on PostgreSQL are
    ///   not there (issue 22).
    func openServerBackend(lifetimes: SessionLifetimes) async throws -> ServerBackend? {
        guard configuration.server != nil else { return nil }
        throw DaemonError.configuration("server mode is not available yet: accounts and notes on PostgreSQL are still being built")
    }
}
