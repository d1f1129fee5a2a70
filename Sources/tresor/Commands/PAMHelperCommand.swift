import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// What the PAM module (`Support/pam/pam_tresor.c`) runs, as the user, to hand over the login
/// password: a fresh process, so the daemon identifies a clean executable (a process forked
/// from a root login program and set to the user's uid is not dumpable, and holds the login
/// program's memory). Secrets come on standard input only. Not for people: hidden from help.
struct PAMHelperCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pam-helper",
        abstract: "Hand the login password to tresord (run by the PAM module pam_tresor).",
        discussion: "docs/SECURITY.md, \"Unlock at login\". Reads the passwords from standard input, one per line.",
        shouldDisplay: false,
        subcommands: [Unlock.self, PasswordChanged.self])

    struct Unlock: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unlock", abstract: "Unlock the login keybag with the login password (standard input).")

        @Flag(help: "Start tresord when none runs (a session opening); otherwise only a running daemon is told.")
        var startDaemon = false

        func run() throws {
            try Output.run(json: false) {
                var input = SecretInput(fromStandardInput: true)
                let password = try input.next("Login password:")
                // A home not linked (never, or unlinked on purpose) has nothing to unlock at login.
                guard LoginDaemon.isLinked else { return }
                // Nothing handed over is a failure: the module then tries again when the session opens.
                guard let client = try LoginDaemon.connect(starting: startDaemon) else { throw ExitCode(3) }
                try client.unlock(loginPassword: password)
            }
        }
    }

    struct PasswordChanged: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "password-changed",
            abstract: "Follow a login password change: the old and the new password (standard input).",
            discussion: "With --without-old (root's passwd USER) only the new password is read, and the link is marked stale.")

        @Flag(help: "The change was made without the old password.") var withoutOld = false

        func run() throws {
            try Output.run(json: false) {
                var input = SecretInput(fromStandardInput: true)
                let old = withoutOld ? nil : try input.next("Old login password:")
                let new = try input.next("New login password:")
                guard LoginDaemon.isLinked, let client = try LoginDaemon.connect(starting: true) else { return }
                guard try client.status().loginLink != nil else { return }
                try client.loginPasswordChanged(old: old, new: new)
            }
        }
    }
}

/// The user's daemon for the PAM module: the one running, else started through the systemd user
/// unit where a user manager runs, else started directly.
enum LoginDaemon {
    /// Whether the home the login opens is linked to the login password: else no daemon is
    /// started or told at login (an unlinked home is not nagged to link at every login).
    static var isLinked: Bool { SecureFiles.exists(TresorPaths().loginLink) }

    /// - Parameter starting: whether to start the daemon when none answers.
    /// - Returns: a client, or nil when no daemon runs and none is to be started.
    /// - Throws: ``TresorClientError`` when a daemon does not start.
    static func connect(starting: Bool) throws -> TresorClient? {
        let paths = TresorPaths()
        if let client = try? TresorClient.connect(paths: paths, startDaemon: false) { return client }
        guard starting, SecureFiles.exists(paths.keybag) else { return nil }
        if startedByUserManager(), let client = waitForSocket(paths) { return client }
        return try TresorClient.connect(paths: paths, startDaemon: true)
    }

    /// Asks the systemd user manager to start `tresord.service`, when a manager runs.
    private static func startedByUserManager() -> Bool {
        guard let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], !runtime.isEmpty,
            access(runtime + "/systemd/private", F_OK) == 0, access("/usr/bin/systemctl", X_OK) == 0
        else { return false }
        // --no-block: a unit that waits on the session bus must not hold the login up.
        let started = try? CompanionProcess.run("/usr/bin/systemctl", arguments: ["--user", "--no-block", "start", DaemonProcess.systemdUnit])
        return started?.exitStatus == 0
    }

    /// The daemon once its socket answers, for at most 5 s (the module gives the helper 10 in all).
    private static func waitForSocket(_ paths: TresorPaths) -> TresorClient? {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if let client = try? TresorClient.connect(paths: paths, startDaemon: false) { return client }
            usleep(50_000)
        }
        return nil
    }
}
