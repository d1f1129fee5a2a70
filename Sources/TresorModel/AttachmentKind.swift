/// The typed kinds of attachment a note holds (SPEC §4.1).
public enum AttachmentKind: String, Codable, CaseIterable, Sendable {
    case image, drawing, table
    case mapLocation = "map-location"
    case websiteLink = "website-link"
    case audio, pdf, file

    /// The kinds a locked note may hold (SPEC §4.2), as in Apple Notes.
    public static let lockable: [AttachmentKind] = [.image, .drawing, .table, .mapLocation, .websiteLink]

    public var isLockable: Bool { Self.lockable.contains(self) }
}
