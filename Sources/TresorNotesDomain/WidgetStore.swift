import Foundation

/// The widget — ``WebStore``'s area for an account's note counts and recent and pinned notes.
public protocol WidgetStore: Sendable {
    /// The account's note count, most recently changed and pinned notes.
    /// - Parameter account: the owner.
    /// - Returns: the summary (titles included: the caller redacts).
    /// - Throws: ``NotesError/contentUnavailable``.
    func widget(account: AccountID) async throws -> WidgetSummary

    /// (notes, locked notes) of the account — readable even when titles are not.
    /// - Parameter account: the owner.
    /// - Returns: the counts.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func widgetCounts(account: AccountID) async throws -> (notes: Int, locked: Int)
}
