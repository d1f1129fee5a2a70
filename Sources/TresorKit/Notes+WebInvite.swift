import FoundationEssentials
import TresorProtocol

extension Notes {
    /// Invites someone to register the web account `name` (docs/WEB.md, "Registration"):
    /// the code to hand to them once. The name is case-folded; a taken name is `conflict`.
    /// - Parameter name: the login name the invite registers.
    /// - Returns: the invite, with its code and expiry.
    /// - Throws: `APIError` with `param` (not a valid name, or `local`) or `conflict` (taken); ``TresorClientError``
    ///   when the daemon cannot be reached.
    public func inviteWebAccount(name: String) throws -> WebInvite {
        try client.call("POST", Route.webInvites, WebInviteRequest(name: name))
    }
}
