/// What a program asks the user to allow on an item: to read its secret, to replace it, or to
/// delete the item. The user is told which in `tresor approve` and in the desktop's prompter, so
/// an approval of a read is never mistaken for one of a change.
public enum SecretAccess: String, Codable, Sendable, CaseIterable {
    case read
    case replace
    case delete
}
