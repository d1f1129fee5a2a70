import Foundation
import Hummingbird
import TresorSyncProtocol

/// The account's folders for its devices (docs/SYNC.md, "Notes"): a device sends the folders it
/// made and deleted — empty ones too — and gets the account's folders back.
extension SyncRoutes {
    func registerNoteFolders<Context: SyncRequestContext>(on router: Router<Context>) {
        router.post("/v1/sync/folders") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let changes = try await decode(SyncFolderChanges.self, request, limit: SyncLimits.pushRequestBytes)
                guard changes.created.count + changes.deleted.count <= SyncFolderChanges.maxNames else {
                    throw SyncRefusal(.invalid, "a request names at most \(SyncFolderChanges.maxNames) folders")
                }
                let names = try await asDevice(caller) {
                    try await lockedNotes().applySyncedFolderChanges(created: changes.created, deleted: changes.deleted, account: caller.account)
                }
                return try reply(SyncFolders(names: names))
            }
        }
    }
}
