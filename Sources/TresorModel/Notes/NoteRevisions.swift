import FoundationEssentials

/// The version of a note an edit was made from: its revision and, so that a late edit can be
/// merged, the title and body it had then (what the editor showed before the edit).
public struct NoteBase: Codable, Equatable, Sendable {
    public var revision: Int64
    /// The title at `revision`; needed to merge a late title change.
    public var title: String?
    /// The body at `revision`; needed to merge a late body change.
    public var body: String?

    public init(revision: Int64, title: String? = nil, body: String? = nil) {
        self.revision = revision
        self.title = title
        self.body = body
    }
}

/// What became of a save (docs/FORMAT.md, "Revisions and merges").
public struct NoteSaveOutcome: Codable, Equatable, Sendable {
    public enum Kind: String, Codable, Sendable {
        /// The note had not changed since the edit's base: saved as it was.
        case saved
        /// The note had changed, elsewhere in the text: both edits are in it now.
        case merged
        /// The note had changed in the same lines: it keeps the other version, and this edit
        /// is kept whole as a new note, the conflict copy.
        case conflictCopy
    }

    public var kind: Kind
    /// The note as it is now.
    public var note: NoteSummary
    /// For `merged`: the merged body, so the editor can show it.
    public var mergedBody: String?
    /// For `conflictCopy`: the new note that holds this edit.
    public var conflictCopy: NoteSummary?

    public init(kind: Kind, note: NoteSummary, mergedBody: String? = nil, conflictCopy: NoteSummary? = nil) {
        self.kind = kind
        self.note = note
        self.mergedBody = mergedBody
        self.conflictCopy = conflictCopy
    }
}
