import TresorModel
import TresorNotesDomain

/// `GET /api/notes/{id}`: the summary as the account that asks sees it, and the domain's own
/// values for the rest (docs/WEB.md, "Shapes").
struct WebNoteDetail: Encodable, Sendable {
    var summary: WebNoteSummary
    /// An unlocked note's text; absent for a locked note (its `locked` record opens in the browser).
    var body: String?
    var attachments: [AttachmentInfo]
    var locked: LockedNoteRecord?
    var share: ShareInfo?
}
