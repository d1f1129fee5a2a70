import Crypto
import Foundation
import GRDB
import Synchronization
import TresorCrypto
import TresorKeybag
import TresorStorage
import TresorSystem

// Metadata keys, derived per item class and protection class and kept while their class is available.
extension KeychainStore {
    /// The metadata key of (`itemClass`, `protectionClass`) if it is in memory: a search over
    /// many rows then needs no database read per row.
    func cachedMetadataKey(_ itemClass: ItemClass, _ protectionClass: ProtectionClass) -> SymmetricKey? {
        metadataKeys.withLock { $0[Self.metadataCacheKey(itemClass, protectionClass)] }
    }

    /// The in-memory cache's key: `class/protection class` (``purge(_:)`` and
    /// ``dropUnavailableKeys()`` read the protection class back from after the slash).
    static func metadataCacheKey(_ itemClass: ItemClass, _ protectionClass: ProtectionClass) -> String {
        "\(itemClass.rawValue)/\(protectionClass.rawValue)"
    }

    func metadataKey(
        _ itemClass: ItemClass, _ protectionClass: ProtectionClass, classKey: SymmetricKey, db: Database, create: Bool
    ) throws -> SymmetricKey {
        if let cached = cachedMetadataKey(itemClass, protectionClass) { return cached }
        if let wrapped = try Data.fetchOne(
            db, sql: "SELECT wrapped_key FROM metadata_keys WHERE item_class = ? AND pdmn = ?",
            arguments: [itemClass.rawValue, protectionClass.rawValue])
        {
            let key: SymmetricKey
            do {
                key = try KeyWrap.unwrap(wrapped, using: classKey)
            } catch {
                throw KeychainError.decode("the metadata key of \(itemClass.humanName) / \(protectionClass.rawValue) items is damaged")
            }
            metadataKeys.withLock { $0[Self.metadataCacheKey(itemClass, protectionClass)] = key }
            return key
        }
        guard create else { throw KeychainError.decode("no metadata key for \(itemClass.humanName) / \(protectionClass.rawValue) items") }
        let key = SecureRandom.key(bitCount: 256)
        try db.execute(
            sql: "INSERT INTO metadata_keys (item_class, pdmn, wrapped_key) VALUES (?, ?, ?)",
            arguments: [itemClass.rawValue, protectionClass.rawValue, try KeyWrap.wrap(key, using: classKey)])
        // Not cached yet: should this transaction roll back, the key must not outlive its row.
        // The next read of the committed row caches it.
        return key
    }
}
