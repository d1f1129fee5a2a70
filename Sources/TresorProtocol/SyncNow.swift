import FoundationEssentials

// `tresor sync now` (docs/SYNC.md, "What syncs"): the daemon pushes this device's changes and
// pulls the other devices' until it is up to date.

extension Route {
    /// `POST` ``SyncNowRequestBody`` → ``SyncNowAnswer``: one sync with the server.
    public static let syncNow = "/v1/sync-account/sync"
}

/// `POST /v1/sync-account/sync`.
public struct SyncNowRequestBody: Codable, Sendable {
    /// Lets a held mass deletion through (the user confirmed it).
    public var allowDeletions: Bool

    /// Makes a sync request; the parameter is the property of the same name.
    public init(allowDeletions: Bool = false) { self.allowDeletions = allowDeletions }

    /// Reads the request; `allowDeletions` absent is `false`.
    /// - Parameter decoder: the decoder to read from.
    /// - Throws: `DecodingError` when `allowDeletions` is not a boolean.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        allowDeletions = try container.decodeIfPresent(Bool.self, forKey: .allowDeletions) ?? false
    }
}

/// What one sync did.
public struct SyncNowAnswer: Codable, Sendable, Equatable {
    /// Items made before sync was turned on, recorded now so that they go out.
    public var recorded: Int
    /// Changes of this device the server took.
    public var pushed: Int
    /// Changes of other devices applied here (held ones applied now included).
    public var applied: Int
    /// Losing versions of concurrent edits kept (`tresor sync conflicts`).
    public var conflictsKept: Int
    /// Changes held until the keybag unlocks.
    public var held: Int
    /// Item deletions held as a mass deletion (`tresor sync now --allow-deletions` lets them
    /// through); the notes' are in ``SyncNowNotes/heldDeletions``.
    public var heldDeletions: Int

    /// What the notes' sync did (docs/SYNC.md, "Notes"); nil when the notes were not synced.
    public var notes: SyncNowNotes?

    /// Makes a sync answer; the parameters are the properties of the same names.
    public init(recorded: Int, pushed: Int, applied: Int, conflictsKept: Int, held: Int, heldDeletions: Int, notes: SyncNowNotes? = nil) {
        self.notes = notes
        self.recorded = recorded
        self.pushed = pushed
        self.applied = applied
        self.conflictsKept = conflictsKept
        self.held = held
        self.heldDeletions = heldDeletions
    }
}

/// What one sync did with the notes.
public struct SyncNowNotes: Codable, Sendable, Equatable {
    /// Changes of this device's notes the server took.
    public var sent: Int
    /// Notes changed here by the server's changes.
    public var applied: Int
    /// Changes of this device kept on the server as conflict copies (the same lines changed elsewhere).
    public var conflictCopies: Int
    /// Changes of this device that wait: locked notes (they do not travel yet) and changes the server refused.
    public var waiting: Int
    /// Notes deleted for good elsewhere that are still here: a mass deletion, waiting for
    /// `tresor sync now --allow-deletions`.
    public var heldDeletions: Int
    /// True when the notes passphrase set or changed here was overtaken: another device changed
    /// it first, from the same one, and that device's is current now. Notes locked here with
    /// this device's still open with it (`tresor note rewrap` moves them to the current one).
    public var passphraseOvertaken: Bool?
    /// The conflict copies among ``conflictCopies`` that are unlocked beside a note locked on
    /// another device meanwhile: an edit made here before the lock arrived, readable by anyone
    /// who reads the account's notes until it is locked or deleted. Their ids; nil for none.
    public var unlockedCopiesOfLockedNotes: [String]?
    /// Notes among ``waiting`` locked on another device since the version an unlocked edit here
    /// was made from: the server keeps nothing of such an edit unlocked, so it stays here until
    /// the note is locked here too (`tresor note lock`), then goes as a locked conflict copy.
    /// Their ids here; nil for none.
    public var heldUntilLocked: [String]?

    /// Makes a notes sync answer; the parameters are the properties of the same names.
    public init(
        sent: Int, applied: Int, conflictCopies: Int, waiting: Int, heldDeletions: Int = 0, passphraseOvertaken: Bool? = nil,
        unlockedCopiesOfLockedNotes: [String]? = nil, heldUntilLocked: [String]? = nil
    ) {
        self.unlockedCopiesOfLockedNotes = unlockedCopiesOfLockedNotes
        self.heldUntilLocked = heldUntilLocked
        self.sent = sent
        self.applied = applied
        self.conflictCopies = conflictCopies
        self.waiting = waiting
        self.heldDeletions = heldDeletions
        self.passphraseOvertaken = passphraseOvertaken
    }

    /// Reads the answer, also from an older daemon: `heldDeletions` absent is 0, the optional
    /// fields absent are nil.
    /// - Parameter decoder: the decoder to read from.
    /// - Throws: `DecodingError` when a required count is missing or a field has the wrong type.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sent = try container.decode(Int.self, forKey: .sent)
        applied = try container.decode(Int.self, forKey: .applied)
        conflictCopies = try container.decode(Int.self, forKey: .conflictCopies)
        waiting = try container.decode(Int.self, forKey: .waiting)
        // An older daemon holds no notes' deletions.
        heldDeletions = try container.decodeIfPresent(Int.self, forKey: .heldDeletions) ?? 0
        passphraseOvertaken = try container.decodeIfPresent(Bool.self, forKey: .passphraseOvertaken)
        unlockedCopiesOfLockedNotes = try container.decodeIfPresent([String].self, forKey: .unlockedCopiesOfLockedNotes)
        heldUntilLocked = try container.decodeIfPresent([String].self, forKey: .heldUntilLocked)
    }
}
