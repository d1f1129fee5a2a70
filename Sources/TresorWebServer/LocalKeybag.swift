import TresorCrypto

/// The home's keybag as the web side sees it (embedded mode only: a server has none), provided
/// by the daemon: the local account signs in with the keybag's passcode, the widget and the
/// status say whether note content is readable, the pages learn when the keybag locks, and the
/// local account's use of the web counts as activity for the keybag's auto-lock.
package protocol LocalKeybag: Sendable {
    /// The keybag's state now; the web side polls it to tell the pages of a change.
    var state: LocalKeybagState { get }

    /// Whether a passcode is set (without one the local account cannot sign in).
    /// - Throws: an `APIError` when there is no keybag or it is damaged.
    func passcodeIsSet() throws -> Bool

    /// Unlocks the keybag with `passcode`; a wrong one counts only in the web's own sign-in
    /// limits, never in the keybag's attempts and delays.
    /// - Parameter passcode: the text the user typed.
    /// - Returns: whether it was the passcode.
    /// - Throws: an `APIError` when there is no keybag or it refuses.
    func unlock(passcode: SecretText) async throws -> PasscodeCheck

    /// Checks `passcode` without unlocking.
    /// - Parameter passcode: the text the user typed.
    /// - Returns: whether it was the passcode.
    /// - Throws: an `APIError` when there is no keybag or it refuses.
    func check(passcode: SecretText) async throws -> PasscodeCheck

    /// Counts as activity for the keybag's auto-lock.
    /// - Parameter activity: what it was, in the user's words ("the web client of the local account").
    func recordActivity(by activity: String)
}
