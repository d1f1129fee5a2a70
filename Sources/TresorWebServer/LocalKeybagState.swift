/// The keybag's state, as far as the web side cares.
package enum LocalKeybagState: Sendable, Equatable {
    /// No keybag yet (before `tresor init`).
    case notInitialized
    /// The keybag cannot be opened.
    case damaged
    /// Not unlocked since the daemon started: no note content is readable.
    case lockedSinceStart
    case locked
    case unlocked
}
