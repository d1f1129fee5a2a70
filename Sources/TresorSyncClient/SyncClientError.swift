import Foundation
import TresorSyncProtocol

/// Why a request to a sync server failed. No case carries a password, a token, a key or a
/// record: the server's refusals carry its code and its message, which name no secret either.
public enum SyncClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The server's address is not one a device uses (``SyncServerURL``).
    case badServerURL(String)
    /// The server answered with a refusal (``SyncErrorBody``): its HTTP status, code and message.
    case refused(status: Int, code: SyncErrorBody.Code, message: String)
    /// The server could not be reached (connection refused, name unknown, timed out, TLS failed).
    case unreachable(String)
    /// The server answered something that is not the relay's answer (not JSON of the expected
    /// shape, an unexpected status).
    case garbage(String)
    /// The server's answer is larger than any answer of the relay.
    case tooLarge(limit: Int)
    /// The feature is not available with this build's HTTP client.
    case unsupported(String)
    /// The `https://` server's certificate is not one this device trusts (its CA is not the
    /// given one, or not the system's; another host's; expired), or the TLS handshake failed.
    case untrustedServer(String)
    /// The certificate authorities given to trust are not PEM certificates.
    case badCertificateAuthority(String)
    /// The server has no attachment routes (an older Tresor server): notes and items sync,
    /// attachments wait.
    case attachmentsUnsupported

    /// The refusal's code, when the server refused.
    public var refusalCode: SyncErrorBody.Code? {
        if case .refused(_, let code, _) = self { return code }
        return nil
    }

    public var description: String {
        switch self {
        case .badServerURL(let why): return "bad sync server URL: \(why)"
        case .refused(let status, let code, let message): return "the sync server refused (\(status) \(code.rawValue)): \(message)"
        case .unreachable(let why): return "the sync server cannot be reached: \(why)"
        case .garbage(let what): return "the sync server's answer is not understood: \(what)"
        case .tooLarge(let limit): return "the sync server's answer is over \(limit) bytes"
        case .unsupported(let what): return what
        case .untrustedServer(let why): return "the sync server is not trusted: \(why)"
        case .badCertificateAuthority(let why): return "the certificate authority file is not usable: \(why)"
        case .attachmentsUnsupported: return "the sync server takes no attachments (an older Tresor server): they wait"
        }
    }
}
