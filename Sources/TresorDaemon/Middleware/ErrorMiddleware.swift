import Foundation
import Hummingbird
import Logging
import NIOCore
import TresorBackup
import TresorKeybag
import TresorKeychain
import TresorNotes
import TresorNotesDomain
import TresorProtocol
import TresorStorage
import TresorSystem
import TresorWebServer

/// Turns every failure into the API's error body (`{"error": {...}}`) with a fitting HTTP
/// status. Messages come from typed errors that carry no secret; anything unexpected is
/// reported by its type only.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = DaemonRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return Self.response(for: Self.apiError(for: error, path: request.uri.path, logger: context.logger))
        }
    }

    /// The API error a request's failure is answered with; an internal one is logged (by its
    /// message, which names types, never values).
    static func apiError(for error: any Error, path: String, logger: Logger) -> APIError {
        let apiError = apiError(for: error)
        if apiError.code == .internal {
            logger.error("request failed", metadata: ["path": "\(path)", "error": "\(apiError.message)"])
        }
        return apiError
    }

    static func response(for error: APIError) -> Response {
        let complete = completeResponse(for: error)
        return Response(status: complete.head.status, headers: complete.head.headerFields, body: .init(byteBuffer: complete.body))
    }

    /// The error's status, headers and JSON body — also for requests the socket's transport
    /// refuses before the router runs (``SocketRequestHandler``).
    static func completeResponse(for error: APIError) -> CompleteResponse {
        // Encoding these few strings cannot fail; if it ever did, the status still says enough.
        let body = (try? DaemonJSON.encoder.encode(ErrorResponse(error: error))) ?? Data()
        var head = HTTPResponse(status: error.code.httpStatus)
        head.headerFields[.contentType] = "application/json"
        if let retry = error.retryAfterSeconds { head.headerFields[.retryAfter] = String(retry) }
        return CompleteResponse(head: head, body: ByteBuffer(bytes: body))
    }

    static func apiError(for error: any Error) -> APIError {
        // A full or read-only disk, whichever store or file refused the write, in one answer.
        if let refusal = StorageRefusal(error) { return apiError(for: refusal) }
        // Any other SQLite failure (a failing disk: `SQLITE_IOERR`) in the words the keychain uses.
        if let failure = DatabaseFailure(error) { return APIError(.internal, "storage error: \(failure)") }
        switch error {
        case let error as APIError:
            return error
        case let error as KeybagError:
            return apiError(for: error)
        case let error as KeychainError:
            return apiError(for: error)
        case let error as NotesError:
            return apiError(for: error)
        case let error as BackupError:
            return apiError(for: error)
        case let error as StagedStatementError:
            return APIError(.conflict, error.description)
        case let error as UnknownAttributeError:
            return apiError(for: KeychainError.param(error.description))
        case is NIOTooManyBytesError:
            return APIError(.requestTooLarge, "the request is larger than \(APIVersion.maximumRequestBytes) bytes")
        case let error as HTTPError where error.status == .contentTooLarge:
            return APIError(.requestTooLarge, "the request is larger than \(APIVersion.maximumRequestBytes) bytes")
        case let error as HTTPError where error.status == .notFound || error.status == .methodNotAllowed:
            return APIError(.notFound, "no such route or method (see docs/API.md)")
        case is DecodingError:
            // DecodingError's own text may quote the offending value: never pass it on.
            return APIError(.param, "malformed request body: expected the JSON documented in docs/API.md")
        case let error as HTTPError where error.status == .badRequest:
            // Hummingbird wraps JSON decoding failures this way. Its messages about a missing key
            // or a wrong type name only the key and the type; any other text may quote the input.
            let message = error.body ?? ""
            let safe = ["Coding key", "Value not found", "Type mismatch"].contains { message.hasPrefix($0) }
            return APIError(
                .param, safe ? "malformed request body: \(message)" : "malformed request body: expected the JSON documented in docs/API.md")
        default:
            return APIError(.internal, "internal error (\(type(of: error)))")
        }
    }

    static func apiError(for refusal: StorageRefusal) -> APIError {
        switch refusal {
        case .diskFull: return APIError(.diskFull, refusal.description)
        case .diskReadOnly: return APIError(.diskReadOnly, refusal.description)
        }
    }

    static func apiError(for error: KeychainError) -> APIError {
        let message = error.description
        switch error {
        case .duplicateItem: return APIError(.duplicateItem, message)
        case .itemNotFound: return APIError(.itemNotFound, message)
        case .interactionNotAllowed: return APIError(.interactionNotAllowed, message)
        case .authFailed(_, let wait): return APIError(.authFailed, message, retryAfterSeconds: wait)
        case .throttled(_, let wait): return APIError(.throttled, message, retryAfterSeconds: wait)
        case .presenceRequired: return APIError(.passcodeRequired, message)
        case .missingEntitlement: return APIError(.missingEntitlement, message)
        case .param: return APIError(.param, message)
        case .decode: return APIError(.decode, message)
        case .readOnly: return APIError(.readOnly, message)
        case .noSuchKeychain: return APIError(.noSuchKeychain, message)
        case .storage: return APIError(.internal, message)
        }
    }

    /// Notes failures. Messages come from `NotesError.description`, which names notes,
    /// attachments and passphrase generations but never their content or a passphrase.
    static func apiError(for error: NotesError) -> APIError {
        let message = error.description
        switch error {
        case .notFound: return APIError(.notFound, message)
        case .invalid: return APIError(.param, message)
        case .contentUnavailable: return APIError(.interactionNotAllowed, message)
        case .passphraseRequired(let lock): return APIError(.passphraseRequired, message, lock: lock)
        case .wrongPassphrase(let failures, let hint, let wait):
            return APIError(.wrongPassphrase, message, retryAfterSeconds: wait, hint: hint, failedAttempts: failures)
        case .throttled(let wait, let hint): return APIError(.throttled, message, retryAfterSeconds: wait, hint: hint)
        case .noPassphrase: return APIError(.noPassphrase, message)
        case .passphraseAlreadySet: return APIError(.passphraseAlreadySet, message)
        case .wrongLockState: return APIError(.wrongLockState, message)
        case .attachmentNotLockable: return APIError(.attachmentNotLockable, message)
        case .damaged: return APIError(.decode, message)
        case .nameTaken, .conflict: return APIError(.conflict, message)
        case .staleRevision(let current): return APIError(.conflict, message, revision: current)
        case .forbidden: return APIError(.forbidden, message)
        case .unavailable: return APIError(.unavailable, message, retryAfterSeconds: 5)
        case .quotaExceeded: return APIError(.quotaExceeded, message)
        }
    }

    /// Backup failures: a wrong passphrase is `authFailed`; a damaged, cut, foreign or unknown
    /// file `decode`; the file's path `param`; a locked home `interactionNotAllowed`.
    static func apiError(for error: BackupError) -> APIError {
        let message = error.description
        switch error {
        case .file(.wrongPassphrase): return APIError(.authFailed, message)
        case .file, .notABackup, .unsupportedVersion, .damaged, .forbidden: return APIError(.decode, message)
        case .io, .notInBackup: return APIError(.param, message)
        case .busy, .cancelled: return APIError(.conflict, message)
        case .homeUnavailable: return APIError(.interactionNotAllowed, message)
        }
    }

    static func apiError(for error: KeybagError) -> APIError {
        let message = error.description
        switch error {
        case .notInitialized: return APIError(.notInitialized, message)
        case .alreadyInitialized: return APIError(.alreadyInitialized, message)
        case .deviceKeyMissing, .deviceKeyNamedForAnotherPath, .deviceKeyCorrupted, .fileCorrupted, .unsupportedVersion, .storage:
            return APIError(.keybagDamaged, message)
        case .wrongPasscode(_, let retry): return APIError(.authFailed, message, retryAfterSeconds: retry)
        case .throttled(_, let retry): return APIError(.throttled, message, retryAfterSeconds: retry)
        case .passcodeRequired: return APIError(.passcodeRequired, message)
        case .noPasscodeSet: return APIError(.noPasscodeSet, message)
        case .invalidPasscode: return APIError(.param, message)
        case .classUnavailable, .classKeyAbsent: return APIError(.interactionNotAllowed, message)
        case .loginNotLinked: return APIError(.notFound, message)
        case .loginPasswordDidNotOpen(let retry): return APIError(.authFailed, message, retryAfterSeconds: retry)
        case .loginLinkThrottled(let retry): return APIError(.throttled, message, retryAfterSeconds: retry)
        }
    }
}
