import Crypto
import Foundation
import TresorCrypto
import TresorSystem

/// The 32 random bytes created once per home (SPEC §2): Tresor's stand-in for a device's
/// hardware UID. Every class key and file MAC depends on it; it never leaves the home.
struct DeviceKey: Sendable {
    static let byteCount = 32
    let key: SymmetricKey

    /// Loads the device key, or reports it missing or damaged. Never creates one.
    static func load(from url: URL) throws -> DeviceKey {
        let bytes: Data
        do {
            bytes = try SecureFiles.read(url, limit: 4096)
        } catch SecureFileError.notFound {
            throw KeybagError.deviceKeyMissing
        } catch {
            throw KeybagError.storage(String(describing: error))
        }
        guard bytes.count == byteCount else { throw KeybagError.deviceKeyCorrupted }
        return DeviceKey(key: SymmetricKey(data: bytes))
    }

    /// Loads the device key if there is one, else creates it (0600, never overwriting).
    static func loadOrCreate(at url: URL) throws -> DeviceKey {
        if SecureFiles.exists(url) { return try load(from: url) }
        let key = SecureRandom.key(bitCount: byteCount * 8)
        do {
            try key.withUnsafeBytes { try SecureFiles.createExclusively(Data($0), at: url) }
        } catch {
            throw KeybagError.storage(String(describing: error))
        }
        return DeviceKey(key: key)
    }

    /// A subkey for one purpose, optionally mixed with a passcode-derived key.
    /// Both inputs are needed to compute it: HKDF's input is the device key, its salt the
    /// passcode key (SPEC §3.4: neither the passcode alone nor the device key alone suffices).
    func derive(_ label: String, passcodeKey: SymmetricKey? = nil) -> SymmetricKey {
        let salt = passcodeKey.map { $0.withUnsafeBytes { Data($0) } } ?? Data()
        return KeyDerivation.hkdfSHA256(inputKeyMaterial: key, salt: salt, info: "tresor.keybag.v1." + label)
    }
}
