import Logging
import TresorProtocol

/// Logs an operation's outcome — info on success, notice with its API error code on failure —
/// under `metadata`, which names what was acted on (a note id, a pid, an account id), never
/// its content. One way for the socket's notes routes and the web routes alike.
func loggedOutcome<T>(
    _ label: String, logger: Logger, metadata: Logger.Metadata, errorCode: (any Error) -> APIError.Code,
    _ body: () async throws -> T
) async throws -> T {
    do {
        let result = try await body()
        logger.info("\(label) succeeded", metadata: metadata)
        return result
    } catch {
        var metadata = metadata
        metadata["code"] = "\(errorCode(error).rawValue)"
        logger.notice("\(label) failed", metadata: metadata)
        throw error
    }
}
