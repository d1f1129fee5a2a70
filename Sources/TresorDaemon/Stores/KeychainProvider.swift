import Foundation
import Synchronization
import TresorKeybag
import TresorKeychain
import TresorProtocol
import TresorSystem

/// The daemon's keychains: the login keychain (opened once the keybag exists), the keychains
/// the user created — each with a keybag of its own, so its own passcode and lock state —
/// and the read-only System Roots.
final class KeychainProvider: Sendable {
    private let slot: KeybagSlot
    private let settings: KeybagSettings
    private let login = Mutex<KeychainStore?>(nil)
    private let created = Mutex<[String: KeychainStore]>([:])
    private let grants = Mutex<ExecutableGrants?>(nil)
    private let lastLock = Mutex<(reason: String, at: Date)?>(nil)
    private let lastUnlock = Mutex<(means: String, at: Date)?>(nil)
    let systemRoots: SystemRoots

    init(slot: KeybagSlot, settings: KeybagSettings, systemRoots: SystemRoots = SystemRoots()) {
        self.slot = slot
        self.settings = settings
        self.systemRoots = systemRoots
    }

    var paths: TresorPaths { slot.paths }

    /// The login keychain (`notInitialized` before `tresor init`).
    func loginKeychain() throws -> KeychainStore {
        try login.withLock { login in
            if let login {
                guard login.needsReopeningToWrite else { return login }
                // Opened read-only while the file system was: opened anew now it is writable.
                login.close()
            }
            let keychain = try KeychainStore(file: paths.loginKeychain, keybag: try slot.keybag(), name: KeychainName.login)
            login = keychain
            return keychain
        }
    }

    /// The user's grants between executables of the Secret Service (`notInitialized` before
    /// `tresor init`).
    func executableGrants() throws -> ExecutableGrants {
        try grants.withLock { grants in
            if let grants { return grants }
            let made = ExecutableGrants(file: paths.executableGrants, keybag: try slot.keybag())
            grants = made
            return made
        }
    }

    /// The keychain called `name` (nil: login). System Roots is not one of these: it has no keybag.
    func keychain(named name: String?) throws -> KeychainStore {
        guard let name, name != KeychainName.login else { return try loginKeychain() }
        if let known = created.withLock({ $0[name] }) {
            guard known.needsReopeningToWrite else { return known }
            // Its keybag stays: unlocked or locked as it is.
            known.close()
            let reopened = try KeychainStore(file: Self.database(name, paths), keybag: known.keybag, name: name)
            created.withLock { $0[name] = reopened }
            return reopened
        }
        guard KeychainName.isValid(name), SecureFiles.exists(KeybagFiles.keychain(name, in: paths).keybag) else {
            throw KeychainError.noSuchKeychain(String(name.prefix(64)))
        }
        // Created by an earlier daemon: open it, locked since start.
        let keybag = try Keybag.open(files: KeybagFiles.keychain(name, in: paths), settings: settings)
        let keychain = try KeychainStore(file: Self.database(name, paths), keybag: keybag, name: name)
        return created.withLock { created in
            if let raced = created[name] { return raced }
            created[name] = keychain
            return keychain
        }
    }

    /// The keybag guarding `name` (nil: login).
    func keybag(named name: String?) throws -> Keybag {
        guard let name, name != KeychainName.login else { return try slot.keybag() }
        return try keychain(named: name).keybag
    }

    /// Creates a keychain with its own passcode; it starts unlocked.
    func create(name: String, passcode: Passcode) throws -> KeychainStore {
        guard KeychainName.isValid(name) else { throw KeychainError.param(KeychainName.rule) }
        _ = try slot.keybag()  // the home must be initialised first
        // `Login` beside `login`, `Work` beside `work`: one would hide the other's items from a
        // user who types the name as they remember it.
        if let other = ([KeychainName.login] + createdNames()).first(where: { $0 != name && $0.lowercased() == name.lowercased() }) {
            throw KeychainError.param("a keychain named \(other) exists: names differing only in case are refused")
        }
        let files = KeybagFiles.keychain(name, in: paths)
        if !SecureFiles.exists(files.keybag) {
            // A database left without its keybag can never be read: it must not be adopted.
            removeFiles(of: name)
        }
        let keybag: Keybag
        do {
            keybag = try Keybag.create(files: files, passcode: passcode, settings: settings)
        } catch KeybagError.alreadyInitialized {
            throw APIError(.duplicateItem, "a keychain named \(name) exists already (tresor keychain list)")
        }
        let keychain = try KeychainStore(file: Self.database(name, paths), keybag: keybag, name: name)
        created.withLock { $0[name] = keychain }
        return keychain
    }

    /// Deletes a created keychain: its database (with WAL and shared memory) and its keybag.
    func delete(name: String, passcode: Passcode) throws {
        let keychain = try self.keychain(named: name)
        guard name != KeychainName.login else { throw KeychainError.param("the login keychain cannot be deleted") }
        try KeychainStore.mapKeybag { try keychain.keybag.verify(passcode: passcode) }
        created.withLock { _ = $0.removeValue(forKey: name) }
        removeFiles(of: name)
    }

    /// Unlinks a created keychain's database (with WAL and shared memory), keybag and attempts file.
    private func removeFiles(of name: String) {
        let database = Self.database(name, paths).path
        let files = KeybagFiles.keychain(name, in: paths)
        for path in [database, database + "-wal", database + "-shm", files.keybag.path, files.unlockAttempts.path] {
            unlink(path)
        }
    }

    /// Every keychain with its state: login, the created ones, System Roots.
    func summaries() -> [KeychainSummary] {
        var list: [KeychainSummary] = []
        if let login = try? slot.keybag().status {
            list.append(KeychainSummary(name: KeychainName.login, state: login.lockState.rawValue, passcodeSet: login.isPasscodeSet))
        }
        for name in createdNames() {
            if let status = try? keychain(named: name).keybag.status {
                list.append(KeychainSummary(name: name, state: status.lockState.rawValue, passcodeSet: status.isPasscodeSet))
            } else {
                // Listed, not hidden: its name stays taken until the damage is dealt with.
                list.append(KeychainSummary(name: name, state: "damaged", passcodeSet: true))
            }
        }
        list.append(KeychainSummary(name: KeychainName.systemRoots, state: "readOnly", passcodeSet: false))
        return list
    }

    /// Names of the keychains on disk, sorted.
    func createdNames() -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: paths.keychainsFolder.path)) ?? []
        return files.filter { $0.hasSuffix(".keybag") }.map { String($0.dropLast(".keybag".count)) }.filter(KeychainName.isValid).sorted()
    }

    /// Locks every keychain (auto-lock, `tresor lock`), dropping their cached keys. Returns
    /// whether any was unlocked. Keychains not opened since the daemon started are locked
    /// since start already, so only the open ones are visited.
    /// - Parameter reason: why, in the user's words (`tresor status` says it while locked).
    @discardableResult
    func lockAll(because reason: String) -> Bool {
        let keybags = [try? slot.keybag()].compactMap { $0 } + created.withLock { $0.values.map(\.keybag) }
        let wasUnlocked = keybags.contains { $0.lockState == .unlocked }
        // Locking what is locked already changes nothing, not even why it is locked.
        if wasUnlocked { recordLock(because: reason) }
        keybags.forEach { $0.lock() }
        keybagLocked()
        return wasUnlocked
    }

    /// Remembers how the login keybag was unlocked last, for `tresor status`.
    /// - Parameter means: how, in the user's words ("the passcode, from /usr/bin/tresor (pid 41)").
    func recordUnlock(by means: String) {
        lastUnlock.withLock { $0 = (means, Date()) }
    }

    /// How and when the login keybag was unlocked last, if it was since the daemon started.
    var lastUnlockMeans: (means: String, at: Date)? { lastUnlock.withLock { $0 } }

    /// Remembers why the login keybag was locked last, for `tresor status`.
    func recordLock(because reason: String) {
        lastLock.withLock { $0 = (reason, Date()) }
    }

    /// Why and when the login keybag was locked last, if it was since the daemon started.
    var lastLockReason: (reason: String, at: Date)? { lastLock.withLock { $0 } }

    /// After one keybag locked: keys of unavailable classes leave the caches too, and the old
    /// ciphertext of changed rows leaves the WAL before the lock is answered.
    func keybagLocked() {
        for keychain in [login.withLock { $0 }].compactMap({ $0 }) + created.withLock({ Array($0.values) }) {
            keychain.dropUnavailableKeys()
            keychain.completePendingCheckpoint()
        }
    }

    /// Runs until cancelled: every second, each open keychain gives its rows of the classes an
    /// unlock made available their blind indexes (``KeychainStore/indexRowsOfUnlockedClasses()``),
    /// off the request threads.
    func runIndexing() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            let open = [login.withLock { $0 }].compactMap { $0 } + created.withLock { Array($0.values) }
            _ = try? await offloaded { open.forEach { $0.indexRowsOfUnlockedClasses() } }
        }
    }

    static func database(_ name: String, _ paths: TresorPaths) -> URL {
        paths.keychainsFolder.appendingPathComponent("\(name).keychain.db")
    }
}
