import HTTPTypes
import NIOCore
import NIOHTTPTypes

extension ChannelHandlerContext {
    /// Answers a connection the server will not serve — a JSON error of `status`, kept out of
    /// caches — then closes it once the answer is written. For the connection handlers that
    /// refuse before any route runs (``LocalUserFilter``, ``ConnectionLimiter``).
    /// - Parameters:
    ///   - status: the answer's status.
    ///   - json: its body.
    ///   - headers: more header fields (a `Retry-After`).
    func answerAndClose(_ status: HTTPResponse.Status, json: String, headers: HTTPFields = [:]) {
        let body = ByteBuffer(string: json)
        var head = HTTPResponse(status: status)
        head.headerFields[.contentType] = "application/json; charset=utf-8"
        head.headerFields[.contentLength] = String(body.readableBytes)
        head.headerFields.append(contentsOf: headers)
        head.headerFields[.connection] = "close"
        head.headerFields[.cacheControl] = "no-store"
        write(NIOAny(HTTPResponsePart.head(head)), promise: nil)
        write(NIOAny(HTTPResponsePart.body(body)), promise: nil)
        writeAndFlush(NIOAny(HTTPResponsePart.end(nil))).assumeIsolated().whenComplete { _ in self.close(promise: nil) }
    }
}
