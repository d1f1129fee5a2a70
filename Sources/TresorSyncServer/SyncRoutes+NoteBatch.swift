import Foundation
import Hummingbird
import TresorSyncProtocol

/// A device's note changes a batch per request (docs/SYNC.md, "Notes"): each applied as the
/// single route applies it, in order and in its own transaction, and answered on its own — a
/// change refused (over the account's quota, invalid, a locked note it cannot take) does not
/// hold back the others.
extension SyncRoutes {
    func registerNoteBatch<Context: SyncRequestContext>(on router: Router<Context>) {
        router.post("/v1/sync/notes/batch") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let batch = try await decode(SyncNoteBatch.self, request, limit: SyncLimits.pushRequestBytes)
                guard (1...SyncNoteBatch.maxChanges).contains(batch.changes.count) else {
                    throw SyncRefusal(.invalid, "a batch holds 1 to \(SyncNoteBatch.maxChanges) changes")
                }
                guard Set(batch.changes.map(\.localID)).count == batch.changes.count else {
                    throw SyncRefusal(.invalid, "a batch names each note once")
                }
                var answers: [SyncNoteChangeAnswer] = []
                for change in batch.changes {
                    do {
                        answers.append(
                            SyncNoteChangeAnswer(result: try await asDevice(caller) { try await applyNoteChange(change, caller: caller) }))
                    } catch {
                        let refusal = SyncRefusal.from(error)
                        // The database gone, or a failure of ours: the whole batch is answered
                        // so (the device retries it); what went before is applied and answers
                        // the same when retried.
                        guard refusal.status.code < 500 else { throw refusal }
                        answers.append(
                            SyncNoteChangeAnswer(
                                status: Int(refusal.status.code), refusal: SyncErrorBody(code: refusal.code, message: refusal.message)))
                    }
                }
                return try reply(SyncNoteBatchAnswer(answers: answers))
            }
        }
    }
}
