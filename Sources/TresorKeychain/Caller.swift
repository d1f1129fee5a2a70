import TresorKeybag

/// Who asks, as the daemon established it: which access groups the caller may use, and
/// whatever proof of user presence came with the request.
public struct Caller: Sendable {
    /// The groups the caller may read and write. Ignored when ``seesEveryGroup``.
    public var accessGroups: [String]
    /// Where new items go when the caller names no group.
    public var defaultAccessGroup: String
    /// The keychain-access application (the `tresor` CLI): lists every group's items, but
    /// reveals a secret of a group not in ``accessGroups`` only with the passcode.
    public var seesEveryGroup: Bool
    /// The passcode given with this request, if any (user presence).
    public var passcode: Passcode?
    /// The daemon has already established that the user is present for this request — an
    /// approval answered through Tresor, or a CLI session opened with the passcode in the
    /// requesting terminal (docs/SECURITY.md, "user presence") — so no passcode is needed.
    public var presenceConfirmed = false

    public init(accessGroups: [String], defaultAccessGroup: String, seesEveryGroup: Bool = false, passcode: Passcode? = nil) {
        self.accessGroups = accessGroups
        self.defaultAccessGroup = defaultAccessGroup
        self.seesEveryGroup = seesEveryGroup
        self.passcode = passcode
    }

    /// Checks that the user is present for this request: the daemon established it already
    /// (``presenceConfirmed``), or the passcode came with the request and is right. The one check
    /// behind a secret that needs presence and behind what exports or changes every secret at
    /// once (a backup, a restore).
    /// - Parameter keybag: the keybag whose passcode is checked (wrong ones count as at `unlock`).
    /// - Throws: ``KeychainError/presenceRequired(_:)`` without a passcode;
    ///   ``KeychainError/authFailed(_:retryAfterSeconds:)`` for a wrong one (or none set);
    ///   ``KeychainError/throttled(_:retryAfterSeconds:)`` while a delay runs.
    public func confirmPresence(with keybag: Keybag) throws {
        guard !presenceConfirmed else { return }
        guard let passcode else { throw KeychainError.presenceRequired("this needs the passcode in the request") }
        try Keychain.mapKeybag { try keybag.verify(passcode: passcode) }
    }

    /// Whether the caller may read and write items of `group`.
    public func mayUse(group: String) -> Bool { seesEveryGroup || accessGroups.contains(group) }
    func mayRevealWithoutPasscode(group: String) -> Bool { accessGroups.contains(group) }
}
