import Foundation
import Hummingbird
import NIOCore
import TresorProtocol

/// Turns every failure into `{"code": "...", "message": "..."}` (the socket API's `APIError`,
/// not wrapped) with a fitting status. Unknown routes are `404 notFound` in JSON too.
/// Unexpected failures are logged by type and path only.
struct WebErrorMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext

    /// How the daemon words the failures the web side does not know (``WebServices/otherErrors``).
    let otherErrors: @Sendable (any Error) -> APIError

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let apiError = apiError(for: error)
            if apiError.code == .internal {
                context.logger.error("web: request failed", metadata: ["path": "\(request.uri.path.prefix(128))", "error": "\(apiError.message)"])
            }
            return Self.response(for: apiError)
        }
    }

    func apiError(for error: any Error) -> APIError {
        switch error {
        case let error as HTTPError where error.status == .notFound || error.status == .methodNotAllowed:
            return APIError(.notFound, "no such page or API route (see docs/WEB.md)")
        case is NIOTooManyBytesError:
            return WebCoding.tooLarge(WebLimits.jsonBytes)
        case let error as HTTPError where error.status == .contentTooLarge:
            return WebCoding.tooLarge(WebLimits.jsonBytes)
        default:
            return otherErrors(error)
        }
    }

    static func response(for error: APIError) -> Response {
        let data = (try? WebCoding.encoder.encode(error)) ?? Data(#"{"code":"internal","message":"internal error"}"#.utf8)
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let retry = error.retryAfterSeconds { headers[.retryAfter] = String(retry) }
        return Response(status: status(for: error.code), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The socket API's statuses, except where a browser needs another: 423 Locked when no
    /// note content is readable yet (the socket's 403 would read as "not allowed").
    static func status(for code: APIError.Code) -> HTTPResponse.Status {
        switch code {
        case .interactionNotAllowed: return .init(code: 423, reasonPhrase: "Locked")
        case .missingEntitlement, .peerRejected: return .forbidden
        default: return code.httpStatus
        }
    }
}
