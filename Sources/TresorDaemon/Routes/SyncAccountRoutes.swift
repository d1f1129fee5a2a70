import Foundation
import Hummingbird
import TresorKeybag
import TresorKeychain
import TresorProtocol
import TresorSystem

/// `tresor sync …` (docs/SYNC.md, "Devices"): this device's sync account. The CLI only;
/// approving or removing a device needs the passcode again, like the other operations that let
/// someone in or shut a device out.
/// Passwords, passcodes and recovery keys arrive in bodies and are never logged.
struct SyncAccountRoutes {
    let account: SyncAccount
    let slot: KeybagSlot
    let keychains: KeychainProvider
    let notes: NotesProvider
    let callers: CallerResolver
    /// The daemon's background sync, whose last error and stream `status` shows.
    let background: BackgroundSync

    func register(on router: Router<DaemonRequestContext>) {
        let account = self.account, slot = self.slot, keychains = self.keychains, notes = self.notes, callers = self.callers
        router.post(RouterPath(Route.syncJoin)) { request, context -> SyncJoinAnswer in
            try callers.requireCLI(try context.requireClient(), toManage: "sync")
            let answer = try await account.join(try await request.decode(as: SyncJoinRequestBody.self, context: context))
            context.logger.notice("sync: joined", metadata: ["state": "\(answer.state.rawValue)", "device": "\(answer.deviceID)"])
            return answer
        }
        router.post(RouterPath(Route.syncJoinCheck)) { _, context -> SyncJoinAnswer in
            try callers.requireCLI(try context.requireClient(), toManage: "sync")
            return try await account.check()
        }
        router.post(RouterPath(Route.syncRecover)) { request, context -> SyncJoinAnswer in
            try callers.requireCLI(try context.requireClient(), toManage: "sync")
            let answer = try await account.recover(try await request.decode(as: SyncRecoverRequestBody.self, context: context))
            context.logger.notice("sync: joined with the recovery key", metadata: ["device": "\(answer.deviceID)"])
            return answer
        }
        router.get(RouterPath(Route.syncRequests)) { _, context -> SyncRequestsAnswer in
            try callers.requireCLI(try context.requireClient(), toManage: "sync")
            return SyncRequestsAnswer(requests: try await account.pendingRequests())
        }
        router.post(RouterPath(Route.syncRequest + "/:id/approve")) { request, context -> Response in
            try callers.requireCLI(try context.requireClient(), toManage: "sync")
            var body = try await request.decode(as: SyncApproveRequestBody.self, context: context)
            let given = try Passcode.taking(&body.passcode)
            let keybag = try slot.keybag()
            if keybag.status.isPasscodeSet {
                guard let passcode = given else { throw APIError(.passcodeRequired, "approving a device needs the passcode") }
                try await offloaded { try keybag.verify(passcode: passcode) }  // a wrong one counts, as at unlock
            }
            let id = try context.parameters.require("id")
            try await account.approve(id)
            context.logger.notice("sync: join request approved", metadata: ["request": "\(id)"])
            return Response(status: .noContent)
        }
        router.post(RouterPath(Route.syncRequest + "/:id/deny")) { _, context -> Response in
            try callers.requireCLI(try context.requireClient(), toManage: "sync")
            let id = try context.parameters.require("id")
            try await account.deny(id)
            context.logger.notice("sync: join request denied", metadata: ["request": "\(id)"])
            return Response(status: .noContent)
        }
        router.get(RouterPath(Route.syncDevices)) { _, context -> SyncDevicesAnswer in
            try callers.requireCLI(try context.requireClient(), toManage: "sync")
            return try await account.devices()
        }
        router.delete(RouterPath(Route.syncDevices + "/:id")) { request, context -> SyncDeviceInfo in
            try callers.requireCLI(try context.requireClient(), toManage: "sync")
            var body = try await request.decode(as: SyncRemoveRequestBody.self, context: context)
            try await slot.requireConsent(passcode: try Passcode.taking(&body.passcode), toDo: "removing a device")
            let named = try context.parameters.require("id")
            let removed = try await account.remove(PercentEncoding.decode(named) ?? named)
            context.logger.notice("sync: device removed, circle key rolled", metadata: ["device": "\(removed.deviceID)"])
            return removed
        }
        router.post(RouterPath(Route.syncLeave)) { _, context -> SyncLeaveAnswer in
            try callers.requireCLI(try context.requireClient(), toManage: "sync")
            let told = try await account.leave()
            context.logger.notice("sync: left the sync account", metadata: ["serverTold": "\(told)"])
            return SyncLeaveAnswer(serverTold: told)
        }
        router.post(RouterPath(Route.syncNow)) { request, context -> SyncNowAnswer in
            try callers.requireCLI(try context.requireClient(), toManage: "sync")
            let body = try await request.decode(as: SyncNowRequestBody.self, context: context)
            let answer = try await account.syncNow(try keychains.loginKeychain(), notes: try notes.store(), allowDeletions: body.allowDeletions)
            context.logger.notice(
                "sync: synced",
                metadata: [
                    "pushed": "\(answer.pushed)", "applied": "\(answer.applied)", "conflicts": "\(answer.conflictsKept)",
                    "heldDeletions": "\(answer.heldDeletions)", "heldNoteDeletions": "\(answer.notes?.heldDeletions ?? 0)",
                    "notesPassphraseOvertaken": "\(answer.notes?.passphraseOvertaken ?? false)",
                ])
            return answer
        }
        router.get(RouterPath(Route.syncStatus)) { _, context -> SyncStatusAnswer in
            try callers.requireCLI(try context.requireClient(), toManage: "sync")
            var status = try await account.status()
            if status.joined, let keychain = try? keychains.loginKeychain() { status.counters = try? account.counters(keychain) }
            if status.joined {
                status.notesWaiting = try? notes.store().noteChangesWaiting()
                status.noteDeletionsHeld = try? notes.store().noteDeletionsHeld()
                status.notesHeldUntilLocked = try? notes.store().notesHeldUntilLocked()
                if let store = try? notes.store() { status.attachments = try? await account.attachmentsStatus(store) }
                let report = background.report
                (status.lastError, status.lastErrorAt) = (report.lastError, report.lastErrorAt)
                (status.live, status.inBackground) = report.runs ? (report.live, nil) : (nil, false)
            }
            return status
        }
        router.get(RouterPath(Route.syncConflicts)) { _, context -> SyncConflictsAnswer in
            try callers.requireCLI(try context.requireClient(), toManage: "sync")
            return SyncConflictsAnswer(conflicts: try account.conflicts(try keychains.loginKeychain()))
        }
        router.get(RouterPath(Route.syncSecretServiceOwners)) { _, context -> SyncOwnersAnswer in
            try callers.requireCLI(try context.requireClient(), toManage: "sync")
            return SyncOwnersAnswer(owners: try keychains.loginKeychain().syncedSecretServiceOwners())
        }
        router.post(RouterPath(Route.syncSecretServiceOwners)) { request, context -> SyncOwnersAnswer in
            try callers.requireCLI(try context.requireClient(), toManage: "sync")
            let body = try await request.decode(as: SyncOwnerRequestBody.self, context: context)
            // Its items are read to record them (or their tombstones): a locked keybag would miss some.
            guard try slot.keybag().lockState == .unlocked else {
                throw KeychainError.interactionNotAllowed("including or excluding an owner needs the keybag unlocked: `tresor unlock`")
            }
            let owners = try keychains.loginKeychain().setSecretServiceOwner(body.owner, synced: body.include)
            context.logger.notice("sync: Secret Service owner \(body.include ? "included" : "excluded")")
            return SyncOwnersAnswer(owners: owners)
        }
        router.post(RouterPath(Route.syncConflicts + "/:id/restore")) { request, context -> Response in
            let (id, caller) = try await conflictRequest(request, context)
            try await offloaded { try keychains.loginKeychain().restoreSyncConflict(id, caller: caller) }
            context.logger.notice("sync: kept conflict restored", metadata: ["conflict": "\(id)"])
            return Response(status: .noContent)
        }
        router.post(RouterPath(Route.syncConflicts + "/:id/secret")) { request, context -> SyncConflictSecretAnswer in
            let (id, caller) = try await conflictRequest(request, context)
            return SyncConflictSecretAnswer(secret: try await offloaded { try keychains.loginKeychain().syncConflictSecret(id, caller: caller) })
        }
        router.post(RouterPath(Route.syncConflicts + "/:id/discard")) { request, context -> Response in
            let (id, caller) = try await conflictRequest(request, context)
            try await offloaded { try keychains.loginKeychain().discardSyncConflict(id, caller: caller) }
            context.logger.notice("sync: kept conflict discarded", metadata: ["conflict": "\(id)"])
            return Response(status: .noContent)
        }
    }

    /// A request about one kept conflict, from the CLI: its id, and the caller with the passcode
    /// the body may carry (a passcode to check is one slow KDF run: not on this executor's thread).
    private func conflictRequest(_ request: Request, _ context: DaemonRequestContext) async throws -> (id: String, caller: Caller) {
        let client = try context.requireClient()
        try callers.requireCLI(client, toManage: "sync")
        let id = try context.parameters.require("id")
        var body = try await request.decode(as: SyncConflictRequestBody.self, context: context)
        return (PercentEncoding.decode(id) ?? id, try callers.caller(for: client, passcode: try Passcode.taking(&body.passcode), keychain: nil))
    }
}

extension SyncLeaveAnswer: ResponseEncodable {}
extension SyncJoinAnswer: ResponseEncodable {}
extension SyncRequestsAnswer: ResponseEncodable {}
extension SyncDevicesAnswer: ResponseEncodable {}
extension SyncDeviceInfo: ResponseEncodable {}
extension SyncStatusAnswer: ResponseEncodable {}
extension SyncNowAnswer: ResponseEncodable {}
extension SyncConflictsAnswer: ResponseEncodable {}
extension SyncConflictSecretAnswer: ResponseEncodable {}
extension SyncOwnersAnswer: ResponseEncodable {}
