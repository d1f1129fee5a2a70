import TresorModel
import TresorWebStore

/// `GET /api/notes/{id}`.
struct WebNoteDetail: Encodable, Sendable {
    var summary: WebNoteSummary
    /// An unlocked note's text; absent for a locked note (its `locked` record opens in the browser).
    var body: String?
    var attachments: [WebAttachment]
    var locked: WebLockedRecord?
    var share: ShareInfo?
}
