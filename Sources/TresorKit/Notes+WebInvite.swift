import FoundationEssentials
import TresorProtocol

extension Notes {
    /// Invites someone to register the web account `name` (docs/WEB.md, "Registration"):
    /// the code to hand to them once. The name is case-folded; a taken name is `conflict`.
    /// - Parameter name: the login name the invite registers.
    /// - Returns: the invite, with its code and expiry.
    /// - Throws: ``TresorClientError`` with `param` (not a valid name) or `conflict` (taken).
    public func inviteWebAccount(name: String) throws -> WebInvite {
        try client.call("POST", Route.webInvites, WebInviteRequest(name: name))
    }
}
