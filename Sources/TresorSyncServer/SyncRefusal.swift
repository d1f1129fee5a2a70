import Foundation
import Hummingbird
import NIOCore
import TresorNotesDomain
import TresorSyncProtocol
import TresorWebStore
import TresorWebStorePostgres

/// A refusal of the sync relay: its code and a message that names no secret, no record body
/// and no account name.
struct SyncRefusal: Error, Equatable {
    var code: SyncErrorBody.Code
    var message: String
    var retryAfterSeconds: Int?

    init(_ code: SyncErrorBody.Code, _ message: String, retryAfterSeconds: Int? = nil) {
        self.code = code
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }

    static let signInFailed = SyncRefusal(.unauthorized, "sign-in refused: unknown device, wrong signature, or an expired or used challenge")
    static let removed = SyncRefusal(.deviceRemoved, "this device was removed from the sync circle: leave it (tresor sync leave)")

    var status: HTTPResponse.Status {
        switch code {
        case .invalid: .badRequest
        case .tooLarge: .contentTooLarge
        case .unauthorized: .unauthorized
        case .deviceRemoved, .devicePending, .forbidden: .forbidden
        case .notFound: .notFound
        case .expired: .gone
        case .staleDeviceList, .conflict: .conflict
        case .throttled: .tooManyRequests
        case .unavailable: .serviceUnavailable
        case .internal: .internalServerError
        }
    }

    /// Any failure in the relay's words: the database's as `unavailable` or `internal`.
    static func from(_ error: any Error) -> SyncRefusal {
        switch error {
        case let error as SyncRefusal: return error
        case NotesError.unavailable(let message): return SyncRefusal(.unavailable, message, retryAfterSeconds: 5)
        case NotesError.invalid(let message): return SyncRefusal(.invalid, message)
        case NotesError.notFound(let what): return SyncRefusal(.notFound, "\(what) not found")
        case NotesError.quotaExceeded(let message): return SyncRefusal(.tooLarge, message)
        case NotesError.wrongLockState(let message), NotesError.conflict(let message): return SyncRefusal(.conflict, message)
        case NotesError.staleRevision: return SyncRefusal(.conflict, "the note changed meanwhile; sync again")
        case is NIOTooManyBytesError: return SyncRefusal(.tooLarge, "the request is larger than this route accepts (docs/SYNC.md, \"Transport\")")
        case let error as HTTPError where error.status == .contentTooLarge:
            return SyncRefusal(.tooLarge, "the request is larger than this route accepts (docs/SYNC.md, \"Transport\")")
        case let error as DecodingError: return SyncRefusal(.invalid, "the request does not read: \(Self.describe(error))")
        case let error as ServerDatabaseError: return SyncRefusal(.internal, error.description)
        default: return SyncRefusal(.internal, "internal error")
        }
    }

    /// A decoding failure by the field it concerns, never the value.
    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing \(([path(context)] + [key.stringValue]).filter { !$0.isEmpty }.joined(separator: "."))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return "wrong type at \(path(context))"
        case .dataCorrupted(let context): return "malformed at \(path(context).isEmpty ? "the top" : path(context))"
        @unknown default: return "malformed"
        }
    }

    var response: Response {
        let body =
            (try? JSONEncoder().encode(SyncErrorBody(code: code, message: message)))
            ?? Data(#"{"code":"internal","message":"internal error"}"#.utf8)
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"]
        if let retryAfterSeconds { headers[.retryAfter] = String(retryAfterSeconds) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
