/// What a passcode the user typed turned out to be.
package enum PasscodeCheck: Sendable, Equatable {
    case right
    case wrong
    /// The text cannot be a passcode at all (it was never tried).
    case notAPasscode
}
