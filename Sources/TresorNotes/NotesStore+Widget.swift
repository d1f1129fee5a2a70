import Foundation
import GRDB
import TresorNotesDomain

// The widget's data (docs/API.md, "The widget"): counts are not private; titles are, and the server
// decides when to show them (keybag and secure session unlocked).
extension NotesStore {

    /// The account's note count, its most recently changed notes and its pinned notes. Counts
    /// are read without the content key, so they are available before the first unlock;
    /// titles need it (`contentUnavailable` otherwise).
    public func widget(account: AccountID) throws -> WidgetSummary {
        let (total, locked) = try widgetCounts(account: account)
        let sealing = try sealing()
        return try pool.read { db in
            func notes(_ filter: String) throws -> [WidgetSummary.Note] {
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT \(NoteRow.summaryColumns) FROM notes WHERE account_id = ? AND deleted IS NULL \(filter) ORDER BY modified DESC, id LIMIT \(NoteRules.widgetListLength)
                        """, arguments: [account.rawValue]
                ).map { row in
                    let note = NoteRow(summaryRow: row)
                    return .init(id: note.id, title: try title(of: note, sealing), modified: note.modified, isLocked: note.isLocked)
                }
            }
            return WidgetSummary(noteCount: total, lockedNoteCount: locked, recent: try notes(""), pinned: try notes("AND pinned = 1"))
        }
    }

    /// (notes, locked notes) of the account — readable before the first unlock.
    public func widgetCounts(account: AccountID) throws -> (notes: Int, locked: Int) {
        try pool.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*) AS total, COUNT(passphrase_id) AS locked FROM notes WHERE account_id = ? AND deleted IS NULL
                    """, arguments: [account.rawValue])!
            return (row["total"], row["locked"])
        }
    }
}
