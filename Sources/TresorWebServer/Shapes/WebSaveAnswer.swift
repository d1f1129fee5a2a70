import TresorModel
import TresorNotesDomain
import TresorWebStore

/// `PATCH /api/notes/{id}` and `PUT …/locked-body`: the note as it is now (a NoteSummary),
/// plus what became of the save — `saved`, `merged` (with `mergedBody`, for an unlocked
/// note) or `conflictCopy` (with the new note that holds the edit).
struct WebSaveAnswer: Encodable, Sendable {
    var summary: WebNoteSummary
    var outcome: NoteSaveOutcome.Kind
    var mergedBody: String?
    var conflictCopy: WebNoteSummary?

    init(_ outcome: NoteSaveOutcome, for account: WebAccount, folders: [Folder]) {
        summary = WebNoteSummary(outcome.note, for: account, folders: folders)
        self.outcome = outcome.kind
        mergedBody = outcome.mergedBody
        conflictCopy = outcome.conflictCopy.map { WebNoteSummary($0, for: account, folders: folders) }
    }

    enum CodingKeys: String, CodingKey { case outcome, mergedBody, conflictCopy }

    func encode(to encoder: Encoder) throws {
        try summary.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(outcome, forKey: .outcome)
        try container.encodeIfPresent(mergedBody, forKey: .mergedBody)
        try container.encodeIfPresent(conflictCopy, forKey: .conflictCopy)
    }
}
