import FoundationEssentials
import TresorProtocol

/// `tresor status` as text.
struct StatusText {
    let status: DaemonStatus

    init(_ status: DaemonStatus) { self.status = status }

    var rendered: String {
        var lines = [
            "Keybag:     \(status.keybag.text)\(status.keybag == .notInitialized ? "" : status.passcodeSet ? " (passcode set)" : " (no passcode)")",
            "Home:       \(status.home)",
            "Daemon:     pid \(status.pid), tresord \(status.daemonVersion), API v\(status.apiVersion)",
            "Auto-lock:  \(status.autoLockSeconds == 0 ? "off" : "after \(duration(status.autoLockSeconds)) idle") (idle \(duration(status.idleSeconds))"
                + (status.lastActivity.map { "; last activity: \($0)" } ?? "") + ")",
        ]
        if let reason = status.lockReason {
            let ago = status.lockedAt.map { "\(duration(Int(Date().timeIntervalSince1970 - $0))) ago: " } ?? ""
            lines.insert("Locked:     \(ago)\(reason)", at: 1)
        }
        if let serving = status.serving {
            if let web = serving.web { lines.append("Web:        \(web)") }
            if let secretService = serving.secretService { lines.append("Secret Service: \(secretService)") }
            if let dismissed = serving.lastPromptNobodyAnswered {
                let ago = duration(Int(Date().timeIntervalSince1970 - dismissed.at))
                let wanted = dismissed.waitedFor == .unlock ? "the keybag unlocked" : "your approval of a read"
                lines.append("Unanswered: \(ago) ago, \(dismissed.executable) waited for \(wanted) and was told no: \(dismissed.reason)")
            }
        }
        for keychain in status.keychains ?? [] {
            // "since the daemon started" is said once, on the keybag's line, when both are.
            let alike = keychain.state == DaemonStatus.KeybagState.lockedSinceStart.rawValue && status.keybag == .lockedSinceStart
            lines.append("Keychain:   \(keychain.name) \(alike ? "locked" : Words.of(keychain.state))")
        }
        if let link = status.loginLink { lines.append(contentsOf: loginLinkLines(link)) }
        if let problem = status.problem { lines.append("Problem:    \(problem)") }
        if status.failedAttempts > 0 {
            var line = "Failed passcode attempts: \(status.failedAttempts)"
            if let wait = status.retryAfterSeconds { line += "; next attempt in \(duration(wait))" }
            lines.append(line)
        }
        for session in status.terminalSessions ?? [] {
            let left = max(0, Int(session.expires - Date().timeIntervalSince1970))
            lines.append("Terminal:   \(session.terminal) reads \(session.keychain) secrets without the passcode for \(duration(left)) more")
        }
        if status.holds.isEmpty {
            lines.append("Holds:      none")
        } else {
            lines.append("Holds:")
            for hold in status.holds {
                lines.append(
                    "  - \"\(hold.reason)\" by \(hold.client.executable) (pid \(hold.client.pid)), \(duration(Int(Date().timeIntervalSince1970 - hold.since))) ago"
                )
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The login link's line, and when it is stale, why and how to relink.
    private func loginLinkLines(_ link: LoginLinkInfo) -> [String] {
        guard let stale = link.stale else { return ["Login:      linked to the login password (unlocked at login)"] }
        let why =
            switch stale {
            case .passwordChangedWithoutOld: "the login password was changed without the old one (root's passwd)"
            case .passwordDidNotOpen: "a login password did not open the keybag (changed outside passwd?)"
            }
        var lines = [
            "Login:      linked to the login password, but stale: \(why)",
            "            relink with `tresor passcode link-login` (your passcode, then your current login password)",
        ]
        if link.failedAttempts > 0 {
            var line = "            \(link.failedAttempts) login password\(link.failedAttempts == 1 ? "" : "s") did not open it"
            if let wait = link.retryAfterSeconds { line += "; the next is taken in \(duration(wait))" }
            lines.append(line)
        }
        return lines
    }

    private func duration(_ seconds: Int) -> String {
        seconds < 120 ? "\(seconds) s" : seconds < 7200 ? "\(seconds / 60) min" : "\(seconds / 3600) h"
    }
}

extension DaemonStatus.KeybagState {
    var text: String {
        switch self {
        case .notInitialized: return "not initialised (run `tresor init`)"
        case .damaged: return "damaged"
        case .lockedSinceStart: return "locked (since the daemon started)"
        case .unlocked: return "unlocked"
        case .locked: return "locked"
        }
    }
}
