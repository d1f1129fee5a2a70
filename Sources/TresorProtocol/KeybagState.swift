/// The login keybag's state, as `GET /v1/status` and the widget report it.
public enum KeybagState: String, Codable, Sendable {
    /// The home has no keybag yet (`tresor init`).
    case notInitialized
    /// The keybag file cannot be read (`DaemonStatus.problem` says why).
    case damaged
    /// Not unlocked since the daemon started: only the `always…` keys are in memory, so nothing
    /// else is readable, not even notes.
    case lockedSinceStart
    /// Unlocked: every class key is in memory.
    case unlocked
    /// Locked after an unlock: `afterFirstUnlock` keys (notes) stay available.
    case locked
}
