import TresorProtocol
import TresorSyncClient

/// The sync server's refusal of this device's changes — not of the device: the request
/// contradicts what the server holds (a device sequence it does not expect), is malformed, or
/// is over a limit. The changes stay in the outbox; the sync still fetches the other devices'
/// changes, then says why its own did not go (docs/SYNC.md, "Crashes and a stopped server").
/// A refusal of the device itself (removed, signed out) or a server that cannot answer stops
/// the sync as before: the pull would meet it too.
struct PushRefusal {
    let refused: SyncClientError

    /// Nil unless `error` refuses the changes sent rather than the device.
    init?(_ error: SyncClientError) {
        guard case .refused(_, let code, _) = error, [.conflict, .invalid, .tooLarge].contains(code) else { return nil }
        refused = error
    }

    /// The sync's answer once everything else was done.
    /// - Parameter appliedFromOthers: the other devices' changes applied by this sync.
    /// - Returns: an `APIError` that says the changes wait and what the sync did nevertheless.
    func error(appliedFromOthers: Int) -> APIError {
        let applied = appliedFromOthers == 1 ? "1 change" : "\(appliedFromOthers) changes"
        return APIError(
            .conflict,
            "\(refused.description): this device's changes were not sent and stay waiting here (`tresor sync status`); "
                + "the other devices' were fetched (\(applied) applied)")
    }
}
