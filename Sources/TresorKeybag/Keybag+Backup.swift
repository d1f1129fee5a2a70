import Crypto
import Foundation

// What a backup needs of the device key without ever seeing it (docs/FORMAT.md, "Backups"):
// `…ThisDeviceOnly` items leave the home sealed under a key only this home's device key derives,
// and the backup names the home by an identifier that reveals nothing of the key.
extension Keybag {
    /// Names this home's device key in a backup: 16 bytes of
    /// HKDF-SHA256(device key, info `tresor.keybag.v1.backup.device-id`). Equal for two homes
    /// only when they share the device key; the key cannot be computed back from it.
    public var backupDeviceID: Data {
        deviceKey.derive("backup.device-id").withUnsafeBytes { Data($0.prefix(16)) }
    }

    /// The key that seals `…ThisDeviceOnly` items in a backup: HKDF-SHA256(device key, info
    /// `tresor.keybag.v1.backup.device-items`). A backup's passphrase alone does not open them;
    /// only a home with the same device key does.
    public var backupDeviceItemsKey: SymmetricKey {
        deviceKey.derive("backup.device-items")
    }
}
