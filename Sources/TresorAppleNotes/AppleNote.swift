import Foundation

/// An Apple Notes note: a ZICCLOUDSYNCINGOBJECT row that has a ZICNOTEDATA row or a `ZTITLE1`.
public struct AppleNote: Sendable, Equatable {
    /// The note's `Z_PK`.
    public var id: Int64
    /// `ZTITLE1`; when it is null or blank, the first non-blank line of the text (an unlocked note,
    /// "Untitled note" if it has none) or "Locked note".
    public var title: String
    /// The ``AppleFolder/id`` of its folder (`ZFOLDER`), or nil when that names no folder of the library.
    public var folderID: Int64?
    /// The ``AppleAccount/id`` of its account (a `ZACCOUNT…` column, else its folder's
    /// account), or nil when none names an account of the library.
    public var accountID: Int64?
    /// When it was created (`ZCREATIONDATE3`, `ZCREATIONDATE1` or `ZCREATIONDATE`: the first
    /// present and non-null; stored as seconds since 2001-01-01 UTC).
    public var created: Date?
    /// When it was last modified (`ZMODIFICATIONDATE1`, else `ZMODIFICATIONDATE`).
    public var modified: Date?
    /// Its text, or its crypto fields when it is locked.
    public var content: AppleNoteContent
    /// Whether it is pinned to the top of its folder (`ZISPINNED`).
    public var isPinned: Bool

    /// A note from its parts.
    public init(
        id: Int64, title: String, folderID: Int64?, accountID: Int64?, created: Date?, modified: Date?,
        content: AppleNoteContent, isPinned: Bool = false
    ) {
        self.id = id
        self.title = title
        self.folderID = folderID
        self.accountID = accountID
        self.created = created
        self.modified = modified
        self.content = content
        self.isPinned = isPinned
    }
}

/// What a note holds: its text, or — for a locked note — what is needed to open it later.
public enum AppleNoteContent: Sendable, Equatable {
    /// An unlocked note's text (field path 2 → 3 → 2 of its body).
    case text(String)
    /// A password-protected note, still encrypted.
    case locked(AppleLockedNote)
}
