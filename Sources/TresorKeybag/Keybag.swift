import Crypto
import Foundation
import Synchronization
import TresorCrypto
import TresorSystem

/// The set of class keys of one home and its lock state (docs/SECURITY.md §3.5; the file:
/// docs/FORMAT.md, "Keybag payload", "Class-key wrapping").
///
/// Every class key is a random 256-bit key, RFC 3394-wrapped under a key-encryption key
/// derived with HKDF from the device key and — for every class but the `always` ones, when a
/// passcode is set — the PBKDF2 output of the passcode. So neither the files with the passcode
/// nor the device key without it open a passcode-protected class key.
///
/// ```swift
/// let keybag = try Keybag.open(paths: TresorPaths())        // locked since start
/// try keybag.unlock(passcode: Passcode("correct horse"))
/// let key = try keybag.classKey(for: .whenUnlocked)
/// keybag.lock()                                             // whenUnlocked keys dropped
/// ```
public final class Keybag: Sendable {
    public let files: KeybagFiles
    let settings: KeybagSettings
    let deviceKey: DeviceKey
    let state: Mutex<State>
    /// Serialises the operations that run the KDF or write files, without holding `state`
    /// (and so blocking key lookups) for the length of a PBKDF2 run.
    let slowOperations = Mutex(())

    struct State {
        var record: KeybagRecord
        var lockState: LockState
        var classKeys: [ProtectionClass: SymmetricKey]
        var attempts: FailedAttempts
        var attemptsFileDamaged = false
        /// A failure the file does not hold yet (its write failed): no attempt is taken until
        /// it is written (``beginAttempt()``).
        var attemptsUnsaved = false
        /// How many times the keybag went from unlocked to locked since it was opened.
        var locks = 0
        /// The login link's record (`tresor passcode link-login`), nil when none is made.
        var loginLink: LoginLinkRecord?
    }

    private init(files: KeybagFiles, settings: KeybagSettings, deviceKey: DeviceKey, state: State) {
        self.files = files
        self.settings = settings
        self.deviceKey = deviceKey
        self.state = Mutex(state)
    }

    // MARK: Creating and opening

    /// Creates the keybag of a new home — the device key (unless a previous, interrupted
    /// `create` left one) and a key for every class — and returns it unlocked.
    /// `whenPasscodeSetThisDeviceOnly` gets a key only when a passcode is given.
    public static func create(paths: TresorPaths, passcode: Passcode?, settings: KeybagSettings = .production) throws -> Keybag {
        try create(files: KeybagFiles(paths: paths), passcode: passcode, settings: settings)
    }

    /// Creates the keybag at `files` (a created keychain's); see ``create(paths:passcode:settings:)``.
    public static func create(files: KeybagFiles, passcode: Passcode?, settings: KeybagSettings = .production) throws -> Keybag {
        guard !SecureFiles.exists(files.keybag) else { throw KeybagError.alreadyInitialized }
        do {
            try SecureFiles.createDirectory(files.folder)
        } catch {
            throw KeybagError.storage(String(describing: error))
        }
        try DeviceKey.moveOutOfHome(from: files.legacyDeviceKey, to: files.deviceKey)
        let deviceKey = try DeviceKey.loadOrCreate(at: files.deviceKey)
        // A login link left by a keybag deleted by hand wraps keys this keybag does not have.
        SecureFiles.overwriteAndRemove(files.loginLink)
        var keys: [ProtectionClass: SymmetricKey] = [:]
        for protectionClass in ProtectionClass.allCases where passcode != nil || !protectionClass.requiresPasscode {
            keys[protectionClass] = SecureRandom.key(bitCount: 256)
        }
        let passcodeKey = try passcode.map { try Self.newPasscodeKey($0, settings: settings) }
        let record = try Self.wrap(keys, deviceKey: deviceKey, passcode: passcodeKey, generation: 1, now: settings.clock())
        // The attempts file first: a keybag that requires it never exists without it.
        try FailedAttempts.file(deviceKey).write(FailedAttempts(generation: record.generation), to: files.unlockAttempts)
        try KeybagRecord.file(deviceKey).write(record, to: files.keybag)
        return Keybag(
            files: files, settings: settings, deviceKey: deviceKey,
            state: State(record: record, lockState: .unlocked, classKeys: keys, attempts: FailedAttempts()))
    }

    /// Opens an existing keybag. It starts *locked since start*, holding only the `always`
    /// keys — unless no passcode is set, in which case there is nothing to wait for and every
    /// key is unwrapped at once (as on a phone without a passcode).
    public static func open(paths: TresorPaths, settings: KeybagSettings = .production) throws -> Keybag {
        try open(files: KeybagFiles(paths: paths), settings: settings)
    }

    /// Opens the keybag at `files` (a created keychain's); see ``open(paths:settings:)``.
    public static func open(files: KeybagFiles, settings: KeybagSettings = .production) throws -> Keybag {
        guard SecureFiles.exists(files.keybag) else { throw KeybagError.notInitialized }
        try DeviceKey.moveOutOfHome(from: files.legacyDeviceKey, to: files.deviceKey)
        let deviceKey: DeviceKey
        do {
            deviceKey = try DeviceKey.load(from: files.deviceKey)
        } catch KeybagError.deviceKeyMissing(let path) {
            // A home moved to another path: its key is still named for the old one.
            if let found = DeviceKey.another(opening: files.keybag, besides: files.deviceKey) {
                throw KeybagError.deviceKeyNamedForAnotherPath(path: path, found: found.path)
            }
            throw KeybagError.deviceKeyMissing(path: path)
        }
        guard let record = try KeybagRecord.file(deviceKey).read(files.keybag) else { throw KeybagError.notInitialized }
        var state = State(record: record, lockState: .lockedSinceStart, classKeys: [:], attempts: FailedAttempts())
        (state.attempts, state.attemptsFileDamaged) = try readAttempts(files: files, deviceKey: deviceKey, record: record, now: settings.clock())
        // A damaged login link only costs the link: the passcode opens, and linking again rewrites it.
        state.loginLink = try? LoginLinkRecord.file(deviceKey).read(files.loginLink)
        do {
            if record.passcode == nil {
                state.classKeys = try unwrap(record, deviceKey: deviceKey, passcode: nil, classes: ProtectionClass.allCases)
                state.lockState = .unlocked
            } else {
                let always = ProtectionClass.allCases.filter { $0.availability == .always }
                state.classKeys = try unwrap(record, deviceKey: deviceKey, passcode: nil, classes: always)
            }
        } catch {
            // The file's MAC was valid, so a failing unwrap means a damaged record, not a wrong secret.
            throw KeybagError.fileCorrupted(file: "keybag", reason: "a class key does not unwrap")
        }
        return Keybag(files: files, settings: settings, deviceKey: deviceKey, state: state)
    }

    /// The failed attempts of `record`'s keybag, failing closed: a file that is damaged, missing
    /// (where the keybag requires it) or older than the keybag's generation is a lockout as
    /// after five failures (``FailedAttempts/assumedAfterDamage(now:)``), never a reset. A
    /// keybag from before the file was required gets it now, then the requirement.
    private static func readAttempts(
        files: KeybagFiles, deviceKey: DeviceKey, record: KeybagRecord, now: Date
    ) throws -> (FailedAttempts, damaged: Bool) {
        let read: FailedAttempts?
        do {
            read = try FailedAttempts.file(deviceKey).read(files.unlockAttempts)
        } catch {
            return (.assumedAfterDamage(now: now), true)
        }
        guard var attempts = read else {
            guard record.attemptsFileRequired == true else {
                // A home from before: it had no file while nothing failed. Written in this
                // order, an interruption leaves a file and an old keybag, which comes here again.
                try FailedAttempts.file(deviceKey).write(FailedAttempts(generation: record.generation), to: files.unlockAttempts)
                var required = record
                required.attemptsFileRequired = true
                try KeybagRecord.file(deviceKey).write(required, to: files.keybag)
                return (FailedAttempts(generation: record.generation), false)
            }
            return (.assumedAfterDamage(now: now), true)
        }
        if let generation = attempts.generation, generation < record.generation {
            return (.assumedAfterDamage(now: now), true)
        }
        attempts.generation = attempts.generation ?? record.generation
        return (attempts, false)
    }

    // MARK: State

    public var status: KeybagStatus {
        let now = settings.clock()
        return state.withLock { state in
            KeybagStatus(
                lockState: state.lockState,
                isPasscodeSet: state.record.passcode != nil,
                failedAttempts: state.attempts.count,
                retryAfterSeconds: state.attempts.retryAfter(now: now),
                availableClasses: ProtectionClass.allCases.filter { state.classKeys[$0] != nil && state.lockState.allows($0) },
                attemptsFileDamaged: state.attemptsFileDamaged)
        }
    }

    public var lockState: LockState { state.withLock { $0.lockState } }

    /// The keybag's current unlocked period, nil while it is locked. Every lock and every
    /// passcode change starts a new one, so something granted for one period — a terminal
    /// session opened with the passcode — can be checked to have ended with it.
    public var unlockPeriod: UnlockPeriod? {
        state.withLock { state in
            state.lockState == .unlocked ? UnlockPeriod(locks: state.locks, generation: state.record.generation) : nil
        }
    }

    /// The key of `protectionClass`, if the current lock state allows it.
    public func classKey(for protectionClass: ProtectionClass) throws -> SymmetricKey {
        try state.withLock { state in
            if protectionClass.requiresPasscode && state.record.passcode == nil {
                throw KeybagError.classKeyAbsent(protectionClass)
            }
            guard state.lockState.allows(protectionClass), let key = state.classKeys[protectionClass] else {
                throw KeybagError.classUnavailable(protectionClass, state.lockState)
            }
            return key
        }
    }

    /// Unlocks with the passcode (nil when none is set). A wrong passcode is counted on disk
    /// and, from the fifth, delays the next attempt.
    public func unlock(passcode: Passcode?) throws {
        try slowOperations.withLock { _ in
            let record = try beginAttempt()
            let passcodeKey = try derivePasscodeKey(passcode, record: record)
            let keys = try unwrapCounting(record, passcodeKey: passcodeKey, classes: ProtectionClass.allCases)
            try succeed { state in
                state.classKeys = keys
                state.lockState = .unlocked
            }
        }
    }

    /// Unlocks with the passcode like ``unlock(passcode:)``, except that a wrong passcode is
    /// neither counted nor delayed here, and this keybag's running delay does not apply: the
    /// caller keeps its own count. The web sign-in of the local account uses it, so a guesser
    /// there cannot lock the owner out of `tresor unlock` (docs/SECURITY.md).
    /// - Parameter passcode: the passcode to try.
    /// - Returns: whether it was right (the keybag is then unlocked and its failure count cleared).
    /// - Throws: `noPasscodeSet` when there is no passcode to check; a file error on write.
    public func unlockCountingElsewhere(passcode: Passcode) throws -> Bool {
        try slowOperations.withLock { _ in
            let record = state.withLock { $0.record }
            guard record.passcode != nil else { throw KeybagError.noPasscodeSet }
            let passcodeKey = try derivePasscodeKey(passcode, record: record)
            let keys: [ProtectionClass: SymmetricKey]
            do {
                keys = try Self.unwrap(record, deviceKey: deviceKey, passcode: passcodeKey?.key, classes: ProtectionClass.allCases)
            } catch let error as TresorCrypto.CryptoError where error == .unwrapFailed {
                return false
            }
            try succeed { state in
                state.classKeys = keys
                state.lockState = .unlocked
            }
            return true
        }
    }

    /// Checks the passcode without changing the lock state — the "enter your passcode again"
    /// of user presence and app registration. Counts failures like ``unlock(passcode:)``.
    public func verify(passcode: Passcode) throws {
        try slowOperations.withLock { _ in
            let record = try beginAttempt()
            guard record.passcode != nil else { throw KeybagError.noPasscodeSet }
            let passcodeKey = try derivePasscodeKey(passcode, record: record)
            _ = try unwrapCounting(record, passcodeKey: passcodeKey, classes: [.whenUnlocked])
            try succeed { _ in }
        }
    }

    /// Locks: drops the `whenUnlocked` and `whenPasscodeSet…` keys from memory.
    /// `afterFirstUnlock` keys stay until the daemon stops.
    public func lock() {
        state.withLock { state in
            if state.lockState == .unlocked {
                state.lockState = .locked
                state.locks += 1
            }
            state.classKeys = state.classKeys.filter { state.lockState.allows($0.key) }
        }
    }

    // MARK: Passcode

    /// Sets a new passcode, or changes it (`current` is then required). Only the class keys
    /// are re-wrapped; nothing they protect is re-encrypted. The file is replaced atomically,
    /// so a crash leaves the old or the new passcode working, never neither.
    /// Setting a first passcode creates the `whenPasscodeSetThisDeviceOnly` key.
    public func changePasscode(current: Passcode?, to new: Passcode) throws {
        try slowOperations.withLock { _ in
            let record = try beginAttempt()
            let currentKey = try derivePasscodeKey(current, record: record)
            var keys = try unwrapCounting(record, passcodeKey: currentKey, classes: ProtectionClass.allCases)
            if record.passcode == nil { keys[.whenPasscodeSetThisDeviceOnly] = SecureRandom.key(bitCount: 256) }
            let newKey = try Self.newPasscodeKey(new, settings: settings)
            try replace(record, keys: keys, passcode: newKey)
        }
    }

    /// Removes the passcode. The `whenPasscodeSetThisDeviceOnly` class key is destroyed, so
    /// the items of that class can never be read again.
    public func removePasscode(current: Passcode) throws {
        try slowOperations.withLock { _ in
            let record = try beginAttempt()
            guard record.passcode != nil else { throw KeybagError.noPasscodeSet }
            let currentKey = try derivePasscodeKey(current, record: record)
            var keys = try unwrapCounting(record, passcodeKey: currentKey, classes: ProtectionClass.allCases)
            keys[.whenPasscodeSetThisDeviceOnly] = nil
            // The login link holds the key destroyed here, and without a passcode there is
            // nothing to unlock at login: it goes first.
            try removeLoginLinkFile()
            try replace(record, keys: keys, passcode: nil)
        }
    }

    // MARK: Internals

    struct PasscodeKey {
        let parameters: PBKDF2Parameters
        let key: SymmetricKey
    }

    /// The record to work on, or the running delay.
    func beginAttempt() throws -> KeybagRecord {
        let now = settings.clock()
        let unsaved = state.withLock { $0.attemptsUnsaved ? $0.attempts : nil }
        if let unsaved {
            do {
                try FailedAttempts.file(deviceKey).write(unsaved, to: files.unlockAttempts)
            } catch {
                if let refusal = StorageRefusal(error) { throw refusal }
                throw KeybagError.storage("the failed-passcode count cannot be saved, so no passcode is tried (\(error))")
            }
            state.withLock { $0.attemptsUnsaved = false }
        }
        return try state.withLock { state in
            state.attempts.clamp(to: now)
            if let wait = state.attempts.retryAfter(now: now) {
                throw KeybagError.throttled(failedAttempts: state.attempts.count, retryAfterSeconds: wait)
            }
            return state.record
        }
    }

    func derivePasscodeKey(_ passcode: Passcode?, record: KeybagRecord) throws -> PasscodeKey? {
        guard let parameters = record.passcode else { return nil }
        guard let passcode else { throw KeybagError.passcodeRequired }
        return PasscodeKey(parameters: parameters, key: try PBKDF2.deriveKey(from: passcode.text, parameters: parameters))
    }

    static func newPasscodeKey(_ passcode: Passcode, settings: KeybagSettings) throws -> PasscodeKey {
        let parameters = PBKDF2Parameters.random(rounds: settings.kdfRounds, saltByteCount: 16, outputByteCount: 32)
        return PasscodeKey(parameters: parameters, key: try PBKDF2.deriveKey(from: passcode.text, parameters: parameters))
    }

    /// Unwraps `classes`; a failed unwrap is a wrong passcode and is counted.
    func unwrapCounting(
        _ record: KeybagRecord, passcodeKey: PasscodeKey?, classes: [ProtectionClass]
    ) throws -> [ProtectionClass: SymmetricKey] {
        do {
            return try Self.unwrap(record, deviceKey: deviceKey, passcode: passcodeKey?.key, classes: classes)
        } catch let error as TresorCrypto.CryptoError where error == .unwrapFailed && passcodeKey != nil {
            throw recordFailure(passcodeKey!.key)
        }
    }

    private func recordFailure(_ passcodeKey: SymmetricKey) -> KeybagError {
        let now = settings.clock()
        let tag = passcodeKey.withUnsafeBytes { MessageAuthentication.hmacSHA256($0, key: deviceKey.derive("failed-attempt-tag")) }
        let attempts = state.withLock { state -> FailedAttempts? in
            guard state.attempts.record(tag: tag, at: now) else { return nil }
            state.attempts.generation = state.record.generation
            return state.attempts
        }
        if let attempts {
            do {
                try FailedAttempts.file(deviceKey).write(attempts, to: files.unlockAttempts)
            } catch {
                // Fail closed: until the count is on disk, no further passcode is tried.
                state.withLock { $0.attemptsUnsaved = true }
            }
        }
        return state.withLock { state in
            .wrongPasscode(failedAttempts: state.attempts.count, retryAfterSeconds: state.attempts.retryAfter(now: now))
        }
    }

    /// Applies a successful passcode operation and clears the failure count.
    func succeed(_ change: (inout State) -> Void) throws {
        let (hadFailures, generation) = state.withLock { state in
            change(&state)
            defer {
                state.attempts = FailedAttempts(generation: state.record.generation)
                state.attemptsFileDamaged = false
            }
            return (state.attempts.count > 0 || state.attemptsFileDamaged, state.record.generation)
        }
        if hadFailures {
            try FailedAttempts.file(deviceKey).write(FailedAttempts(generation: generation), to: files.unlockAttempts)
        }
    }

    private func replace(_ record: KeybagRecord, keys: [ProtectionClass: SymmetricKey], passcode: PasscodeKey?) throws {
        let newRecord = try Self.wrap(
            keys, deviceKey: deviceKey, passcode: passcode, generation: record.generation + 1, now: settings.clock())
        // The count of the new generation first (a keybag never finds its count older than
        // itself unless the file was put back), then the keybag.
        try FailedAttempts.file(deviceKey).write(FailedAttempts(generation: newRecord.generation), to: files.unlockAttempts)
        try KeybagRecord.file(deviceKey).write(newRecord, to: files.keybag)
        try succeed { state in
            state.record = newRecord
            state.classKeys = keys
            state.lockState = .unlocked
        }
    }

    private static func keyEncryptionKey(
        for protectionClass: ProtectionClass, deviceKey: DeviceKey, passcode: SymmetricKey?
    ) -> SymmetricKey {
        deviceKey.derive("kek." + protectionClass.rawValue, passcodeKey: protectionClass.isWrappedWithPasscode ? passcode : nil)
    }

    private static func wrap(
        _ keys: [ProtectionClass: SymmetricKey], deviceKey: DeviceKey, passcode: PasscodeKey?, generation: Int, now: Date
    ) throws -> KeybagRecord {
        var wrapped: [String: Data] = [:]
        for (protectionClass, key) in keys {
            let kek = keyEncryptionKey(for: protectionClass, deviceKey: deviceKey, passcode: passcode?.key)
            wrapped[protectionClass.rawValue] = try KeyWrap.wrap(key, using: kek)
        }
        return KeybagRecord(
            passcode: passcode?.parameters, wrappedClassKeys: wrapped, generation: generation, changedAt: now, attemptsFileRequired: true)
    }

    static func unwrap(
        _ record: KeybagRecord, deviceKey: DeviceKey, passcode: SymmetricKey?, classes: [ProtectionClass]
    ) throws -> [ProtectionClass: SymmetricKey] {
        var keys: [ProtectionClass: SymmetricKey] = [:]
        for protectionClass in classes {
            guard let wrapped = record.wrappedClassKeys[protectionClass.rawValue] else { continue }
            let kek = keyEncryptionKey(for: protectionClass, deviceKey: deviceKey, passcode: passcode)
            keys[protectionClass] = try KeyWrap.unwrap(wrapped, using: kek)
        }
        return keys
    }
}

/// One stretch of time during which a keybag stayed unlocked with the same passcode
/// (``Keybag/unlockPeriod``).
public struct UnlockPeriod: Sendable, Hashable {
    let locks: Int
    let generation: Int
}
