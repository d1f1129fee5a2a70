import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import TresorProtocol

/// One connection to the socket API: SwiftNIO's HTTP/1.1 pipeline and a
/// ``SocketRequestHandler`` that hands each whole request to the daemon's router (or answers
/// it itself, for the ``InlineRoutes``).
///
/// ``SocketAPIServer`` accepts the connections and reads them (with each message's sender);
/// Hummingbird provides the router with its middleware. Its own connection handling — an async
/// sequence of request parts in, an async writer of response parts out — cost a keychain
/// lookup as much CPU as the keychain itself (BENCHMARKS.md §1).
struct SocketAPIChannel: Sendable {
    let responder: RouterResponder<DaemonRequestContext>
    var inline: InlineRoutes? = nil
    let bodyLimits: RequestBodyLimits
    /// How long a connection may sit unused (``SocketConnectionDeadlines``).
    var idleSeconds = SocketConnections.defaultIdleSeconds
    /// Whether a connection holds something that ends with it, so it is kept however long it is idle.
    var keepsOpen: @Sendable (ConnectionID) -> Bool = { _ in false }

    /// Sets up `channel`'s pipeline. On the channel's event loop.
    /// - Parameters:
    ///   - channel: the accepted connection.
    ///   - logger: the daemon's.
    ///   - refusal: when set, the connection's first request is answered with it and the
    ///     connection closed (a process over its share of connections).
    func configure(_ channel: any Channel, logger: Logger, refusal: APIError? = nil) throws {
        // Pipelining assistance holds a client's next request back until this one is
        // answered; error handling answers a malformed request with 400 and closes.
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(
            withPipeliningAssistance: true, withErrorHandling: true)
        try channel.pipeline.syncOperations.addHandler(SocketConnectionDeadlines(idleSeconds: idleSeconds, keepsOpen: keepsOpen))
        try channel.pipeline.syncOperations.addHandler(
            SocketRequestHandler(responder: responder, inline: inline, bodyLimits: bodyLimits, refusal: refusal, logger: logger))
    }
}
