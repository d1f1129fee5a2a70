import Crypto
import Foundation
import TresorCrypto
import TresorSystem

/// The 32 random bytes created once per home: Tresor's stand-in for a device's hardware UID.
/// Every class key and file MAC depends on it. It is kept outside the home
/// (``TresorPaths/deviceKey``), so a copy or sync of the home does not carry it.
struct DeviceKey: Sendable {
    static let byteCount = 32
    let key: SymmetricKey

    /// Loads the device key, or reports it missing or damaged. Never creates one.
    static func load(from url: URL) throws -> DeviceKey {
        let bytes: Data
        do {
            bytes = try SecureFiles.read(url, limit: 4096)
        } catch SecureFileError.notFound {
            throw KeybagError.deviceKeyMissing(path: url.path)
        } catch {
            throw KeybagError.storage(String(describing: error))
        }
        guard bytes.count == byteCount else { throw KeybagError.deviceKeyCorrupted(path: url.path) }
        return DeviceKey(key: SymmetricKey(data: bytes))
    }

    /// The device key beside `expected` — named for another home's path — that opens the
    /// keybag at `keybag` (its MAC verifies), if one does: the key of a home moved from there.
    /// - Parameters:
    ///   - keybag: the keybag file.
    ///   - expected: where the home's key should be (not looked at).
    /// - Returns: the key file, or nil.
    static func another(opening keybag: URL, besides expected: URL) -> URL? {
        let folder = expected.deletingLastPathComponent()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names.sorted() where name.hasPrefix("device") && name.hasSuffix(".key") && name != expected.lastPathComponent {
            let candidate = folder.appendingPathComponent(name)
            guard let key = try? load(from: candidate), (try? KeybagRecord.file(key).read(keybag)) != nil else { continue }
            return candidate
        }
        return nil
    }

    /// Moves the device key of a home made before it moved out of the home (`legacy`) to `url`:
    /// written there first (0600, in 0700 folders), removed from the home after. A key at both
    /// places is kept at `url` when they are the same; two different keys are an error, with
    /// neither touched.
    static func moveOutOfHome(from legacy: URL, to url: URL) throws {
        guard SecureFiles.exists(legacy) else { return }
        do {
            let bytes = try SecureFiles.read(legacy, limit: 4096)
            if SecureFiles.exists(url) {
                guard try SecureFiles.read(url, limit: 4096) == bytes else {
                    throw KeybagError.storage("two different device keys, \(legacy.path) and \(url.path): keep the one this home was made with")
                }
            } else {
                try SecureFiles.createDirectory(url.deletingLastPathComponent())
                try SecureFiles.createExclusively(bytes, at: url)
            }
            try FileManager.default.removeItem(at: legacy)
        } catch let error as KeybagError {
            throw error
        } catch {
            throw KeybagError.storage(String(describing: error))
        }
    }

    /// Loads the device key if there is one, else creates it (0600, never overwriting).
    static func loadOrCreate(at url: URL) throws -> DeviceKey {
        if SecureFiles.exists(url) { return try load(from: url) }
        let key = SecureRandom.key(bitCount: byteCount * 8)
        do {
            try SecureFiles.createDirectory(url.deletingLastPathComponent())
            try key.withUnsafeBytes { try SecureFiles.createExclusively(Data($0), at: url) }
        } catch {
            throw KeybagError.storage(String(describing: error))
        }
        return DeviceKey(key: key)
    }

    /// A subkey for one purpose, optionally mixed with a passcode-derived key.
    /// Both inputs are needed to compute it: HKDF's input is the device key, its salt the
    /// passcode key (docs/FORMAT.md, "Class-key wrapping": neither the passcode alone nor the
    /// device key alone suffices).
    func derive(_ label: String, passcodeKey: SymmetricKey? = nil) -> SymmetricKey {
        let info = "tresor.keybag.v1." + label
        guard let passcodeKey else { return KeyDerivation.hkdfSHA256(inputKeyMaterial: key, salt: Data(), info: info) }
        // The salt is read where the key keeps it (zeroed when released), never copied into a
        // buffer that is not.
        return passcodeKey.withUnsafeBytes { KeyDerivation.hkdfSHA256(inputKeyMaterial: key, salt: $0, info: info) }
    }
}
