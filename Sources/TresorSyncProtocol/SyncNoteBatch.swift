import Foundation

// Notes sync pushes in batches (docs/SYNC.md, "Notes"): a device sends its waiting changes a
// batch per request, and the server answers each on its own, so one refused note does not hold
// back the others.

/// `POST /v1/sync/notes/batch`: up to ``maxChanges`` changes of a device's notes, applied in
/// order, each in its own transaction.
public struct SyncNoteBatch: Codable, Equatable, Sendable {
    /// The most changes a batch holds.
    public static let maxChanges = 100

    public var changes: [SyncNoteChange]

    public init(changes: [SyncNoteChange]) {
        self.changes = changes
    }
}

/// The answer to a ``SyncNoteBatch``: one answer a change, in the batch's order.
public struct SyncNoteBatchAnswer: Codable, Equatable, Sendable {
    public var answers: [SyncNoteChangeAnswer]

    public init(answers: [SyncNoteChangeAnswer]) {
        self.answers = answers
    }
}

/// What the server made of one change of a batch — or why it refused it, as the single route
/// would have answered (`status` and the error body): the change stays waiting on the device.
public struct SyncNoteChangeAnswer: Codable, Equatable, Sendable {
    /// What the server made of it; nil when refused.
    public var result: SyncNoteChangeResult?
    /// The HTTP status the refusal would have had (`413` over the account's quota…); nil when applied.
    public var status: Int?
    /// Why it was refused; nil when applied.
    public var refusal: SyncErrorBody?

    /// An applied change.
    public init(result: SyncNoteChangeResult) {
        self.result = result
    }

    /// A refused change.
    public init(status: Int, refusal: SyncErrorBody) {
        self.status = status
        self.refusal = refusal
    }
}
