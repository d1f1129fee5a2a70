import Foundation
import PostgresNIO
import TresorNotesDomain

// The widget: an account's note counts and its recent and pinned notes, titles opened from
// their sealing (the caller redacts them when the widget shows no titles).
extension PostgresWebStore: WidgetStore {
    func widget(account: AccountID) async throws -> WidgetSummary {
        try await db.read { [self, logger] connection in
            let (total, locked) = try await counts(account, connection)
            func list(pinnedOnly: Bool) async throws -> [WidgetSummary.Note] {
                var notes: [WidgetSummary.Note] = []
                for try await row in try await connection.query(
                    """
                    SELECT \(unescaped: StoredNote.summaryColumns) FROM notes
                    WHERE account_id = \(account.rawValue) AND deleted IS NULL AND (pinned OR NOT \(pinnedOnly))
                    ORDER BY modified DESC, id LIMIT \(NoteRules.widgetListLength)
                    """, logger: logger)
                {
                    let note = try StoredNote(row, full: false)
                    notes.append(
                        .init(id: note.id, title: try openTitle(note), modified: Date(timeIntervalSince1970: note.modified), isLocked: note.isLocked))
                }
                return notes
            }
            return WidgetSummary(
                noteCount: total, lockedNoteCount: locked, recent: try await list(pinnedOnly: false), pinned: try await list(pinnedOnly: true))
        }
    }

    func widgetCounts(account: AccountID) async throws -> (notes: Int, locked: Int) {
        let both = try await db.read { [self] connection in
            let (total, locked) = try await counts(account, connection)
            return [total, locked]
        }
        return (both[0], both[1])
    }

    private func counts(_ account: AccountID, _ connection: PostgresConnection) async throws -> (Int, Int) {
        try await connection.row(
            "SELECT COUNT(*), COUNT(passphrase_id) FROM notes WHERE account_id = \(account.rawValue) AND deleted IS NULL", logger,
            as: (Int, Int).self) ?? (0, 0)
    }
}
