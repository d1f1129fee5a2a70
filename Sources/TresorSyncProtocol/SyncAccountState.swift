import Foundation

/// `GET /v1/sync/state`: where the account stands, so a device with nothing to do asks nothing
/// more (docs/SYNC.md, "A sync with nothing to do"): the latest record counter, the device
/// list's version and the notes counter. Each is the number a device compares with what it
/// holds — a records cursor at `records`, a list of version `deviceListVersion`, a notes cursor
/// at `notes` — and it reads the records, the list or the notes only when it is behind.
public struct SyncAccountState: Codable, Equatable, Sendable {
    /// The account's latest record counter (0 before the first).
    public var records: UInt64
    /// The stored device list's version (0 before the first).
    public var deviceListVersion: UInt64
    /// The account's notes counter: the number of its latest note change (0 for none).
    public var notes: UInt64
    /// The account's notes settings counter: it moves at every change of its folders or its
    /// notes passphrases (a new one, its hint, which is current), so a device that saw this
    /// number asks for neither. Nil from a server that does not say it: the device then asks
    /// for both at every sync.
    public var notesSettings: UInt64?
    /// True from a server that keeps a passphrase imported from Apple Notes as one (its source,
    /// no verifier), so a note locked with one travels; nil from an older server, which would
    /// take it for a Tresor generation or refuse it: a device keeps such notes waiting.
    public var appleNotesPassphrases: Bool?

    public init(records: UInt64, deviceListVersion: UInt64, notes: UInt64, notesSettings: UInt64? = nil, appleNotesPassphrases: Bool? = nil) {
        self.records = records
        self.deviceListVersion = deviceListVersion
        self.notes = notes
        self.notesSettings = notesSettings
        self.appleNotesPassphrases = appleNotesPassphrases
    }
}
