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

    /// Whether the caller may read and write items of `group`.
    public func mayUse(group: String) -> Bool { seesEveryGroup || accessGroups.contains(group) }
    func mayRevealWithoutPasscode(group: String) -> Bool { accessGroups.contains(group) }
}
