/// When an item's secret may be read (docs/API.md, "Protection classes and lock states"),
/// named as on Apple systems (`kSecAttrAccessibleWhenUnlocked` is `.whenUnlocked`).
public enum ProtectionClass: String, CaseIterable, Codable, Sendable {
    case whenUnlocked
    case afterFirstUnlock
    case always
    case whenUnlockedThisDeviceOnly
    case afterFirstUnlockThisDeviceOnly
    case alwaysThisDeviceOnly
    case whenPasscodeSetThisDeviceOnly

    /// The class of new items when none is asked for.
    public static let `default` = ProtectionClass.whenUnlocked

    /// The lock states in which a class's key is in memory.
    public enum Availability: Sendable {
        /// Only while the keybag is unlocked.
        case whenUnlocked
        /// From the first unlock after the daemon started until it stops.
        case afterFirstUnlock
        /// Always: the key is wrapped by the device key alone.
        case always
    }

    public var availability: Availability {
        switch self {
        case .whenUnlocked, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly: return .whenUnlocked
        case .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly: return .afterFirstUnlock
        case .always, .alwaysThisDeviceOnly: return .always
        }
    }

    /// Items of this class restore only into the home they were made in.
    public var isThisDeviceOnly: Bool {
        switch self {
        case .whenUnlocked, .afterFirstUnlock, .always: return false
        default: return true
        }
    }

    /// The class exists only while a passcode is set; removing the passcode destroys its key.
    public var requiresPasscode: Bool { self == .whenPasscodeSetThisDeviceOnly }
}
