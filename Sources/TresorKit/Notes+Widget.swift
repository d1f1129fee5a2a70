import FoundationEssentials
import TresorProtocol

extension Notes {
    /// The local account's widget (docs/API.md, "The widget"): how many notes, which changed
    /// lately, which are pinned. Titles are absent (`redacted`) unless the keybag is unlocked and a
    /// secure session is open; the whole widget is a placeholder when its data-protection level
    /// says so. The `tresor` CLI only.
    /// - Returns: the note count, the recently changed and the pinned notes, and whether their
    ///   titles are redacted; or a placeholder, with the reason.
    /// - Throws: `APIError` (`missingEntitlement` for any caller but the CLI), or
    ///   ``TresorClientError``.
    public func widget() throws -> Widget { try client.call("GET", Route.widget) }
}
