/// The keybag's state (docs/API.md, "Protection classes and lock states").
public enum LockState: String, Codable, Sendable {
    /// The daemon started and nobody has unlocked yet: only `always` keys are in memory.
    case lockedSinceStart
    /// Every class key is in memory.
    case unlocked
    /// Locked again after an unlock: `afterFirstUnlock` and `always` keys stay in memory,
    /// `whenUnlocked` and `whenPasscodeSet…` keys are dropped.
    case locked

    /// Whether a class key may be in memory in this state.
    public func allows(_ protectionClass: ProtectionClass) -> Bool {
        switch (protectionClass.availability, self) {
        case (.always, _): return true
        case (.afterFirstUnlock, .unlocked), (.afterFirstUnlock, .locked): return true
        case (.whenUnlocked, .unlocked): return true
        default: return false
        }
    }
}
