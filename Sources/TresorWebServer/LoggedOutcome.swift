import Logging
import TresorProtocol

/// Logs an operation's outcome — info on success, notice with its API error code on failure —
/// under `metadata`, which names what was acted on (a note id, a pid, an account id), never
/// its content. One way for the socket's notes routes and the web routes alike. With a
/// `limiter`, failures are logged once per interval and kind (label and code), not once each.
package func loggedOutcome<T>(
    _ label: String, logger: Logger, metadata: Logger.Metadata, errorCode: (any Error) -> APIError.Code,
    limiter: RepeatedLogLimiter? = nil, _ body: () async throws -> T
) async throws -> T {
    do {
        let result = try await body()
        logger.info("\(label) succeeded", metadata: metadata)
        return result
    } catch {
        var metadata = metadata
        let code = errorCode(error).rawValue
        metadata["code"] = "\(code)"
        if let limiter {
            limiter.notice("\(label) failed", logger, metadata: metadata, kind: "\(label) \(code)")
        } else {
            logger.notice("\(label) failed", metadata: metadata)
        }
        throw error
    }
}
