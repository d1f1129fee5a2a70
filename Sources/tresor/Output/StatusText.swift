import FoundationEssentials
import TresorModel
import TresorProtocol

/// `tresor status` as text.
struct StatusText {
    let status: DaemonStatus
    /// This device's sync account, when it is in one: summed up in a `Sync:` line.
    let sync: SyncStatusAnswer?

    init(_ status: DaemonStatus, sync: SyncStatusAnswer? = nil) {
        self.status = status
        self.sync = sync
    }

    var rendered: String {
        let served = ServedSummary(status)
        var lines = [
            "Keybag:     \(status.keybag.text)\([.notInitialized, .damaged].contains(status.keybag) ? "" : status.passcodeSet ? " (passcode set)" : " (no passcode)")",
            "Home:       \(status.home)",
            "Daemon:     pid \(status.pid), tresord \(status.daemonVersion), API v\(status.apiVersion)",
            served.autoLockLine,
        ]
        if let lockLine = served.lockStateLine { lines.insert(lockLine, at: 1) }
        lines.append(contentsOf: served.servingLines)
        for keychain in status.keychains ?? [] {
            // "since the daemon started" is said once, on the keybag's line, when both are.
            let alike = keychain.state == KeybagState.lockedSinceStart.rawValue && status.keybag == .lockedSinceStart
            lines.append("Keychain:   \(keychain.name) \(alike ? "locked" : Words.of(keychain.state))")
        }
        if let sync, sync.joined { lines.append(contentsOf: Self.syncLines(sync)) }
        if let link = status.loginLink { lines.append(contentsOf: loginLinkLines(link)) }
        if let problem = status.problem { lines.append("Problem:    \(problem)") }
        if status.failedAttempts > 0 {
            var line = "Failed passcode attempts: \(status.failedAttempts)"
            if let wait = status.retryAfterSeconds { line += "; next attempt in \(Words.duration(wait))" }
            lines.append(line)
        }
        for session in status.terminalSessions ?? [] {
            let left = max(0, Int(session.expires - Date().timeIntervalSince1970))
            lines.append("Terminal:   \(session.terminal) reads \(session.keychain) secrets without the passcode for \(Words.duration(left)) more")
        }
        if status.holds.isEmpty {
            lines.append("Holds:      none")
        } else {
            lines.append("Holds:")
            for hold in status.holds {
                lines.append(
                    "  - \"\(hold.reason)\" by \(hold.client.executable) (pid \(hold.client.pid)), \(Words.duration(Int(Date().timeIntervalSince1970 - hold.since))) ago"
                )
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The sync account's line — where, and whether changes come by themselves — and, when the
    /// last sync failed or changes wait, a line saying so and where to look.
    static func syncLines(_ sync: SyncStatusAnswer) -> [String] {
        let how =
            switch sync.state {
            case .waiting: "waiting for another device to approve this one (tresor sync approve there)"
            case .removed: "removed by another device: nothing goes out or comes in (tresor sync status)"
            case .trusted, nil:
                if sync.inBackground == false {
                    "syncs only at tresor sync now"
                } else if sync.live == true {
                    "live"
                } else {
                    "not listening now: syncs after changes here and every five minutes"
                }
            }
        var lines = ["Sync:       \(sync.account ?? "") on \(sync.server ?? ""), \(how)"]
        if let error = sync.lastError { lines.append("            last sync failed: \(error) (tresor sync status)") }
        let waiting = (sync.counters?.changesWaiting ?? 0) + (sync.notesWaiting ?? 0)
        if waiting > 0 { lines.append("            \(Words.counted(waiting, "change")) waiting to go out") }
        return lines
    }

    /// The login link's line, and when it is stale, why and how to relink.
    private func loginLinkLines(_ link: LoginLinkInfo) -> [String] {
        if let other = link.loginOpensOtherHome {
            return [
                "Login:      linked to the login password, but logging in does not unlock this home: the login opens only \(other)",
                "            (it does not see TRESOR_HOME or XDG_DATA_HOME)",
            ]
        }
        guard let stale = link.stale else { return ["Login:      linked to the login password (unlocked at login)"] }
        let why =
            switch stale {
            case .passwordChangedWithoutOld: "the login password was changed without the old one (root's passwd)"
            case .passwordDidNotOpen:
                "a login password handed over did not open the keybag — changed outside passwd, or tried by a program of yours (any can ask)"
            }
        var lines = [
            "Login:      linked to the login password, but stale: \(why)",
            "            relink with `tresor passcode link-login` (your passcode, then your current login password)",
        ]
        if link.failedAttempts > 0 {
            var line = "            \(link.failedAttempts) login password\(link.failedAttempts == 1 ? "" : "s") did not open it"
            if let wait = link.retryAfterSeconds { line += "; the next is taken in \(Words.duration(wait))" }
            lines.append(line)
        }
        return lines
    }
}

/// What the daemon serves and how its keybag's clock runs — why the keybag is locked, the
/// auto-lock clock and what last reset it, the web client's address, the Secret Service, the last
/// prompt nobody answered: the part of `GET /v1/status` that both `tresor status` and
/// `tresor daemon status` show, with the same lines and, in `--json`, the same fields as
/// ``DaemonStatus`` (docs/CLI.md, "The daemon").
struct ServedSummary: Encodable {
    /// Whether the keybag is unlocked, locked, or neither yet.
    var keybag: KeybagState
    /// Idle time before the keybag locks itself; 0 means never.
    var autoLockSeconds: Int
    var idleSeconds: Int
    /// What reset the auto-lock clock last.
    var lastActivity: String?
    /// Why the keybag was locked last, while it is locked.
    var lockReason: String?
    /// When that was, in seconds since the Unix epoch (an ISO 8601 date in `--json`).
    var lockedAt: Double?
    /// How the keybag was unlocked last, while it is unlocked.
    var unlockedBy: String?
    /// When that was, in seconds since the Unix epoch (an ISO 8601 date in `--json`).
    var unlockedAt: Double?
    /// What the daemon serves besides its socket.
    var serving: ServingInfo?

    /// The summary of a daemon's status.
    /// - Parameter status: what the daemon answered to `GET /v1/status`.
    init(_ status: DaemonStatus) {
        keybag = status.keybag
        autoLockSeconds = status.autoLockSeconds
        idleSeconds = status.idleSeconds
        lastActivity = status.lastActivity
        lockReason = status.lockReason
        lockedAt = status.lockedAt
        unlockedBy = status.unlockedBy
        unlockedAt = status.unlockedAt
        serving = status.serving
    }

    /// `Locked:` — how long ago and why the keybag was locked; nil unless it is locked and the
    /// daemon knows why.
    var lockedLine: String? {
        guard let lockReason else { return nil }
        let ago = lockedAt.map { "\(Words.duration(Int(Date().timeIntervalSince1970 - $0))) ago: " } ?? ""
        return "Locked:     \(ago)\(lockReason)"
    }

    /// `Unlocked:` — how long ago and how the keybag was unlocked (at login, in the desktop's
    /// prompter…); nil unless it is unlocked and the daemon saw how.
    var unlockedLine: String? {
        guard let unlockedBy else { return nil }
        let ago = unlockedAt.map { "\(Words.duration(Int(Date().timeIntervalSince1970 - $0))) ago: " } ?? ""
        return "Unlocked:   \(ago)\(unlockedBy)"
    }

    /// `Locked:` while the keybag is locked, `Unlocked:` while it is unlocked — each when the
    /// daemon knows why.
    var lockStateLine: String? { lockedLine ?? unlockedLine }

    /// `Auto-lock:` — after how long idle and, while the keybag is unlocked, how long it has been
    /// idle and what reset the clock last.
    var autoLockLine: String {
        let rule = "Auto-lock:  \(autoLockSeconds == 0 ? "off" : "after \(Words.duration(autoLockSeconds)) idle")"
        // A locked keybag has nothing for the clock to lock: its idle time would say nothing.
        guard keybag == .unlocked else { return rule }
        return rule + " (idle \(Words.duration(idleSeconds))" + (lastActivity.map { "; last activity: \($0)" } ?? "") + ")"
    }

    /// `Web:`, `Secret Service:` and `Unanswered:`, each when there is something to say.
    var servingLines: [String] {
        guard let serving else { return [] }
        var lines: [String] = []
        if let web = serving.web { lines.append("Web:        \(web)") }
        if let secretService = serving.secretService { lines.append("Secret Service: \(secretService)") }
        if let dismissed = serving.lastPromptNobodyAnswered {
            let ago = Words.duration(Int(Date().timeIntervalSince1970 - dismissed.at))
            let wanted =
                switch (dismissed.waitedFor, dismissed.access ?? .read) {
                case (.unlock, _): "the keybag unlocked"
                case (.approval, .read): "your approval of a read"
                case (.approval, .replace): "your approval of a replacement"
                case (.approval, .delete): "your approval of a deletion"
                }
            lines.append("Unanswered: \(ago) ago, \(dismissed.executable) waited for \(wanted) and was told no: \(dismissed.reason)")
        }
        return lines
    }
}

extension KeybagState {
    var text: String {
        switch self {
        case .notInitialized: return "not initialised (run `tresor init`)"
        case .damaged: return "damaged"
        case .lockedSinceStart: return "locked since the daemon started"
        case .unlocked: return "unlocked"
        case .locked: return "locked"
        }
    }
}
