import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP exchange's answer, read up to a limit.
struct SyncHTTPResponse: Sendable {
    let status: Int
    let body: Data
}

/// HTTP through Foundation's `URLSession` (libcurl on Linux): answers are read into memory up
/// to a limit and the transfer is cancelled beyond it, redirects are not followed (a password
/// or a token is never sent on to another address), and every failure is a ``SyncClientError``.
final class SyncHTTP: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct Transfer {
        var body = Data()
        let limit: Int
        let continuation: CheckedContinuation<SyncHTTPResponse, any Error>
        var overLimit = false
    }

    // The session is set once in init and is thread-safe; transfers are guarded by the mutex.
    private var session: URLSession!
    private let transfers = Mutex<[Int: Transfer]>([:])

    /// - Parameter timeout: seconds a request may wait for the server between bytes.
    init(timeout: TimeInterval) {
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout * 4
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    /// Lets the session go once its transfers end. A session holds its delegate (this object)
    /// until it is invalidated, so the owner calls this when it is done with it.
    func invalidate() {
        session.finishTasksAndInvalidate()
    }

    /// Sends `request` and reads the answer, at most `limit` bytes.
    /// - Throws: ``SyncClientError/unreachable(_:)``, ``SyncClientError/tooLarge(limit:)``.
    func send(_ request: URLRequest, limit: Int) async throws -> SyncHTTPResponse {
        let task = session.dataTask(with: request)
        let id = task.taskIdentifier
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfers.withLock { $0[id] = Transfer(limit: limit, continuation: continuation) }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let over = transfers.withLock { transfers -> Bool in
            guard var transfer = transfers[dataTask.taskIdentifier] else { return false }
            guard transfer.body.count + data.count <= transfer.limit else {
                transfer.overLimit = true
                transfers[dataTask.taskIdentifier] = transfer
                return true
            }
            transfer.body.append(data)
            transfers[dataTask.taskIdentifier] = transfer
            return false
        }
        if over { dataTask.cancel() }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if transfer.overLimit {
            transfer.continuation.resume(throwing: SyncClientError.tooLarge(limit: transfer.limit))
        } else if let error {
            transfer.continuation.resume(throwing: SyncClientError.unreachable(Self.describe(error)))
        } else if let response = task.response as? HTTPURLResponse {
            transfer.continuation.resume(returning: SyncHTTPResponse(status: response.statusCode, body: transfer.body))
        } else {
            transfer.continuation.resume(throwing: SyncClientError.garbage("no HTTP answer"))
        }
    }

    /// What went wrong, in words that name no URL query or header (they never hold a secret,
    /// but an error message should not need them).
    static func describe(_ error: any Error) -> String {
        guard let error = error as? URLError else { return "\(type(of: error))" }
        switch error.code {
        case .cannotConnectToHost: return "connection refused"
        case .cannotFindHost, .dnsLookupFailed: return "the host name is unknown"
        case .timedOut: return "no answer in time"
        case .networkConnectionLost: return "the connection closed before the answer"
        case .cancelled: return "cancelled"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot,
            .serverCertificateNotYetValid:
            return "the TLS connection failed (is the server's certificate trusted by this machine?)"
        default: return "URL error \(error.code.rawValue)"
        }
    }
}
