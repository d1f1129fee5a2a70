import FoundationEssentials
import TresorProtocol

extension Notes {
    /// Makes a code that sets a new password for the web account `name` (docs/WEB.md, "A
    /// forgotten password"): hand it to the account's owner once. An earlier code for the
    /// account stops working.
    /// - Parameter name: the account's login name.
    /// - Returns: the code and its expiry.
    /// - Throws: `APIError` with `param` (not a valid name, or `local`) or `notFound` (no such
    ///   account); ``TresorClientError`` when the daemon cannot be reached.
    public func resetWebPassword(name: String) throws -> WebPasswordReset {
        try client.call("POST", Route.webPasswordResets, WebPasswordResetRequest(name: name))
    }
}
