/// A snapshot of the keybag for `tresor status`. Holds no key material.
public struct KeybagStatus: Sendable, Equatable {
    public var lockState: LockState
    public var isPasscodeSet: Bool
    /// Consecutive distinct wrong passcodes since the last success.
    public var failedAttempts: Int
    /// Seconds until the next passcode attempt is allowed, when a delay is running.
    public var retryAfterSeconds: Int?
    /// The classes whose keys are in memory now.
    public var availableClasses: [ProtectionClass]
    /// Set when the failed-attempt file was damaged and a lockout is being assumed.
    public var attemptsFileDamaged: Bool
}
