import Foundation
import TresorProtocol
import TresorSync
import TresorSyncClient

/// The socket API's answer for what went wrong with the sync server or its data: the server's
/// refusal with its code, an unreachable or garbled server, a list or key that does not verify.
/// Messages carry no password, token, key or recovery key (the errors they come from carry none),
/// and claim no more than holds: a sync cut at one step keeps what its steps before committed.
enum SyncAPIErrors {
    static func from(_ error: any Error) -> any Error {
        switch error {
        case let error as SyncClientError:
            switch error {
            case .badServerURL: return APIError(.param, error.description)
            case .unreachable, .garbage, .tooLarge, .untrustedServer, .attachmentsUnsupported:
                return APIError(.unavailable, error.description + "; nothing of it was applied here — try again once it answers")
            case .unsupported, .badCertificateAuthority: return APIError(.param, error.description)
            case .refused(_, let code, _):
                switch code {
                case .unauthorized: return APIError(.authFailed, error.description)
                case .deviceRemoved:
                    return APIError(.forbidden, "this device was removed from its sync account: `tresor sync leave` (its data stays)")
                case .devicePending, .forbidden: return APIError(.forbidden, error.description)
                case .notFound: return APIError(.notFound, error.description)
                case .throttled: return APIError(.throttled, error.description)
                case .invalid, .tooLarge: return APIError(.param, error.description)
                case .unavailable, .internal: return APIError(.unavailable, error.description)
                case .expired, .staleDeviceList, .conflict: return APIError(.conflict, error.description)
                }
            }
        case SyncError.lockedSinceStart:
            return APIError(.interactionNotAllowed, SyncError.lockedSinceStart.description + "; nothing was synced")
        case let error as SyncError:
            return APIError(.conflict, "refused what the sync server sent: \(error.description); nothing of it was applied")
        default:
            return error
        }
    }

    /// Runs `body`, turning sync errors into the socket API's.
    static func mapped<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw from(error)
        }
    }
}
