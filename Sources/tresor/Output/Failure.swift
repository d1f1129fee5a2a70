import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorProtocol
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// A failure as the CLI reports it: in the user's words with what to do (``text``), and with
/// its codes for `--verbose` (``verboseText``) and `--json` (``apiError``).
///
/// The words come from one table, ``plainWords(_:)``, one entry per kind of error.
struct Failure {
    /// The failure as the daemon's API states it (client-side failures mapped onto it).
    let apiError: APIError
    /// What went wrong, in words, and what to do; no code, no errno.
    let text: String
    /// ``text`` followed by the code, the `OSStatus` and the underlying message.
    let verboseText: String

    /// - Parameters:
    ///   - error: what the command threw.
    ///   - keychain: the keychain it worked on, if one was named (`--keychain`).
    init(_ error: any Error, keychain: String? = nil) {
        let error = ConcealedText.concealed(in: error)
        switch error {
        case let error as APIError where error.code == .interactionNotAllowed && ![nil, "login"].contains(keychain):
            apiError = error
            text = "keychain \(keychain!) is locked — run `tresor unlock --keychain \(keychain!)`"
        case let error as APIError:
            apiError = error
            text = Self.plainWords(error)
        case let error as NotesClientError:
            apiError = error.apiError
            text = Self.plainWords(error.apiError)
        case let error as ValidationError:
            apiError = APIError(.param, error.message)
            text = error.message
        case let error as TresorClientError:
            apiError = APIError(.internal, error.description)
            text = Self.plainWords(error)
        default:
            apiError = APIError(.internal, String(describing: error))
            text = apiError.message
        }
        var details = ["code \(apiError.code.rawValue)"]
        if let status = apiError.osStatus { details.append("OSStatus \(status)") }
        if case let client as TresorClientError = error, case .connectionClosedBeforeRequest(let code) = client {
            details.append("errno \(code)")
        }
        let said = apiError.message == text ? "" : "\n  details: \(apiError.message)"
        verboseText = "\(text)\n  (\(details.joined(separator: ", ")))\(said)"
    }

    /// The one table of human messages: for each kind of error the sentence people read —
    /// the daemon's own message where it already says it plainly — and what to do.
    static func plainWords(_ error: APIError) -> String {
        let said = error.message
        switch error.code {
        case .interactionNotAllowed: return "the keybag is locked — run `tresor unlock`"
        case .notInitialized: return "this home has no keybag yet — run `tresor init`"
        case .passcodeRequired:
            return
                "this needs you present: type the passcode on a terminal, give it with --passcode-stdin, or open a terminal session with `tresor unlock --for 10m`"
        case .noPasscodeSet: return "no passcode is set — set one with `tresor passcode change`"
        case .peerRejected: return "tresord refused this client: it runs as another user"
        case .itemNotFound: return "\(said) (`tresor item find` lists the items; items that sync, with `--synchronizable`)"
        case .readOnly: return "this keychain cannot be changed (System Roots is read-only)"
        case .noSuchKeychain: return "\(said) (`tresor keychain list` shows the keychains)"
        case .keybagDamaged: return "\(said) — `tresor doctor` says more"
        case .internal: return "tresord failed: \(said) (its log: `tresor daemon logs`)"
        case .passphraseRequired: return "\(said) — type its passphrase on a terminal, or give it with --passphrase-stdin"
        case .noPassphrase: return "no notes passphrase is set yet — set one with `tresor note passphrase set`"
        case .passphraseAlreadySet:
            return "a notes passphrase is set already — change it with `tresor note passphrase change` (or `reset` it if it is forgotten)"
        case .missingEntitlement: return "not allowed: \(said.replacing("missing entitlement: ", with: ""))"
        case .param, .authFailed, .throttled, .alreadyInitialized, .requestTooLarge, .notFound, .decode, .duplicateItem,
            .wrongPassphrase, .wrongLockState, .attachmentNotLockable, .unauthorized, .csrf, .forbidden, .conflict, .quotaExceeded,
            .unavailable, .diskFull, .diskReadOnly:
            return said
        }
    }

    /// Failures to reach the daemon, in words.
    static func plainWords(_ error: TresorClientError) -> String {
        switch error {
        case .connectionClosedBeforeRequest: return "tresord closed the connection before taking the request (it may be restarting) — try again"
        case .daemonNotRunning: return "tresord is not running — any tresor command starts it (`tresor daemon status`)"
        case .daemonDidNotStart(let log):
            // Its last words say why ("port 8080 is already in use — …").
            let fd = open(log, O_RDONLY | O_CLOEXEC)
            defer { if fd >= 0 { close(fd) } }
            let tail = fd >= 0 ? String(decoding: Data(readingToEndOf: fd).suffix(4096), as: UTF8.self) : ""
            guard let last = tail.split(separator: "\n").last(where: { $0.contains("tresord stopped: ") }),
                let reason = last.split(separator: "tresord stopped: ", maxSplits: 1).last
            else { return error.description }
            return "tresord did not start: \(reason) (log: \(log))"
        default: return error.description
        }
    }
}
