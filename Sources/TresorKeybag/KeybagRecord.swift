import Foundation
import TresorCrypto

/// What the `keybag` file holds: the passcode's KDF parameters (if a passcode is set) and
/// every class key, RFC 3394-wrapped under its key-encryption key.
struct KeybagRecord: Codable, Equatable {
    /// PBKDF2 parameters of the current passcode; nil when no passcode is set.
    var passcode: PBKDF2Parameters?
    /// Wrapped class keys by `ProtectionClass.rawValue`.
    var wrappedClassKeys: [String: Data]
    /// Incremented by every passcode change.
    var generation: Int
    var changedAt: Date
    /// Whether the failed-attempt file must exist (set in every keybag written today): then
    /// a missing `unlock-attempts` means a lockout, not zero failures. Nil in older keybags,
    /// whose homes may never have had the file; opening one writes both.
    var attemptsFileRequired: Bool? = nil

    static func file(_ deviceKey: DeviceKey) -> AuthenticatedFile<KeybagRecord> {
        AuthenticatedFile(magic: Data("TRKB".utf8), version: 1, name: "keybag", macKey: deviceKey.derive("file-mac.keybag"))
    }
}
