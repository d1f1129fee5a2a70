import Crypto
import Foundation
import TresorCrypto
import TresorKeybag
import TresorSystem

extension TresorPaths {
    /// This device's sync identity: its private keys, sealed (``LocalDevice/save(to:keybag:)``).
    public var syncDeviceIdentity: URL { home.appendingPathComponent("sync-device-identity") }
}

/// Seals what only this device may ever open — its identity's private keys, the circle keys it
/// holds — as Apple keeps a device's iCloud Keychain identity: in the class
/// `afterFirstUnlockThisDeviceOnly`. The seal's key is HKDF-SHA256 of that class key (info
/// `tresor.sync.v1.` + the purpose); the class key is wrapped under this home's device key (kept
/// outside the home) and the passcode. So a copy of the home on another machine opens nothing,
/// and sync can run while the screen is locked once the keybag was unlocked after start.
enum DeviceSecrets {
    static func key(_ keybag: Keybag, purpose: String) throws -> SymmetricKey {
        let classKey: SymmetricKey
        do {
            classKey = try keybag.classKey(for: .afterFirstUnlockThisDeviceOnly)
        } catch {
            throw SyncError.lockedSinceStart
        }
        return KeyDerivation.hkdfSHA256(inputKeyMaterial: classKey, salt: Data(), info: "tresor.sync.v1." + purpose)
    }

    static func seal(_ bytes: Data, purpose: String, binding: Data, keybag: Keybag) throws -> Data {
        try Envelope.seal(bytes, using: try key(keybag, purpose: purpose), authenticating: Data(purpose.utf8) + binding)
    }

    static func open(_ sealed: Data, purpose: String, binding: Data, keybag: Keybag) throws -> Data {
        let key = try key(keybag, purpose: purpose)
        guard let bytes = try? Envelope.open(sealed, using: key, authenticating: Data(purpose.utf8) + binding) else {
            throw SyncError.deviceSecrets("the \(purpose) does not open with this home's keybag: altered, or made by another home")
        }
        return bytes
    }
}

extension LocalDevice {
    static let purpose = "device-identity"

    /// Saves this device's private keys into the home, sealed under its keybag
    /// (``DeviceSecrets``); never replaces an identity already saved (a device has one
    /// identity until it leaves the circle). Backups carry the stores' records, never this file.
    /// - Parameters:
    ///   - url: where (``TresorPaths/syncDeviceIdentity``).
    ///   - keybag: the home's login keybag, unlocked at least once since start.
    /// - Throws: ``SyncError/lockedSinceStart`` before the keybag's first unlock;
    ///   ``SyncError/deviceSecrets(_:)`` when an identity is already there, or the file cannot be written.
    public func save(to url: URL, keybag: Keybag) throws {
        var writer = CanonicalWriter(domain: "tresor.sync.v1." + Self.purpose)
        writer.append(identity.name)
        writer.append(signingKey.rawRepresentation)
        writer.append(agreementKey.rawRepresentation)
        let sealed = try DeviceSecrets.seal(writer.bytes, purpose: Self.purpose, binding: Data(), keybag: keybag)
        do {
            try SecureFiles.createExclusively(sealed, at: url)
        } catch {
            throw SyncError.deviceSecrets("the device identity is not saved at \(url.path): \(error)")
        }
    }

    /// Loads this device's identity saved by ``save(to:keybag:)``.
    /// - Parameters:
    ///   - url: where it was saved.
    ///   - keybag: the home's login keybag, unlocked at least once since start.
    /// - Returns: the device, or nil when no identity was saved (this device is in no circle).
    /// - Throws: ``SyncError/deviceSecrets(_:)`` when the file does not open with this keybag
    ///   (another home's, or altered) or the keybag is locked since start.
    public static func load(from url: URL, keybag: Keybag) throws -> LocalDevice? {
        let sealed: Data
        do {
            sealed = try SecureFiles.read(url, limit: 4096)
        } catch SecureFileError.notFound {
            return nil
        } catch {
            throw SyncError.deviceSecrets("the device identity is unreadable: \(error)")
        }
        let bytes = try DeviceSecrets.open(sealed, purpose: purpose, binding: Data(), keybag: keybag)
        do {
            var reader = try CanonicalReader(bytes, domain: "tresor.sync.v1." + purpose)
            let name = try reader.readString()
            let signing = try Curve25519.Signing.PrivateKey(rawRepresentation: try reader.readData())
            let agreement = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: try reader.readData())
            try reader.finish()
            return try LocalDevice(name: name, signingKey: signing, agreementKey: agreement)
        } catch {
            throw SyncError.deviceSecrets("the device identity opens but its content is damaged")
        }
    }
}

extension CircleKeyring {
    static let purpose = "circle-keys"

    /// The keyring sealed for keeping on this device only (``DeviceSecrets``), bound to `account`.
    /// - Parameters:
    ///   - account: the sync account the keys are of.
    ///   - keybag: the home's login keybag, unlocked at least once since start.
    /// - Returns: bytes for the caller to store.
    /// - Throws: ``SyncError/lockedSinceStart`` before the keybag's first unlock.
    public func sealed(account: String, keybag: Keybag) throws -> Data {
        var writer = CanonicalWriter(domain: "tresor.sync.v1." + Self.purpose)
        writer.append(UInt64(keys.count))
        for circleKey in keys {
            writer.append(circleKey.epoch)
            circleKey.key.withUnsafeBytes { writer.append(Data($0)) }
        }
        return try DeviceSecrets.seal(writer.bytes, purpose: Self.purpose, binding: Data(account.utf8), keybag: keybag)
    }

    /// Opens a keyring ``sealed(account:keybag:)`` made.
    /// - Parameters:
    ///   - sealed: the stored bytes.
    ///   - account: the sync account they were sealed for.
    ///   - keybag: the home's login keybag, unlocked at least once since start.
    /// - Throws: ``SyncError/deviceSecrets(_:)`` when they do not open with this keybag and account.
    public init(sealed: Data, account: String, keybag: Keybag) throws {
        let bytes = try DeviceSecrets.open(sealed, purpose: Self.purpose, binding: Data(account.utf8), keybag: keybag)
        do {
            var reader = try CanonicalReader(bytes, domain: "tresor.sync.v1." + Self.purpose)
            let count = try reader.readUInt64()
            var keys: [CircleKey] = []
            for _ in 0..<min(count, 1 << 20) {
                let epoch = try reader.readUInt64()
                let key = try reader.readData()
                guard key.count == 32 else { throw SyncError.malformed("a circle key of \(key.count) bytes") }
                keys.append(CircleKey(epoch: epoch, key: SymmetricKey(data: key)))
            }
            try reader.finish()
            self.init(keys)
        } catch {
            throw SyncError.deviceSecrets("the circle keys open but their content is damaged")
        }
    }
}

extension RecoveryKey {
    static let purpose = "unfinished-join-recovery-key"

    /// The recovery key sealed for keeping on this device only (``DeviceSecrets``) while the
    /// first join that made it is unfinished, bound to the joining device: a join retried after
    /// the server stored the circle but its answer was lost shows it then, instead of leaving a
    /// circle whose recovery key nobody saw.
    /// - Parameters:
    ///   - deviceID: the joining device.
    ///   - keybag: the home's login keybag, unlocked at least once since start.
    /// - Returns: bytes for the caller to store until the join finishes.
    /// - Throws: ``SyncError/lockedSinceStart`` before the keybag's first unlock.
    public func sealed(deviceID: String, keybag: Keybag) throws -> Data {
        try DeviceSecrets.seal(Data(text.utf8), purpose: Self.purpose, binding: Data(deviceID.utf8), keybag: keybag)
    }

    /// Opens a recovery key ``sealed(deviceID:keybag:)`` made.
    /// - Parameters:
    ///   - sealed: the stored bytes.
    ///   - deviceID: the joining device they were sealed for.
    ///   - keybag: the home's login keybag, unlocked at least once since start.
    /// - Throws: ``SyncError/deviceSecrets(_:)`` when they do not open with this keybag and device.
    public init(sealed: Data, deviceID: String, keybag: Keybag) throws {
        let bytes = try DeviceSecrets.open(sealed, purpose: Self.purpose, binding: Data(deviceID.utf8), keybag: keybag)
        guard let text = String(data: bytes, encoding: .utf8), let key = try? RecoveryKey(text: text) else {
            throw SyncError.deviceSecrets("the unfinished join's recovery key opens but is damaged")
        }
        self = key
    }
}
