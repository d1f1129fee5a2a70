import Crypto
import Foundation
import Synchronization
import TresorCrypto
import TresorKeybag
import TresorSystem

/// The user's grants of one executable's Secret Service items to another
/// (``ExecutableGrant``), kept in one sealed file of the home.
///
/// The file is sealed (AES-256-GCM) under a key derived from the
/// `afterFirstUnlockThisDeviceOnly` class key, like the application registry: a process of the
/// same user that writes the home cannot grant itself anything without the passcode, and a
/// copy of the home does not say which programs the user runs. Grants are read after the
/// first unlock following a daemon start.
public final class ExecutableGrants: Sendable {
    private let file: URL
    private let keybag: Keybag
    private let cache = Mutex<[ExecutableGrant]?>(nil)
    /// The most grants kept (each is a line a person wrote).
    public static let capacity = 10_000

    /// - Parameters:
    ///   - file: where the sealed grants live.
    ///   - keybag: the keybag whose `afterFirstUnlockThisDeviceOnly` key seals them.
    public init(file: URL, keybag: Keybag) {
        self.file = file
        self.keybag = keybag
    }

    /// Every grant, sorted.
    /// - Throws: ``KeychainError/interactionNotAllowed(_:)`` before the first unlock,
    ///   ``KeychainError/decode(_:)`` when the file is damaged or was altered.
    public func list() throws -> [ExecutableGrant] {
        if let cached = cache.withLock({ $0 }) { return cached }
        let key = try sealingKey()
        guard SecureFiles.exists(file) else {
            // Only `save` makes the file, and it fills the cache: none now is none until then
            // (every new Secret Service client asks).
            cache.withLock { $0 = [] }
            return []
        }
        let grants: [ExecutableGrant]
        do {
            let sealed = try SecureFiles.read(file, limit: 16 * 1024 * 1024)
            let json = try Envelope.open(sealed, using: key, authenticating: Self.associatedData)
            grants = try JSONDecoder().decode([ExecutableGrant].self, from: json)
        } catch {
            throw KeychainError.decode("\(file.lastPathComponent) is damaged or was altered; it was left as it is")
        }
        cache.withLock { $0 = grants }
        return grants
    }

    /// The groups granted to the executable whose own group is `grantee`.
    public func groups(grantedTo grantee: String) throws -> [String] {
        try list().filter { $0.grantee == grantee }.compactMap(\.group)
    }

    /// The items granted one by one to the executable whose own group is `grantee`.
    public func items(grantedTo grantee: String) throws -> [String] {
        try list().filter { $0.grantee == grantee }.compactMap(\.item)
    }

    /// Adds a grant (adding one that exists changes nothing).
    public func allow(_ grant: ExecutableGrant) throws {
        var grants = try list()
        guard !grants.contains(grant) else { return }
        guard grants.count < Self.capacity else { throw KeychainError.param("at most \(Self.capacity) grants") }
        grants.append(grant)
        try save(grants)
    }

    /// Removes a grant. - Throws: ``KeychainError/itemNotFound`` when there was none.
    public func revoke(_ grant: ExecutableGrant) throws {
        var grants = try list()
        guard let index = grants.firstIndex(of: grant) else { throw KeychainError.itemNotFound }
        grants.remove(at: index)
        try save(grants)
    }

    private func save(_ grants: [ExecutableGrant]) throws {
        let key = { (grant: ExecutableGrant) -> [String] in [grant.grantee, grant.group ?? "", grant.item ?? ""] }
        let sorted = grants.sorted { key($0).lexicographicallyPrecedes(key($1)) }
        let sealed = try Envelope.seal(try JSONEncoder().encode(sorted), using: try sealingKey(), authenticating: Self.associatedData)
        do {
            try SecureFiles.writeAtomically(sealed, to: file)
        } catch {
            if let refusal = StorageRefusal(error) { throw refusal }
            throw KeychainError.storage("cannot write \(file.lastPathComponent): \(error)")
        }
        cache.withLock { $0 = sorted }
    }

    private static let associatedData = Data("tresor.executable-grants.v1".utf8)

    private func sealingKey() throws -> SymmetricKey {
        let classKey = try KeychainStore.mapKeybag { try keybag.classKey(for: .afterFirstUnlockThisDeviceOnly) }
        return KeyDerivation.hkdfSHA256(inputKeyMaterial: classKey, salt: Data(), info: "tresor.executable-grants.v1")
    }
}
