import Foundation
import Hummingbird
import TresorKeybag
import TresorNotes
import TresorProtocol
import TresorSystem

/// The notes passphrase, unlock through the keychain and import (docs/API.md, "The passphrase",
/// "Unlock through the keychain", "Import").
/// Passphrases and the passcode arrive in request bodies only; hints are never logged.
struct NotePassphraseRoutes {
    let routing: NotesRouting

    func register(on router: Router<DaemonRequestContext>) {
        let routing = self.routing
        router.post(RouterPath(Route.notesPassphraseStatus)) { _, context -> NotesPassphraseStatus in
            let (store, account) = try routing.scope(context)
            return try await offloaded {
                try routing.prepare(store, for: account)
                return try routing.passphraseStatus(store, account: account)
            }
        }
        router.post(RouterPath(Route.notesSetPassphrase)) { request, context -> NotesPassphraseStatus in
            var decoded = try await request.decode(as: SetPassphraseRequest.self, context: context)
            let new = try Passphrase.taking(&decoded.passphrase)
            let body = decoded
            return try await routing.perform("passphrase set", context, keychainUnlock: false) { store, account in
                try store.setPassphrase(new, hint: body.hint, account: account)
                try routing.refreshKeychainKey(store, account: account)
                return try routing.passphraseStatus(store, account: account)
            }
        }
        router.post(RouterPath(Route.notesChangePassphrase)) { request, context -> NotesPassphraseStatus in
            var decoded = try await request.decode(as: ChangePassphraseRequest.self, context: context)
            let current = try Passphrase.taking(&decoded.current), new = try Passphrase.taking(&decoded.new)
            let body = decoded
            if body.hint != nil && body.removeHint == true { throw APIError(.param, "give hint or removeHint, not both") }
            let hint: String?? = body.removeHint == true ? .some(nil) : body.hint.map { .some($0) }
            // Never through the keychain: the current passphrase must be typed (docs/API.md,
            // "The passphrase").
            return try await routing.perform("passphrase change", context, keychainUnlock: false) { store, account in
                try store.changePassphrase(from: current, to: new, hint: hint, account: account)
                try routing.refreshKeychainKey(store, account: account)
                return try routing.passphraseStatus(store, account: account)
            }
        }
        router.post(RouterPath(Route.notesPassphraseProgress)) { _, context -> PassphraseChangeProgress in
            let progress = try routing.store(context).passphraseChangeProgress
            return PassphraseChangeProgress(running: progress != nil, done: progress?.done ?? 0, total: progress?.total ?? 0)
        }
        router.post(RouterPath(Route.notesResetPassphrase)) { request, context -> NotesPassphraseStatus in
            var decoded = try await request.decode(as: ResetPassphraseRequest.self, context: context)
            let passcode = try Passcode.taking(&decoded.passcode), new = try Passphrase.taking(&decoded.new)
            let body = decoded
            let keybag = try routing.slot.keybag()
            return try await routing.perform("passphrase reset", context, keychainUnlock: false, cliOnly: true) { store, _ in
                // The local account's password is the keybag passcode; a wrong one counts there.
                if keybag.status.isPasscodeSet {
                    guard let passcode else { throw KeybagError.passcodeRequired }
                    try keybag.verify(passcode: passcode)
                }
                try store.resetPassphrase(to: new, hint: body.hint)
                try routing.refreshKeychainKey(store)
                return try routing.passphraseStatus(store)
            }
        }
        router.post(RouterPath(Route.notesHint)) { _, context -> HintResponse in
            try await routing.perform("hint", context, keychainUnlock: false) { HintResponse(hint: try $0.passphraseHint(account: $1)) }
        }
        router.post(RouterPath(Route.notesSetHint)) { request, context -> NotesPassphraseStatus in
            var decoded = try await request.decode(as: SetHintRequest.self, context: context)
            let passphrase = try Passphrase.taking(&decoded.passphrase)
            let body = decoded
            return try await routing.perform("hint set", context) { store, account in
                try store.setPassphraseHint(body.hint, passphrase: passphrase, account: account)
                return try routing.passphraseStatus(store, account: account)
            }
        }
        router.post(RouterPath(Route.notesKeychainUnlock)) { request, context -> NotesPassphraseStatus in
            var decoded = try await request.decode(as: KeychainUnlockRequest.self, context: context)
            let passphrase = try Passphrase.taking(&decoded.passphrase)
            let body = decoded
            return try await routing.perform("keychain unlock \(body.enabled ? "on" : "off")", context, keychainUnlock: false, cliOnly: true) {
                store, _ in
                if body.enabled {
                    guard let passphrase else {
                        throw APIError(.param, "keeping the notes key in the keychain needs the current passphrase")
                    }
                    try store.openCurrentSession(with: passphrase)
                    guard let key = try store.currentSessionKey() else {
                        throw APIError(.interactionNotAllowed, "the keybag must be unlocked to keep the notes key in the keychain")
                    }
                    try routing.keychainKey.store(key, account: .local, userPresence: body.userPresence ?? false)
                    try store.setKeychainUnlock(true)
                } else {
                    routing.keychainKey.remove(account: .local)
                    try store.setKeychainUnlock(false)
                }
                return try routing.passphraseStatus(store)
            }
        }
        router.post(RouterPath(Route.notesImport)) { request, context -> ImportReport in
            _ = try routing.store(context)
            let data = try await routing.collect(request, upTo: NotesWire.maximumImportRequestBytes, what: "the import")
            let body = try DaemonJSON.decoder.decode(ImportNotesRequest.self, from: data)
            let report = try await routing.perform("import", context, keychainUnlock: false, cliOnly: true) { store, _ in
                try store.importNotes(body.notes)
            }
            context.logger.notice(
                "notes: imported",
                metadata: [
                    "imported": "\(report.imported)", "locked": "\(report.locked)", "skipped": "\(report.alreadyImported)",
                    "refused": "\(report.refused.count)",
                ])
            return report
        }
    }
}
