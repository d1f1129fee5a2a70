import Foundation
import TresorAppleNotes

/// One note to import, as read from another app's store (Apple Notes: see TresorAppleNotes).
/// A locked note keeps its crypto fields as they are, so it opens with its old passphrase.
public struct NoteImport: Codable, Equatable, Sendable {
    public var title: String
    public var folder: String?
    public var created: Date?
    public var modified: Date?
    public var content: Content

    public enum Content: Codable, Equatable, Sendable {
        /// An unlocked note's text.
        case text(String)
        /// A note locked in Apple Notes, its crypto fields as Apple stored them: AES-128-GCM
        /// ciphertext of the gzipped protobuf body, salt, rounds, wrapped key, IV, tag, hint.
        case appleLocked(AppleLockedNote)
    }

    public init(title: String, folder: String?, created: Date?, modified: Date?, content: Content) {
        self.title = title
        self.folder = folder
        self.created = created
        self.modified = modified
        self.content = content
    }
}

/// What an import did.
public struct ImportReport: Codable, Equatable, Sendable {
    /// Notes created.
    public var imported: Int
    /// Of those, still locked with their original passphrase.
    public var locked: Int
    /// Notes skipped because an earlier import already brought them in.
    public var alreadyImported: Int
    /// Notes refused, each with its title's first characters and the reason.
    public var refused: [String]

    public init(imported: Int = 0, locked: Int = 0, alreadyImported: Int = 0, refused: [String] = []) {
        self.imported = imported
        self.locked = locked
        self.alreadyImported = alreadyImported
        self.refused = refused
    }
}
