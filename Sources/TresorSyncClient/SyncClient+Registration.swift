import Foundation
import TresorSyncProtocol

extension SyncClient {
    /// Registers the web account this device is about to join (`POST /v1/sync/accounts`), with
    /// the owner's invite where the server registers by invite.
    /// - Parameter registration: the account's name, its new password and the invite.
    /// - Returns: the account as the server named it.
    /// - Throws: ``SyncClientError``: `forbidden` without a valid invite, `conflict` for a taken
    ///   name (open registration), `throttled`.
    public func registerAccount(_ registration: SyncAccountRegistration) async throws -> SyncAccountRegistered {
        try await call("POST", "/v1/sync/accounts", body: registration, signedIn: false)
    }
}
