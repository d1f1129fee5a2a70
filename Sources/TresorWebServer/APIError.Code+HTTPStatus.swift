import Hummingbird
import TresorProtocol

extension APIError.Code {
    /// The HTTP status an error of this code is answered with on the daemon's socket; the web
    /// server answers with the same, but for the few a browser reads otherwise
    /// (``WebErrorMiddleware/status(for:)``).
    package var httpStatus: HTTPResponse.Status {
        switch self {
        case .param: return .badRequest
        case .authFailed, .passcodeRequired: return .unauthorized
        case .throttled: return .tooManyRequests
        case .interactionNotAllowed, .missingEntitlement, .peerRejected: return .forbidden
        case .notInitialized, .alreadyInitialized, .noPasscodeSet: return .conflict
        case .keybagDamaged, .internal: return .internalServerError
        case .requestTooLarge: return .contentTooLarge
        case .notFound, .itemNotFound, .noSuchKeychain: return .notFound
        case .duplicateItem: return .conflict
        case .decode: return .unprocessableContent
        case .readOnly: return .forbidden
        case .passphraseRequired, .wrongPassphrase: return .unauthorized
        case .noPassphrase, .passphraseAlreadySet, .wrongLockState, .attachmentNotLockable: return .conflict
        case .unauthorized: return .unauthorized
        case .csrf, .forbidden: return .forbidden
        case .conflict: return .conflict
        case .quotaExceeded: return .init(code: 507, reasonPhrase: "Insufficient Storage")
        case .unavailable: return .serviceUnavailable
        case .diskFull: return .init(code: 507, reasonPhrase: "Insufficient Storage")
        case .diskReadOnly: return .serviceUnavailable
        }
    }
}
