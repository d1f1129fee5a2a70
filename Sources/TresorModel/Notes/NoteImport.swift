import FoundationEssentials

/// One note to import, as read from another app's store (Apple Notes: see TresorAppleNotes).
/// A locked note keeps its crypto fields as they are, so it opens with its old passphrase.
public struct NoteImport: Codable, Equatable, Sendable {
    public var title: String
    public var folder: String?
    public var created: Date?
    public var modified: Date?
    public var content: Content
    /// Whether the note is pinned. Absent in JSON means false.
    public var isPinned: Bool
    /// Whether the note was in the other store's Recently Deleted: it is imported into
    /// Tresor's, for 30 days from the import. Absent in JSON means false.
    public var inRecentlyDeleted: Bool

    public enum Content: Codable, Equatable, Sendable {
        /// An unlocked note's text.
        case text(String)
        /// A note locked in Apple Notes, its crypto fields as Apple stored them: AES-128-GCM
        /// ciphertext of the gzipped protobuf body, salt, rounds, wrapped key, IV, tag, hint.
        case appleLocked(AppleLockedNote)
    }

    public init(
        title: String, folder: String?, created: Date?, modified: Date?, content: Content, isPinned: Bool = false,
        inRecentlyDeleted: Bool = false
    ) {
        self.title = title
        self.folder = folder
        self.created = created
        self.modified = modified
        self.content = content
        self.isPinned = isPinned
        self.inRecentlyDeleted = inRecentlyDeleted
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        title = try container.decode(String.self, forKey: .title)
        folder = try container.decodeIfPresent(String.self, forKey: .folder)
        created = try container.decodeIfPresent(Date.self, forKey: .created)
        modified = try container.decodeIfPresent(Date.self, forKey: .modified)
        content = try container.decode(Content.self, forKey: .content)
        isPinned = try container.decodeIfPresent(Bool.self, forKey: .isPinned) ?? false
        inRecentlyDeleted = try container.decodeIfPresent(Bool.self, forKey: .inRecentlyDeleted) ?? false
    }
}

extension NoteImport {
    /// Why a notes store refuses this note for its size alone, or nil: a text body over
    /// ``NoteLimits/bodyBytes``, an Apple locked note's ciphertext over
    /// ``NoteLimits/appleLockedCiphertextBytes``. The store checks it with the rest of a note's
    /// rules; an importer checks it before sending, so that one outsized note is refused by name
    /// instead of making its request larger than the daemon reads.
    public var sizeRefusal: String? {
        switch content {
        case .text(let text) where text.utf8.count > NoteLimits.bodyBytes:
            "the body is longer than \(NoteLimits.bodyBytes) bytes"
        case .appleLocked(let fields) where fields.ciphertext.count > NoteLimits.appleLockedCiphertextBytes:
            "its body is larger than \(NoteLimits.appleLockedCiphertextBytes) bytes"
        default: nil
        }
    }
}

/// What an import did.
public struct ImportReport: Codable, Equatable, Sendable {
    /// Notes created.
    public var imported: Int
    /// Of those, still locked with their original passphrase.
    public var locked: Int
    /// Of those, put into Recently Deleted, where they were in the other store.
    public var recentlyDeleted: Int
    /// Notes skipped because an earlier import already brought them in.
    public var alreadyImported: Int
    /// Notes refused, each with its title's first characters and the reason.
    public var refused: [String]

    public init(imported: Int = 0, locked: Int = 0, recentlyDeleted: Int = 0, alreadyImported: Int = 0, refused: [String] = []) {
        self.imported = imported
        self.locked = locked
        self.recentlyDeleted = recentlyDeleted
        self.alreadyImported = alreadyImported
        self.refused = refused
    }

    /// A line of ``refused``.
    /// - Parameters:
    ///   - title: the refused note's title (its first 40 characters are kept).
    ///   - reason: why it was refused.
    /// - Returns: `"title": reason`.
    public static func refusal(title: String, reason: String) -> String { "\"\(title.prefix(40))\": \(reason)" }
}

/// What `tresor-read-apple-notes` writes on its standard output for `tresor import apple-notes`:
/// the notes of an Apple Notes database as import records, and what it could not read.
public struct AppleNotesReading: Codable, Sendable {
    /// The notes, in folders named as in Apple Notes.
    public var notes: [NoteImport]
    /// One line per note that could not be read, saying why.
    public var unreadable: [String]
    /// Whether `NoteStore.sqlite-wal` holds changes that were not read.
    public var unreadWriteAheadLog: Bool

    public init(notes: [NoteImport], unreadable: [String], unreadWriteAheadLog: Bool) {
        self.notes = notes
        self.unreadable = unreadable
        self.unreadWriteAheadLog = unreadWriteAheadLog
    }
}
