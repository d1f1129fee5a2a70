import Foundation
import TresorKeybag
import TresorProtocol
import TresorSystem

/// Builds `DaemonStatus` from the keybag slot and auto-lock state.
struct StatusProvider: Sendable {
    static let daemonVersion = TresorVersion.current

    let slot: KeybagSlot
    let keychains: KeychainProvider
    let autoLock: AutoLock
    let autoLockSeconds: Int
    let terminalSessions: TerminalSessions
    let served: ServedInterfaces
    /// The home logging in opens (the user's passwd entry does not change while the daemon runs).
    let homeOpenedAtLogin = TresorPaths.openedAtLogin()

    func current() throws -> DaemonStatus {
        var status = DaemonStatus(
            apiVersion: APIVersion.current, daemonVersion: Self.daemonVersion, pid: getpid(), home: slot.paths.home.path,
            keybag: .notInitialized, problem: nil, passcodeSet: false, failedAttempts: 0, retryAfterSeconds: nil,
            availableClasses: [], autoLockSeconds: autoLockSeconds, idleSeconds: autoLock.idleSeconds, holds: autoLock.holds)
        let created = keychains.summaries().filter { $0.name != KeychainName.login && $0.name != KeychainName.systemRoots }
        status.keychains = created.isEmpty ? nil : created
        let sessions = terminalSessions.list { try? keychains.keybag(named: $0).unlockPeriod }
        status.terminalSessions = sessions.isEmpty ? nil : sessions
        status.lastActivity = autoLock.lastActivity
        let serving = served.current
        status.serving = serving == ServingInfo() ? nil : serving
        switch slot.current {
        case .notInitialized:
            break
        case .damaged(let error):
            status.keybag = .damaged
            status.problem = error.description
        case .ready(let keybag):
            let keybagStatus = keybag.status
            status.keybag = KeybagState(rawValue: keybagStatus.lockState.rawValue) ?? .locked
            status.passcodeSet = keybagStatus.isPasscodeSet
            status.failedAttempts = keybagStatus.failedAttempts
            status.retryAfterSeconds = keybagStatus.retryAfterSeconds
            status.availableClasses = keybagStatus.availableClasses.map(\.rawValue)
            if status.keybag == .locked, let lock = keychains.lastLockReason {
                status.lockReason = lock.reason
                status.lockedAt = lock.at.timeIntervalSince1970
            }
            if status.keybag == .unlocked, let unlock = keychains.lastUnlockMeans {
                status.unlockedBy = unlock.means
                status.unlockedAt = unlock.at.timeIntervalSince1970
            }
            status.loginLink = keybag.loginLinkStatus.map { link in
                LoginLinkInfo(
                    linkedAt: link.linkedAt.timeIntervalSince1970, stale: link.stale.flatMap { LoginLinkInfo.Staleness(rawValue: $0.rawValue) },
                    staleSince: link.staleSince?.timeIntervalSince1970, failedAttempts: link.failedAttempts,
                    retryAfterSeconds: link.retryAfterSeconds,
                    loginOpensOtherHome: homeOpenedAtLogin.flatMap { $0.path == slot.paths.home.path ? nil : $0.path })
            }
            if keybagStatus.attemptsFileDamaged {
                status.problem = "the unlock-attempts file was damaged; a lockout is assumed until the next correct passcode"
            }
        }
        return status
    }
}
