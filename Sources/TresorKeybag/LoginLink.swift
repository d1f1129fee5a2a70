import Crypto
import Foundation
import TresorCrypto
import TresorModel
import TresorSystem

/// What the `login-link` file holds (docs/SECURITY.md, "Unlock at login"): every class key
/// RFC 3394-wrapped a second time, under a key derived with HKDF from the device key and the
/// PBKDF2 output of the user's login password — a second key slot beside the passcode's.
/// The login password itself is never stored, and the passcode stays what it was: changing
/// the passcode re-wraps the class keys without changing them, so the link survives it.
struct LoginLinkRecord: Codable, Equatable {
    /// PBKDF2 parameters of the login password.
    var password: PBKDF2Parameters
    /// Wrapped class keys by `ProtectionClass.rawValue`.
    var wrappedClassKeys: [String: Data]
    var linkedAt: Date
    /// Why the link may no longer match the login password; nil while it matches as far as known.
    var stale: LoginLinkStaleness?
    var staleSince: Date?
    /// Login passwords that did not open the link, counted apart from wrong passcodes.
    var attempts: FailedAttempts

    static func file(_ deviceKey: DeviceKey) -> AuthenticatedFile<LoginLinkRecord> {
        AuthenticatedFile(magic: Data("TRLL".utf8), version: 1, name: "login-link", macKey: deviceKey.derive("file-mac.login-link"))
    }
}

/// Why a login link may no longer open with the login password.
public enum LoginLinkStaleness: String, Codable, Sendable {
    /// The login password was changed without the old one (root's `passwd USER`): the link
    /// still opens with the old password only.
    case passwordChangedWithoutOld
    /// A login password handed over did not open the link: it was changed where the PAM
    /// module did not see it (or someone guessed).
    case passwordDidNotOpen
}

/// The login link as `tresor status` shows it. Holds no key material.
public struct LoginLinkStatus: Sendable, Equatable {
    public var linkedAt: Date
    public var stale: LoginLinkStaleness?
    public var staleSince: Date?
    /// Distinct login passwords that did not open the link since the last one that did.
    public var failedAttempts: Int
    /// Seconds until the link takes another login password, when a delay is running.
    public var retryAfterSeconds: Int?
}

extension Keybag {
    /// The login link, nil when the keybag is not linked to the login password.
    public var loginLinkStatus: LoginLinkStatus? {
        let now = settings.clock()
        return state.withLock { state in
            state.loginLink.map {
                LoginLinkStatus(
                    linkedAt: $0.linkedAt, stale: $0.stale, staleSince: $0.staleSince, failedAttempts: $0.attempts.count,
                    retryAfterSeconds: $0.attempts.retryAfter(now: now))
            }
        }
    }

    /// Links the keybag to the login password: the class keys are wrapped a second time under
    /// it, so ``unlock(loginPassword:)`` opens the keybag. A link made before is replaced.
    /// - Parameters:
    ///   - passcode: the keybag's passcode; a wrong one is counted as by ``unlock(passcode:)``.
    ///   - loginPassword: the user's login password. Only a salt and what it wraps are kept.
    /// - Throws: `noPasscodeSet` (a keybag without a passcode is always open: nothing to link),
    ///   `wrongPasscode`, `throttled`, or a file error.
    public func linkLogin(passcode: Passcode, loginPassword: Passcode) throws {
        try slowOperations.withLock { _ in
            let record = try beginAttempt()
            guard record.passcode != nil else { throw KeybagError.noPasscodeSet }
            let passcodeKey = try derivePasscodeKey(passcode, record: record)
            let keys = try unwrapCounting(record, passcodeKey: passcodeKey, classes: ProtectionClass.allCases)
            try succeed { _ in }
            try writeLoginLink(keys: keys, loginPassword: loginPassword)
        }
    }

    /// Removes the login link; the passcode is untouched. Nothing happens when there is none.
    /// - Returns: whether there was a link.
    /// - Throws: a file error.
    @discardableResult
    public func unlinkLogin() throws -> Bool {
        try slowOperations.withLock { _ in
            guard state.withLock({ $0.loginLink }) != nil else { return false }
            try removeLoginLinkFile()
            return true
        }
    }

    /// Unlocks with the login password through the login link. A password that does not open
    /// it is never a wrong passcode: it is counted on the link (from the fifth, the link waits
    /// as the passcode does) and marks the link stale.
    /// - Parameter loginPassword: the password the user logged in or unlocked the screen with.
    /// - Throws: `loginNotLinked`, `loginPasswordDidNotOpen`, `loginLinkThrottled`, or a file error.
    public func unlock(loginPassword: Passcode) throws {
        try slowOperations.withLock { _ in
            let link = try beginLoginAttempt()
            let keys = try unwrapLoginLink(link, password: loginPassword)
            state.withLock { state in
                state.classKeys = keys
                state.lockState = .unlocked
            }
            if link.stale != nil || link.attempts.count > 0 {
                var cleared = link
                cleared.stale = nil
                cleared.staleSince = nil
                cleared.attempts = FailedAttempts()
                try saveLoginLink(cleared)
            }
        }
    }

    /// Follows a login password change (`passwd` through PAM): the link is re-wrapped under
    /// the new password. The keybag's lock state does not change.
    /// - Parameters:
    ///   - old: the login password before the change; one that does not open the link is
    ///     counted on the link as by ``unlock(loginPassword:)``.
    ///   - new: the login password after it.
    /// - Throws: as ``unlock(loginPassword:)``.
    public func changeLoginPassword(old: Passcode, to new: Passcode) throws {
        try slowOperations.withLock { _ in
            let link = try beginLoginAttempt()
            let keys = try unwrapLoginLink(link, password: old)
            try writeLoginLink(keys: keys, loginPassword: new)
        }
    }

    /// Marks the link stale (the login password changed and the PAM module could not follow);
    /// it keeps working with the old password until linked again.
    /// - Parameter reason: why.
    /// - Throws: `loginNotLinked`, or a file error.
    public func markLoginLinkStale(_ reason: LoginLinkStaleness) throws {
        try slowOperations.withLock { _ in
            guard var link = state.withLock({ $0.loginLink }) else { throw KeybagError.loginNotLinked }
            link.stale = reason
            link.staleSince = settings.clock()
            try saveLoginLink(link)
        }
    }

    // MARK: Internals

    /// Removes the `login-link` file and forgets the record.
    func removeLoginLinkFile() throws {
        SecureFiles.overwriteAndRemove(files.loginLink)
        guard !SecureFiles.exists(files.loginLink) else { throw KeybagError.storage("the login-link file could not be removed") }
        state.withLock { $0.loginLink = nil }
    }

    private func writeLoginLink(keys: [ProtectionClass: SymmetricKey], loginPassword: Passcode) throws {
        let parameters = PBKDF2Parameters.random(rounds: settings.kdfRounds, saltByteCount: 16, outputByteCount: 32)
        let passwordKey = try PBKDF2.deriveKey(from: loginPassword.text, parameters: parameters)
        var wrapped: [String: Data] = [:]
        for (protectionClass, key) in keys {
            wrapped[protectionClass.rawValue] = try KeyWrap.wrap(key, using: loginKeyEncryptionKey(protectionClass, passwordKey))
        }
        try saveLoginLink(
            LoginLinkRecord(
                password: parameters, wrappedClassKeys: wrapped, linkedAt: settings.clock(), stale: nil, staleSince: nil,
                attempts: FailedAttempts()))
    }

    private func saveLoginLink(_ link: LoginLinkRecord) throws {
        try LoginLinkRecord.file(deviceKey).write(link, to: files.loginLink)
        state.withLock { $0.loginLink = link }
    }

    /// The link to try, or the link's running delay.
    private func beginLoginAttempt() throws -> LoginLinkRecord {
        let now = settings.clock()
        guard var link = state.withLock({ $0.loginLink }) else { throw KeybagError.loginNotLinked }
        link.attempts.clamp(to: now)
        if let wait = link.attempts.retryAfter(now: now) { throw KeybagError.loginLinkThrottled(retryAfterSeconds: wait) }
        return link
    }

    /// Every class key of the link; a password that does not open it is counted on the link.
    private func unwrapLoginLink(_ link: LoginLinkRecord, password: Passcode) throws -> [ProtectionClass: SymmetricKey] {
        let passwordKey = try PBKDF2.deriveKey(from: password.text, parameters: link.password)
        do {
            var keys: [ProtectionClass: SymmetricKey] = [:]
            for protectionClass in ProtectionClass.allCases {
                guard let wrapped = link.wrappedClassKeys[protectionClass.rawValue] else { continue }
                keys[protectionClass] = try KeyWrap.unwrap(wrapped, using: loginKeyEncryptionKey(protectionClass, passwordKey))
            }
            return keys
        } catch let error as TresorCrypto.CryptoError where error == .unwrapFailed {
            let now = settings.clock()
            var failed = link
            let tag = passwordKey.withUnsafeBytes {
                MessageAuthentication.hmacSHA256($0, key: deviceKey.derive("login-link.failed-attempt-tag"))
            }
            _ = failed.attempts.record(tag: tag, at: now)
            if failed.stale == nil {
                failed.stale = .passwordDidNotOpen
                failed.staleSince = now
            }
            try saveLoginLink(failed)
            throw KeybagError.loginPasswordDidNotOpen(retryAfterSeconds: failed.attempts.retryAfter(now: now))
        }
    }

    private func loginKeyEncryptionKey(_ protectionClass: ProtectionClass, _ passwordKey: SymmetricKey) -> SymmetricKey {
        deviceKey.derive("login-link.kek." + protectionClass.rawValue, passcodeKey: passwordKey)
    }
}
