import Foundation
import TresorNotes
import TresorNotesDomain

extension SQLiteWebStore: WidgetStore {
    public func widget(account: AccountID) async throws -> WidgetSummary {
        try await run { try $0.widget(account: account) }
    }

    public func widgetCounts(account: AccountID) async throws -> (notes: Int, locked: Int) {
        let counts = try await run { store -> [Int] in
            let counts = try store.widgetCounts(account: account)
            return [counts.notes, counts.locked]
        }
        return (counts[0], counts[1])
    }
}
