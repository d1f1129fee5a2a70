/// Extra conditions on reading an item's secret, beyond its protection class
/// (`SecAccessControlCreateFlags`).
public enum AccessControl: String, Codable, Sendable {
    /// Every read of the secret needs the passcode in that request, whatever the lock state.
    /// (There is no biometry on a Linux box; the passcode is Apple's fallback too.)
    case userPresence
}
