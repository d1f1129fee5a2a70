import Foundation
import Hummingbird
import TresorSyncProtocol

/// The account's notes passphrase for its devices (docs/SYNC.md, "Notes"): which generation is
/// current and its hint; a device sends its own when it set, changed or reset it, or changed
/// its hint.
extension SyncRoutes {
    func registerNotePassphrase<Context: SyncRequestContext>(on router: Router<Context>) {
        router.get("/v1/sync/passphrase") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let current = try await lockedNotes().syncedCurrentPassphrase(account: caller.account)
                return try reply(SyncPassphraseState(current: current.map(SyncPassphrase.init)))
            }
        }
        router.put("/v1/sync/passphrase") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let change = try await decode(SyncPassphraseChange.self, request, limit: SyncLimits.pushRequestBytes)
                let current = try await asDevice(caller) {
                    try await lockedNotes().storeSyncedPassphrase(try change.passphrase.synced(), base: change.base, account: caller.account)
                }
                return try reply(SyncPassphraseState(current: current.map(SyncPassphrase.init)))
            }
        }
    }
}
