import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// One HTTP exchange's answer, read up to a limit.
struct SyncHTTPResponse: Sendable {
    let status: Int
    let body: Data
}

/// A request to the relay: method, URL, headers and an optional JSON body.
struct SyncHTTPRequest: Sendable {
    var method: String
    var url: URL
    var headers: [(String, String)] = []
    var body: Data?
}

/// HTTP through one AsyncHTTPClient `HTTPClient` (SwiftNIO; TLS by swift-nio-ssl): answers are
/// read into memory up to a limit, redirects are not followed (a password or a token is never
/// sent on to another address), and every failure is a ``SyncClientError``. With
/// ``SyncTrust/certificateAuthorities(_:)`` the server's certificate must chain to those CAs
/// and no other; otherwise to the system's.
final class SyncHTTP: Sendable {
    private let client: HTTPClient
    private let timeout: TimeInterval

    /// - Parameters:
    ///   - timeout: seconds a request may wait for the server between bytes.
    ///   - trust: which certificate authorities an `https://` server's certificate must chain to.
    init(timeout: TimeInterval, trust: SyncTrust) {
        var tls = TLSConfiguration.makeClientConfiguration()
        if case .certificateAuthorities(let certificates) = trust.kind { tls.trustRoots = .certificates(certificates) }
        let seconds = TimeAmount.milliseconds(Int64(timeout * 1000))
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow, timeout: .init(connect: seconds, read: seconds),
            decompression: .disabled)
        configuration.connectionPool = .init(idleTimeout: .seconds(60))
        // A refused connection or an untrusted certificate is said at once (else the pool retries
        // until the connect timeout); the caller tries again later, as a device syncs again anyway.
        configuration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        self.timeout = timeout
    }

    /// Closes the connections and releases the client; no request may follow.
    func shutdown() async {
        try? await client.shutdown()
    }

    /// Closes the connections once the requests still running end; for the owner's `deinit`.
    func shutdownWhenDone() {
        client.shutdown { _ in }
    }

    /// Sends `request` and reads the answer, at most `limit` bytes.
    /// - Throws: ``SyncClientError/unreachable(_:)``, ``SyncClientError/untrustedServer(_:)``,
    ///   ``SyncClientError/tooLarge(limit:)``.
    func send(_ request: SyncHTTPRequest, limit: Int) async throws -> SyncHTTPResponse {
        do {
            let response = try await client.execute(Self.prepared(request), timeout: .seconds(Int64(timeout * 4)))
            let body = try await response.body.collect(upTo: limit)
            return SyncHTTPResponse(status: Int(response.status.code), body: Data(body.readableBytesView))
        } catch is NIOTooManyBytesError {
            throw SyncClientError.tooLarge(limit: limit)
        } catch {
            throw Self.failure(error)
        }
    }

    /// Sends `request` with its body streamed from `body` — exactly `length` bytes, read a piece
    /// at a time as the connection takes them — and reads the answer, at most `limit` bytes.
    /// The whole exchange may last as long as such a body takes at 256 KiB/s; between bytes,
    /// the client's timeout holds.
    /// - Throws: as ``send(_:limit:)``.
    func send<Body: AsyncSequence & Sendable>(
        _ request: SyncHTTPRequest, streaming body: Body, length: Int, limit: Int
    ) async throws -> SyncHTTPResponse where Body.Element == ByteBuffer {
        var prepared = Self.prepared(request)
        prepared.body = .stream(body, length: .known(Int64(length)))
        do {
            let response = try await client.execute(prepared, timeout: .seconds(Int64(timeout * 4) + Int64(length / (256 * 1024))))
            let answer = try await response.body.collect(upTo: limit)
            return SyncHTTPResponse(status: Int(response.status.code), body: Data(answer.readableBytesView))
        } catch is NIOTooManyBytesError {
            throw SyncClientError.tooLarge(limit: limit)
        } catch {
            throw Self.failure(error)
        }
    }

    /// Opens `request` as a stream: the status, and the body as it arrives (a live-events
    /// stream, which lasts until the server ends it, the connection drops or the task is cancelled).
    /// - Throws: as ``send(_:limit:)``.
    func open(_ request: SyncHTTPRequest, for duration: TimeInterval) async throws -> (status: Int, body: HTTPClientResponse.Body) {
        do {
            let response = try await client.execute(Self.prepared(request), timeout: .seconds(Int64(duration)))
            return (Int(response.status.code), response.body)
        } catch {
            throw Self.failure(error)
        }
    }

    private static func prepared(_ request: SyncHTTPRequest) -> HTTPClientRequest {
        var prepared = HTTPClientRequest(url: request.url.absoluteString)
        prepared.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { prepared.headers.add(name: name, value: value) }
        if let body = request.body { prepared.body = .bytes(ByteBuffer(bytes: body)) }
        return prepared
    }

    /// A failure as a ``SyncClientError``, in words that name no header or query (they never
    /// hold a secret, but an error message should not need them).
    static func failure(_ error: any Error) -> SyncClientError {
        if let error = error as? SyncClientError { return error }
        if error is CancellationError { return .unreachable("cancelled") }
        if let error = error as? NIOSSLError { return .untrustedServer(describe(tls: "\(error)")) }
        if error is NIOSSLExtraError { return .untrustedServer(describe(tls: "\(error)")) }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout, .readTimeout, .deadlineExceeded: return .unreachable("no answer in time")
            case .remoteConnectionClosed: return .unreachable("the connection closed before the answer")
            case .cancelled: return .unreachable("cancelled")
            default: return .unreachable("\(error)".prefix(300).description)
            }
        }
        if let error = error as? IOError { return .unreachable(describe(socket: error.errnoCode)) }
        let text = "\(error)"
        if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("handshakeFailed") {
            return .untrustedServer(describe(tls: text))
        }
        if text.contains("ECONNREFUSED") || text.lowercased().contains("connection refused") { return .unreachable("connection refused") }
        if text.contains("dnsAAAAError") || text.contains("dnsAError") || text.contains("NXDOMAIN") {
            return .unreachable("the host name is unknown")
        }
        return .unreachable("\(type(of: error)): \(text.prefix(300))")
    }

    /// A socket's failure in words: what happened, not the system call that saw it.
    static func describe(socket errnoCode: Int32) -> String {
        switch errnoCode {
        case ECONNRESET: return "the connection was reset (the server, or something in between, stopped or dropped it mid-request)"
        case EPIPE: return "the connection closed while the request was sent"
        case ECONNREFUSED: return "connection refused"
        case ETIMEDOUT: return "no answer in time"
        case ENETUNREACH, EHOSTUNREACH: return "no route to the server's network"
        default: return String(cString: strerror(errnoCode))
        }
    }

    private static func describe(tls text: String) -> String {
        if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate verify failed") {
            return "its certificate does not chain to a trusted certificate authority (give the server's CA with --ca-file)"
        }
        if text.contains("hostname") || text.contains("Hostname") {
            return "its certificate is not for this host name"
        }
        return "the TLS handshake failed: \(text.prefix(300))"
    }
}

/// Which certificate authorities a sync client trusts for `https://` servers: the system's, or
/// only the user's own (a server whose certificate a private CA issued: `--ca-file`).
public struct SyncTrust: Sendable {
    enum Kind: Sendable {
        case system
        case certificateAuthorities([NIOSSLCertificate])
    }

    let kind: Kind

    /// The system's certificate authorities.
    public static let system = SyncTrust(kind: .system)

    /// Only the certificate authorities in `pem`, none of the system's.
    /// - Parameter pem: one or more PEM certificates.
    /// - Returns: the trust.
    /// - Throws: ``SyncClientError/badCertificateAuthority(_:)`` when `pem` holds no certificate.
    public static func certificateAuthorities(_ pem: String) throws -> SyncTrust {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
        } catch {
            throw SyncClientError.badCertificateAuthority("not PEM certificates (-----BEGIN CERTIFICATE-----)")
        }
        guard !certificates.isEmpty else { throw SyncClientError.badCertificateAuthority("no certificate in it") }
        return SyncTrust(kind: .certificateAuthorities(certificates))
    }
}
