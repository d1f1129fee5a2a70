import Foundation

/// Why the keybag refused a request. No case carries a passcode or key material.
public enum KeybagError: Error, Equatable, Sendable {
    /// The home has no keybag yet: run `tresor init`.
    case notInitialized
    /// `init` was asked for a home that already has a keybag.
    case alreadyInitialized
    /// The keybag exists but its device key (the file at `path`, outside the home) is gone:
    /// without it no class key can be unwrapped.
    case deviceKeyMissing(path: String)
    /// The device key at `path` is gone, and the key at `found`, named for another home's path,
    /// opens this keybag: the home was moved here from that path (the key is named by the path).
    case deviceKeyNamedForAnotherPath(path: String, found: String)
    /// The device key at `path` is not a 32-byte key.
    case deviceKeyCorrupted(path: String)
    /// A keybag or attempts file failed its integrity check or could not be parsed.
    case fileCorrupted(file: String, reason: String)
    /// The keybag was written by a newer Tresor.
    case unsupportedVersion(Int)
    /// The passcode was wrong. `failedAttempts` counts consecutive distinct failures;
    /// `retryAfter` is the wait before the next attempt, when one is imposed.
    case wrongPasscode(failedAttempts: Int, retryAfterSeconds: Int?)
    /// Too many wrong passcodes: the next attempt is allowed in `retryAfterSeconds`.
    case throttled(failedAttempts: Int, retryAfterSeconds: Int)
    /// A passcode is set and this operation needs it.
    case passcodeRequired
    /// The operation needs a passcode to be set, and none is.
    case noPasscodeSet
    /// The passcode is empty or too long.
    case invalidPasscode(String)
    /// The class key is not in memory in the current lock state.
    case classUnavailable(ProtectionClass, LockState)
    /// The class has no key: `whenPasscodeSetThisDeviceOnly` while no passcode is set.
    case classKeyAbsent(ProtectionClass)
    /// Reading or writing the home failed.
    case storage(String)
    /// The keybag is not linked to the login password (`tresor passcode link-login`).
    case loginNotLinked
    /// The login password did not open the login link. Never a wrong passcode: counted on the link.
    case loginPasswordDidNotOpen(retryAfterSeconds: Int?)
    /// Too many login passwords did not open the link: it takes the next in `retryAfterSeconds`.
    case loginLinkThrottled(retryAfterSeconds: Int)
}

extension KeybagError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .notInitialized:
            return "this home has no keybag yet; run `tresor init`"
        case .alreadyInitialized:
            return "this home already has a keybag"
        case .deviceKeyMissing(let path):
            return "this home's device key is missing (\(path)): the keybag cannot be opened without it; restore the file"
        case .deviceKeyNamedForAnotherPath(let path, let found):
            return
                "this home's device key is missing (\(path)), and \(found) opens its keybag: the home was moved here from another path, and its key is named for that one — rename it (`mv '\(found)' '\(path)'`), or copy it if a home still uses the old path"
        case .deviceKeyCorrupted(let path):
            return "this home's device key is damaged (\(path)): it must be exactly 32 bytes; restore the file"
        case .fileCorrupted(let file, let reason):
            return "\(file) is damaged or was altered (\(reason)); it was left as it is"
        case .unsupportedVersion(let version):
            return "the keybag has format version \(version), which this Tresor does not read"
        case .wrongPasscode(let failures, let retryAfter):
            let wait = retryAfter.map { "; next attempt allowed in \(Self.format(seconds: $0))" } ?? ""
            return "wrong passcode (\(failures) failed attempt\(failures == 1 ? "" : "s"))\(wait)"
        case .throttled(let failures, let retryAfter):
            return "too many wrong passcodes (\(failures)); try again in \(Self.format(seconds: retryAfter))"
        case .passcodeRequired:
            return "this operation needs the passcode"
        case .noPasscodeSet:
            return "no passcode is set"
        case .invalidPasscode(let reason):
            return "invalid passcode: \(reason)"
        case .classUnavailable(let protectionClass, let state):
            return "the \(protectionClass.rawValue) class key is not available while the keybag is \(state.humanName)"
        case .classKeyAbsent(let protectionClass):
            return "the \(protectionClass.rawValue) class has no key: it needs a passcode to be set"
        case .storage(let reason):
            return "keybag storage error: \(reason)"
        case .loginNotLinked:
            return "the keybag is not linked to the login password; link it with `tresor passcode link-login`"
        case .loginPasswordDidNotOpen(let retryAfter):
            let wait = retryAfter.map { "; the link takes the next in \(Self.format(seconds: $0))" } ?? ""
            return "the login password does not open the keybag (not a wrong passcode; the link is marked stale: "
                + "relink with `tresor passcode link-login`)\(wait)"
        case .loginLinkThrottled(let retryAfter):
            return "too many login passwords did not open the keybag; the link takes the next in \(Self.format(seconds: retryAfter))"
        }
    }

    static func format(seconds: Int) -> String {
        if seconds < 60 { return "\(seconds) s" }
        let minutes = (seconds + 59) / 60
        return minutes < 60 ? "\(minutes) min" : "\(minutes / 60) h \(minutes % 60) min"
    }
}

extension LockState {
    /// How the state reads in a sentence.
    public var humanName: String {
        switch self {
        case .lockedSinceStart: return "locked since the daemon started"
        case .unlocked: return "unlocked"
        case .locked: return "locked"
        }
    }
}
