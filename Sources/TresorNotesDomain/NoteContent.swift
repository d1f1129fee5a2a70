import Foundation

// How a late edit meets the stored note (docs/FORMAT.md, "Revisions and merges"): the same
// rules for every store.

/// A note's title and body as one edit gives them (nil: not changed).
public struct NoteContent: Sendable, Equatable {
    public var title: String?
    public var body: String?

    public init(title: String? = nil, body: String? = nil) {
        self.title = title
        self.body = body
    }

    /// This edit merged into `stored` (made from `base`), or nil on a conflict. A field this
    /// edit changes needs its base value to be merged, unless it equals the stored one.
    public func merged(into stored: NoteContent, base: NoteBase) -> NoteContent? {
        var result = NoteContent()
        if let title, let storedTitle = stored.title {
            if title == storedTitle {
                result.title = title
            } else {
                guard let baseTitle = base.title, let merged = ThreeWayMerge.mergeValue(base: baseTitle, saved: storedTitle, incoming: title) else {
                    return nil
                }
                result.title = merged
            }
        }
        if let body, let storedBody = stored.body {
            if body == storedBody {
                result.body = body
            } else {
                guard let baseBody = base.body, case .merged(let merged) = ThreeWayMerge.merge(base: baseBody, saved: storedBody, incoming: body)
                else {
                    return nil
                }
                result.body = merged
            }
        }
        return result
    }

    /// This edit with the fields it leaves unchanged taken from `stored`.
    public func filled(from stored: NoteContent) -> NoteContent {
        NoteContent(title: title ?? stored.title, body: body ?? stored.body)
    }
}
