import TresorKeybag

/// Who asks, as the daemon established it: which access groups the caller may use, and
/// whatever proof of user presence came with the request.
public struct Caller: Sendable {
    /// The groups the caller may read and write. Ignored when ``seesEveryGroup``.
    public var accessGroups: [String]
    /// Where new items go when the caller names no group.
    public var defaultAccessGroup: String
    /// The keychain-access application (the `tresor` CLI): lists every group's items, but
    /// reveals a secret, or changes another application's item, only with the user present
    /// (``KeychainStore`` says exactly when).
    public var seesEveryGroup: Bool
    /// The passcode given with this request, if any (user presence).
    public var passcode: Passcode?
    /// The daemon has already established that the user is present for this request — an
    /// approval answered through Tresor (docs/API.md, "User presence") — so no passcode
    /// is needed, for `userPresence` items either.
    public var presenceConfirmed = false
    /// The request comes from a terminal where the user opened a terminal session with the
    /// passcode (`tresor unlock --for`): it stands for the passcode wherever the keychain-access
    /// application needs the user present — but not for `userPresence` items, which ask every time.
    public var atOpenTerminalSession = false
    /// What a search does when items that might match are of a protection class locked now.
    public var lockedCandidates = LockedCandidates.leftOut

    /// What a search does with the items it cannot open now: their protection class is locked,
    /// and their attributes are sealed under it, so whether they match is not known.
    public enum LockedCandidates: Sendable {
        /// Left out: the answer is what opens now (the command-line tool; the Secret Service,
        /// which lists locked items apart). With nothing else found, the search fails with
        /// ``KeychainError/interactionNotAllowed(_:)``.
        case leftOut
        /// The whole search fails with ``KeychainError/interactionNotAllowed(_:)``, as Apple's
        /// SecItem functions do (applications): an answer missing an item would read as "not
        /// there", and an application would make it again.
        case failTheSearch
    }

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
        try KeychainStore.mapKeybag { try keybag.verify(passcode: passcode) }
    }

    /// Whether the caller may read and write items of `group`.
    public func mayUse(group: String) -> Bool { seesEveryGroup || accessGroups.contains(group) }
    /// Whether `group` is the caller's own (for the keychain-access app: its `tresor` group).
    func owns(group: String) -> Bool { accessGroups.contains(group) }
}
