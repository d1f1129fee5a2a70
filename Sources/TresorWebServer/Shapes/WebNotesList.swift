/// `GET /api/notes`.
struct WebNotesList: Encodable, Sendable {
    var notes: [WebNoteSummary]
}
