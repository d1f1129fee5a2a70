import TresorModel

extension ProtectionClass {
    /// Whether the class key is wrapped with the passcode as well as the device key.
    /// `always` keys never are: they must open without the user (docs/FORMAT.md, "Class-key
    /// wrapping").
    var isWrappedWithPasscode: Bool { availability != .always }
}
