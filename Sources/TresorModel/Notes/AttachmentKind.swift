/// The typed kinds of attachment a note holds (docs/API.md, "Attachments on the wire").
public enum AttachmentKind: String, Codable, CaseIterable, Sendable {
    case image, drawing, table
    case mapLocation = "map-location"
    case websiteLink = "website-link"
    case audio, pdf, file

    /// The kinds a locked note may hold (docs/API.md, "Locked notes and secure sessions"), as in
    /// Apple Notes.
    public static let lockable: [AttachmentKind] = [.image, .drawing, .table, .mapLocation, .websiteLink]

    public var isLockable: Bool { Self.lockable.contains(self) }
}
