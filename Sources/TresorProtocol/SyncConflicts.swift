import FoundationEssentials
import TresorModel

// What the sync engine holds on this device (docs/SYNC.md, "Conflicts and deletions"): the
// counters `tresor sync status` shows, and the losing versions `tresor sync conflicts` lists.

extension Route {
    /// `GET` → ``SyncConflictsAnswer``; `POST {id}/restore` makes a kept version the item again,
    /// `POST {id}/secret` → ``SyncConflictSecretAnswer``, `POST {id}/discard` forgets it — each
    /// with a ``SyncConflictRequestBody``.
    public static let syncConflicts = "/v1/sync-account/conflicts"
}

/// The sync engine's counters for this device.
public struct SyncCounters: Codable, Sendable, Equatable {
    /// Changes of this device the server has not taken yet.
    public var changesWaiting: Int
    /// Losing versions of concurrent edits kept (`tresor sync conflicts`).
    public var conflictsKept: Int
    /// Changes that arrived and wait: for an unlock, or for `--allow-deletions`.
    public var changesHeld: Int
    /// Of those, deletions waiting for `tresor sync now --allow-deletions` that would delete an
    /// item here (not one changed here since: that change wins).
    public var deletionsHeld: Int
    /// Those deletions, each with the item it would delete (``SyncConflictInfo``'s shape: its
    /// class and attributes, nil while its protection class is locked; `id` is the record's).
    public var heldDeletions: [SyncConflictInfo]
    /// When `tresor sync now` last ended.
    public var lastSync: Date?
    /// Records of trusted devices set aside: verified, but unreadable here; never applied.
    public var setAside: [SyncSetAsideRecord]

    /// Makes the counters; the parameters are the properties of the same names.
    public init(
        changesWaiting: Int, conflictsKept: Int, changesHeld: Int, deletionsHeld: Int, heldDeletions: [SyncConflictInfo] = [], lastSync: Date?,
        setAside: [SyncSetAsideRecord] = []
    ) {
        self.changesWaiting = changesWaiting
        self.conflictsKept = conflictsKept
        self.changesHeld = changesHeld
        self.deletionsHeld = deletionsHeld
        self.heldDeletions = heldDeletions
        self.lastSync = lastSync
        self.setAside = setAside
    }

    private enum CodingKeys: String, CodingKey { case changesWaiting, conflictsKept, changesHeld, deletionsHeld, heldDeletions, lastSync, setAside }

    /// Reads the counters, also from an older daemon: `heldDeletions` and `setAside` absent are
    /// empty, `lastSync` absent is nil.
    /// - Parameter decoder: the decoder to read from.
    /// - Throws: `DecodingError` when a required count is missing or a field has the wrong type.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        changesWaiting = try container.decode(Int.self, forKey: .changesWaiting)
        conflictsKept = try container.decode(Int.self, forKey: .conflictsKept)
        changesHeld = try container.decode(Int.self, forKey: .changesHeld)
        deletionsHeld = try container.decode(Int.self, forKey: .deletionsHeld)
        heldDeletions = try container.decodeIfPresent([SyncConflictInfo].self, forKey: .heldDeletions) ?? []
        lastSync = try container.decodeIfPresent(Date.self, forKey: .lastSync)
        setAside = try container.decodeIfPresent([SyncSetAsideRecord].self, forKey: .setAside) ?? []
    }
}

/// A record a trusted device wrote that this device verified but cannot read (docs/SYNC.md,
/// "Conflicts and deletions"): set aside, never applied, while the records after it apply.
public struct SyncSetAsideRecord: Codable, Sendable, Equatable {
    /// The server's counter of it.
    public var counter: UInt64
    /// The record's id.
    public var recordID: String
    /// The device that wrote it.
    public var deviceID: String
    /// Why it is set aside.
    public var reason: String

    /// Makes a set-aside record; the parameters are the properties of the same names.
    public init(counter: UInt64, recordID: String, deviceID: String, reason: String) {
        self.counter = counter
        self.recordID = recordID
        self.deviceID = deviceID
        self.reason = reason
    }
}

/// A losing version kept by a conflict; its secret stays in the keychain.
public struct SyncConflictInfo: Codable, Sendable, Equatable {
    /// What `tresor sync conflicts restore` takes.
    public var id: String
    /// The kept version's class; nil while its protection class is locked.
    public var itemClass: ItemClass?
    /// The kept version's attributes; nil while its protection class is locked.
    public var attributes: ItemAttributes?

    /// Makes a conflict description; the parameters are the properties of the same names.
    public init(id: String, itemClass: ItemClass?, attributes: ItemAttributes?) {
        self.id = id
        self.itemClass = itemClass
        self.attributes = attributes
    }
}

/// `GET /v1/sync-account/conflicts`.
public struct SyncConflictsAnswer: Codable, Sendable {
    /// The losing versions kept in the login keychain (none of those whose class is locked).
    public var conflicts: [SyncConflictInfo]

    /// Makes the answer; the parameter is the property of the same name.
    public init(conflicts: [SyncConflictInfo]) { self.conflicts = conflicts }
}

/// `POST /v1/sync-account/conflicts/{id}/restore`, `…/secret` and `…/discard`: the passcode, where
/// the kept version needs the user present (as its item would).
public struct SyncConflictRequestBody: Codable, Sendable {
    /// The keybag passcode, when the kept version needs the user present; nil otherwise.
    public var passcode: String?

    /// Makes the request; the parameter is the property of the same name.
    public init(passcode: String? = nil) { self.passcode = passcode }
}

/// `POST /v1/sync-account/conflicts/{id}/secret`: the kept version's secret.
public struct SyncConflictSecretAnswer: Codable, Sendable {
    /// The kept version's secret (Base64 on the wire).
    public var secret: Data

    /// Makes the answer; the parameter is the property of the same name.
    public init(secret: Data) { self.secret = secret }
}
