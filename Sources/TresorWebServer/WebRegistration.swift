/// Who may register a web account (docs/WEB.md, "Registration").
public enum WebRegistration: String, Codable, Sendable {
    /// Only with an invite the owner made for a name (`tresor web invite NAME`): nobody can
    /// learn from the server which names exist. The default.
    case invite
    /// Anyone who reaches the server picks a name; a taken name answers `409 conflict`, so
    /// names can be probed — for a machine whose users all know each other.
    case open
}
