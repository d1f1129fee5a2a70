import Foundation
import HTTPTypes
import Hummingbird

/// The headers every response of the web server carries (docs/WEB.md, "Headers"): a content
/// security policy without inline script or style, no MIME sniffing, no referrer, no
/// framing; API answers are never cached. It wraps everything else, so error answers —
/// including a 404 for an unknown path — carry them too.
struct SecurityHeadersMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext

    let errors: WebErrorMiddleware

    static let contentSecurityPolicy = [
        "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' blob: data:",
        "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
    ].joined(separator: "; ")

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = WebErrorMiddleware.response(for: errors.apiError(for: error))
        }
        response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.referrerPolicy] = "no-referrer"
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.crossOriginOpenerPolicy] = "same-origin"
        response.headers[.crossOriginResourcePolicy] = "same-origin"
        if request.uri.path.hasPrefix("/api/") || request.uri.path == "/api" {
            response.headers[.cacheControl] = "no-store"
        } else if response.headers[.cacheControl] == nil {
            // The client's files change with the daemon: revalidate rather than keep stale copies.
            response.headers[.cacheControl] = "no-cache"
        }
        return response
    }
}
