import Logging
import TresorProtocol

/// Logs an operation's outcome — info on success, notice with its API error code on failure —
/// under `metadata`, which names what was acted on (a note id, a pid, an account id), never
/// its content. One way for the socket's notes routes and the web routes alike. With a
/// `limiter`, failures are logged once per interval and kind (label and code), not once each.
/// The line names the caller's module as its source (the daemon's socket routes are not the web
/// server's).
package func loggedOutcome<T>(
    _ label: String, logger: Logger, metadata: Logger.Metadata, errorCode: (any Error) -> APIError.Code,
    limiter: RepeatedLogLimiter? = nil, file: String = #fileID, _ body: () async throws -> T
) async throws -> T {
    let source = String(file.prefix { $0 != "/" })
    do {
        let result = try await body()
        logger.info("\(label) succeeded", metadata: metadata, source: source)
        return result
    } catch {
        var metadata = metadata
        let code = errorCode(error).rawValue
        metadata["code"] = "\(code)"
        if let limiter {
            limiter.notice("\(label) failed", logger, metadata: metadata, kind: "\(label) \(code)", source: source)
        } else {
            logger.notice("\(label) failed", metadata: metadata, source: source)
        }
        throw error
    }
}
