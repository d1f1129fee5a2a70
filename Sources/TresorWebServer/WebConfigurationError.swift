/// A web setting that cannot be used, in words that name its `config.json` key or option; the
/// daemon stops with it (as it does with its own configuration errors).
public struct WebConfigurationError: Error, CustomStringConvertible {
    /// What is wrong and how to put it right.
    public let reason: String

    init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { "configuration error: \(reason)" }
}
