import Foundation
import Hummingbird
import Logging
import TresorKeybag
import TresorProtocol
import TresorSystem

/// `init`, `unlock`, `lock` and the passcode routes. Passcodes arrive in request bodies only
/// and are never logged; every log line here names the operation and its outcome.
struct KeybagRoutes {
    let slot: KeybagSlot
    let keychains: KeychainProvider
    let notes: NotesProvider
    let status: StatusProvider
    let terminalSessions: TerminalSessions

    func register(on router: Router<DaemonRequestContext>) {
        router.post(RouterPath(Route.initialize)) { request, context in
            var body = try await request.decode(as: InitRequest.self, context: context)
            let passcode = try Passcode.taking(&body.passcode)
            _ = try await slot.initialize(passcode: passcode)
            // The databases are made now, as a daemon started on the home would: an initialised
            // home always has them, so nothing later (a restore that fails) makes them as a side effect.
            try await offloaded {
                _ = try keychains.loginKeychain()
                notes.openIfInitialised()
            }
            context.logger.notice("keybag created", metadata: ["passcode": "\(passcode == nil ? "none" : "set")"])
            return try status.current()
        }
        router.post(RouterPath(Route.unlock)) { request, context in
            var body = try await request.decode(as: UnlockRequest.self, context: context)
            let passcode = try Passcode.taking(&body.passcode)
            let keybag = try keychains.keybag(named: body.keychain)
            // Checked before the passcode is: a session that cannot be opened is no reason to try it.
            let terminal = try body.terminalSessionSeconds.map {
                try terminalForSession(seconds: $0, context, passcodeSet: keybag.status.isPasscodeSet)
            }
            try await Self.logged("unlock", context) { try await offloaded { try keybag.unlock(passcode: passcode) } }
            if (body.keychain ?? KeychainName.login) == KeychainName.login {
                let client = try context.requireClient()
                keychains.recordUnlock(by: "the passcode, from \(client.executable) (pid \(client.credentials.pid))")
            }
            if let terminal, let seconds = body.terminalSessionSeconds, let period = keybag.unlockPeriod {
                terminalSessions.open(keychain: body.keychain ?? KeychainName.login, terminal: terminal, seconds: seconds, period: period)
                context.logger.notice("terminal session opened", metadata: ["terminal": "\(terminal.name)", "seconds": "\(seconds)"])
            }
            return try status.current()
        }
        router.post(RouterPath(Route.lock)) { request, context in
            // The body is optional: without a keychain named, every keychain locks. A body that
            // is there but malformed is an error, not a reason to lock everything.
            var request = request
            let bytes = try await request.collectBody(upTo: context.maxUploadSize)
            let body = bytes.readableBytes == 0 ? nil : try await request.decode(as: LockRequest.self, context: context)
            var endedSessions = 0
            let client = try context.requireClient()
            let who = "asked by \(client.executable) (pid \(client.credentials.pid))"
            if let name = body?.keychain {
                try keychains.keybag(named: name).lock()
                keychains.keybagLocked()
                // Notes content is under the login keybag: locking it ends the secure sessions.
                if name == KeychainName.login {
                    keychains.recordLock(because: who)
                    endedSessions = notes.lockNow()
                }
            } else {
                _ = try slot.keybag()
                keychains.lockAll(because: who)
                endedSessions = notes.lockNow()
            }
            context.logger.notice(
                "locked by a client",
                metadata: [
                    "keychain": "\(body?.keychain ?? "all")", "notesSessionsEnded": "\(endedSessions)",
                ])
            return try status.current()
        }
        router.post(RouterPath(Route.changePasscode)) { request, context in
            var body = try await request.decode(as: ChangePasscodeRequest.self, context: context)
            let current = try Passcode.taking(&body.current)
            let new = try Passcode.taking(&body.new)
            let keybag = try keychains.keybag(named: body.keychain)
            try await Self.logged("passcode change", context) {
                try await offloaded { try keybag.changePasscode(current: current, to: new) }
            }
            return try status.current()
        }
        router.post(RouterPath(Route.removePasscode)) { request, context in
            var body = try await request.decode(as: RemovePasscodeRequest.self, context: context)
            let current = try Passcode.taking(&body.current)
            let keybag = try slot.keybag()
            try await Self.logged("passcode removal", context) { try await offloaded { try keybag.removePasscode(current: current) } }
            // The class key is gone: its items can never be read again, so they go too.
            let purged = try keychains.loginKeychain().purge(.whenPasscodeSetThisDeviceOnly)
            context.logger.notice("whenPasscodeSetThisDeviceOnly items purged", metadata: ["count": "\(purged)"])
            return try status.current()
        }
    }

    /// The terminal a session of `seconds` opens for: the requesting CLI's own.
    /// - Throws: `param` for a length out of range, a client without a terminal or a keybag
    ///   without a passcode; `missingEntitlement` for anything but the CLI.
    private func terminalForSession(seconds: Int, _ context: DaemonRequestContext, passcodeSet: Bool) throws -> ControllingTerminal {
        guard (1...TerminalSessionInfo.longestSeconds).contains(seconds) else {
            throw APIError(.param, "a terminal session lasts 1 second to \(TerminalSessionInfo.longestSeconds / 60) minutes")
        }
        let client = try context.requireClient()
        guard client.isCLI, client.borrowed == nil else {
            throw APIError(.missingEntitlement, "only the tresor command-line tool opens terminal sessions")
        }
        guard passcodeSet else {
            throw APIError(.noPasscodeSet, "a terminal session stands for the passcode, and none is set")
        }
        guard let terminal = client.terminal else {
            throw APIError(.param, "tresor was not run from a terminal: a terminal session is opened in the terminal that will use it")
        }
        return terminal
    }

    /// Logs the outcome of a passcode operation: success, or the kind of failure (never the input).
    static func logged(_ operation: String, _ context: DaemonRequestContext, _ body: () async throws -> Void) async throws {
        let pid = context.client.map { "\($0.credentials.pid)" } ?? "?"
        do {
            try await body()
            context.logger.notice("\(operation) succeeded", metadata: ["pid": "\(pid)"])
        } catch let error as KeybagError {
            context.logger.warning("\(operation) failed", metadata: ["pid": "\(pid)", "reason": "\(error)"])
            throw error
        }
    }
}
