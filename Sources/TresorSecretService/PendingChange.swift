import TresorDBus
import TresorModel

/// A change to an item that waits for the user's approval: a generic client the user does not
/// trust now replaces or deletes one of its items only once the user allows it, in the prompt
/// its `CreateItem` or `Delete` returned (docs/SECURITY.md, "Generic clients"). Kept in the
/// daemon's memory with its prompt, and made when the user allows it — or dropped with the prompt.
struct PendingChange: Sendable {
    enum Kind: Sendable {
        /// `CreateItem` with `replace`: the item gets this label and secret.
        case replace(label: String, secret: SecretValue)
        /// `Item.Delete`.
        case delete
    }

    var kind: Kind
    /// The collection's name and the item's id in it.
    var collection: String
    var id: String
    /// The client as it asked: the change is made as it, with the approval for this item.
    var client: SecretServiceClient

    /// The prompt's result when the change is not made, of the type its success has: libsecret
    /// checks the type even of a dismissed prompt's result, and waits forever on another.
    var resultWhenNotMade: DBusValue {
        switch kind {
        case .replace: .objectPath(SecretObjectPath.none)
        case .delete: .objectPaths([])
        }
    }

    /// The error a client that still waits for its `Prompt` call gets when the user refuses:
    /// libsecret would read the dismissal of a replacement as stored (`secret-tool store` exiting 0).
    var refusedByTheUser: DBusError {
        switch kind {
        case .replace: .accessDenied("you refused to let this program replace the item's secret: nothing was stored")
        case .delete: .accessDenied("you refused to let this program delete the item: nothing was deleted")
        }
    }

    /// What the user is asked to allow.
    var access: SecretAccess {
        switch kind {
        case .replace: .replace
        case .delete: .delete
        }
    }
}
