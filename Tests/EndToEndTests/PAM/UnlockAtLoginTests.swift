import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// Unlock at login through the real PAM stack (docs/SECURITY.md, "Unlock at login"): Debian's
/// pam_unix and pamtester, the module built from Support/pam, a real user and its real daemon.
@Suite(
    .blocksItsThread, .serialized,
    .enabled(if: PAMUser.available, "needs root, pamtester, setpriv, useradd and libpam0g-dev (scripts/test installs them)"))
struct UnlockAtLoginTests {
    static let passcode = "pam-e2e-passcode"

    /// A user whose keybag (passcode set) is linked to `password`, with no daemon running.
    func linkedUser(password: String) throws -> PAMUser {
        let user = try PAMUser(password: password)
        user.secrets.append(Self.passcode)
        let created = try user.tresor(["init", "--passcode-stdin"], input: "\(Self.passcode)\n")
        #expect(created.succeeded, "\(created.stderr)")
        let linked = try user.tresor(["passcode", "link-login", "--passcode-stdin"], input: "\(Self.passcode)\n\(password)\n")
        #expect(linked.succeeded, "\(linked.stderr)")
        let link = try #require(try user.status().loginLink)
        #expect(link.loginOpensOtherHome == nil, "the default home is the one logging in opens")
        user.stopDaemon()
        #expect(user.daemonPID == nil)
        return user
    }

    @Test func theRightPasswordUnlocksAtLoginStartingTheDaemonAndAWrongOneDoesNot() throws {
        let user = try linkedUser(password: "login-Pw-1")
        let refused = try user.pamtester(["authenticate", "open_session"], input: "not-the-password\n")
        #expect(!refused.succeeded, "pam_unix refuses a wrong password")
        #expect(user.daemonPID == nil, "a refused login hands nothing over and starts nothing")

        let login = try user.pamtester(["authenticate", "open_session", "close_session"], input: "login-Pw-1\n")
        #expect(login.succeeded, "\(login.stdout) \(login.stderr)")
        #expect(user.daemonPID != nil, "the module started the user's daemon")
        let status = try user.status()
        #expect(status.keybag == .unlocked)
        #expect(status.failedAttempts == 0)
        #expect(status.loginLink?.stale == nil)
        // Status says the login opened it.
        #expect(status.unlockedBy == "the login password, through the PAM module (a login or a screen unlock)")
        #expect(try user.tresor(["status"]).stdout.contains("Unlocked:   0 s ago: the login password"))
        // The daemon was started as the user, in the user's runtime folder.
        #expect(try mode(of: user.runtime.appendingPathComponent("tresor").path) == 0o700)
        user.expectNoSecretLeaked()
    }

    /// A home elsewhere than the default one: the PAM module sees only the user's home folder, so
    /// logging in never opens it — link-login and `tresor status` say so, and a login leaves it locked.
    @Test func aHomeTheLoginDoesNotOpenIsSaidAndStaysLocked() throws {
        let user = try PAMUser(password: "login-Pw-3")
        user.secrets.append(Self.passcode)
        let other = user.home.appendingPathComponent("elsewhere/tresor").path
        let atLogin = user.home.appendingPathComponent(".local/share/tresor").path
        #expect(try user.tresor(["--home", other, "init", "--passcode-stdin"], input: "\(Self.passcode)\n").succeeded)
        // The user's teardown stops the default home's daemon only: this one would outlive the
        // test, and keep `userdel` from removing the user.
        defer { _ = try? user.tresor(["--home", other, "daemon", "stop"]) }
        let linked = try user.tresor(["--home", other, "passcode", "link-login", "--passcode-stdin"], input: "\(Self.passcode)\nlogin-Pw-3\n")
        #expect(linked.succeeded && linked.stdout.contains("logging in opens only \(atLogin), not this home"), "\(linked.stdout)")
        let status = try user.tresor(["--home", other, "status", "--json"])
        let link = try #require(try CLIJSON.decode(DaemonStatus.self, from: Data(status.stdout.utf8)).loginLink)
        #expect(link.loginOpensOtherHome == atLogin)
        #expect(try user.tresor(["--home", other, "status"]).stdout.contains("logging in does not unlock this home"))
        #expect(try user.tresor(["--home", other, "lock"]).succeeded)

        #expect(try user.pamtester(["authenticate", "open_session", "close_session"], input: "login-Pw-3\n").succeeded)
        let after = try user.tresor(["--home", other, "status", "--json"])
        #expect(try CLIJSON.decode(DaemonStatus.self, from: Data(after.stdout.utf8)).keybag == .locked)
        user.expectNoSecretLeaked()
    }

    @Test func aLoginProgramThatEstablishesCredentialsBeforeTheSessionUnlocksToo() throws {
        // login and sshd call pam_setcred before pam_open_session: with no daemon yet, setcred
        // hands nothing over, and the session starts the daemon and unlocks.
        let user = try linkedUser(password: "login-Pw-1")
        let first = try user.login(password: "login-Pw-1")
        #expect(first.succeeded, "\(first.stdout) \(first.stderr)")
        #expect(try user.status().keybag == .unlocked)
        // A second login while the daemon runs: setcred hands it over, the session has nothing left to do.
        #expect(try user.tresor(["lock"]).succeeded)
        #expect(try user.login(password: "login-Pw-1").succeeded)
        let status = try user.status()
        #expect(status.keybag == .unlocked)
        #expect(status.loginLink?.failedAttempts == 0)
        user.expectNoSecretLeaked()
    }

    @Test func thePasswordCrossesByAPipeNeverArgvOrTheEnvironment() throws {
        let user = try linkedUser(password: "login-Pw-piped")
        // A `tresor` that writes down its arguments and environment, then is the real one.
        let seen = user.home.appendingPathComponent("helper-seen")
        let wrapper = user.root.appendingPathComponent("recording-tresor")
        let script =
            "#!/bin/sh\n{ printf '%s\\n' \"$0\" \"$@\"; env; echo \"ids $(id -u) $(id -G)\"; } >> \(seen.path)\nexec \(user.binaries.path)/tresor \"$@\"\n"
        try script.write(to: wrapper, atomically: true, encoding: .utf8)
        chmod(wrapper.path, 0o755)
        try user.writeService(tresor: wrapper.path)
        #expect(try user.pamtester(["authenticate", "open_session"], input: "login-Pw-piped\n").succeeded)
        #expect(try user.status().keybag == .unlocked, "the helper got the password, on its standard input")
        let recorded = try String(contentsOf: seen, encoding: .utf8)
        #expect(recorded.contains("pam-helper\nunlock\n--start-daemon"), "\(recorded)")
        #expect(!recorded.contains("login-Pw-piped"), "the password is in neither the arguments nor the environment")
        #expect(recorded.contains("XDG_RUNTIME_DIR=\(user.runtime.path)"), "the runtime folder, /run/user/UID, computed by the module")
        #expect(recorded.contains("ids \(user.uid) \(user.gid)\n"), "the user's uid and only the user's groups, none of root's: \(recorded)")
        // The environment is the module's own, nothing of the login program's (pamtester's here).
        let names = Set(recorded.split(separator: "\n").compactMap { line in line.firstIndex(of: "=").map { String(line[..<$0]) } })
        let written: Set = ["HOME", "USER", "LOGNAME", "PATH", "TRESOR_TIMEOUT", "SWIFT_BACKTRACE", "XDG_RUNTIME_DIR"]
        #expect(names.subtracting(written).isSubset(of: ["PWD", "OLDPWD", "SHLVL", "_"]), "\(names.subtracting(written))")
        user.expectNoSecretLeaked()
    }

    @Test func aLoginPasswordThatDoesNotOpenTheKeybagIsNotAWrongPasscodeAndStatusSaysToRelink() throws {
        let user = try linkedUser(password: "login-Pw-1")
        // Changed where the module does not see it (chpasswd as root): the link is behind.
        _ = try PAMUserCommand.chpasswd(user, "login-Pw-2")
        user.secrets.append("login-Pw-2")
        let login = try user.pamtester(["authenticate", "open_session"], input: "login-Pw-2\n")
        #expect(login.succeeded, "a link that does not open never fails the login: \(login.stderr)")
        let status = try user.status()
        #expect(status.keybag == .lockedSinceStart)
        #expect(status.failedAttempts == 0, "not a wrong passcode")
        #expect(status.loginLink?.stale == .passwordDidNotOpen)
        #expect(status.loginLink?.failedAttempts == 1)
        let text = try user.tresor(["status"]).stdout
        #expect(text.contains("stale"), "\(text)")
        #expect(text.contains("tresor passcode link-login"), "status says how to relink: \(text)")

        // Relinked, the next login unlocks.
        #expect(try user.tresor(["passcode", "link-login", "--passcode-stdin"], input: "\(Self.passcode)\nlogin-Pw-2\n").succeeded)
        #expect(try user.status().loginLink?.stale == nil)
        user.stopDaemon()
        #expect(try user.pamtester(["authenticate", "open_session"], input: "login-Pw-2\n").succeeded)
        #expect(try user.status().keybag == .unlocked)
        user.expectNoSecretLeaked()
    }

    @Test func passwdThroughPAMKeepsTheLinkInStep() throws {
        let user = try linkedUser(password: "login-Pw-1")
        user.secrets.append("login-Pw-new")
        // PAM_CHANGE_EXPIRED_AUTHTOK: pam_unix asks root for the old password too, as it asks a
        // user running passwd.
        let change = try user.pamtester(["chauthtok(PAM_CHANGE_EXPIRED_AUTHTOK)"], input: "login-Pw-1\nlogin-Pw-new\nlogin-Pw-new\n")
        #expect(change.succeeded, "\(change.stdout) \(change.stderr)")
        #expect(try user.status().loginLink?.stale == nil)
        #expect(try user.status().keybag == .lockedSinceStart, "following a password change does not unlock")
        user.stopDaemon()

        #expect(try user.pamtester(["authenticate", "open_session"], input: "login-Pw-new\n").succeeded)
        let status = try user.status()
        #expect(status.keybag == .unlocked, "the new login password opens the keybag")
        #expect(status.loginLink?.stale == nil)
        #expect(status.loginLink?.failedAttempts == 0)
        user.expectNoSecretLeaked()
    }

    @Test func rootsPasswdWithoutTheOldPasswordMarksTheLinkStaleAndLosesNothing() throws {
        let user = try linkedUser(password: "login-Pw-1")
        user.secrets.append("login-Pw-root")
        let change = try user.pamtester(["chauthtok"], input: "login-Pw-root\nlogin-Pw-root\n")
        #expect(change.succeeded, "\(change.stdout) \(change.stderr)")
        let status = try user.status()
        #expect(status.loginLink?.stale == .passwordChangedWithoutOld)
        let text = try user.tresor(["status"]).stdout
        #expect(text.contains("changed without the old one"), "\(text)")
        #expect(text.contains("tresor passcode link-login"), "\(text)")
        // Nothing lost: the passcode opens as before.
        #expect(try user.tresor(["unlock", "--passcode-stdin"], input: "\(Self.passcode)\n").succeeded)
        #expect(try user.status().keybag == .unlocked)
        user.expectNoSecretLeaked()
    }

    @Test func theScreenUnlockUnlocksWhatLockingTheScreenLocked() throws {
        let user = try linkedUser(password: "login-Pw-1")
        #expect(try user.pamtester(["authenticate", "open_session"], input: "login-Pw-1\n").succeeded)
        #expect(try user.tresor(["lock"]).succeeded)
        #expect(try user.status().keybag == .locked)
        // A screensaver: pam_authenticate and pam_setcred, as the user, no session.
        let unlock = try user.screensaverUnlock(password: "login-Pw-1")
        #expect(unlock.succeeded, "\(unlock.stdout) \(unlock.stderr)")
        #expect(try user.status().keybag == .unlocked)

        // A mistyped password at the screen: pam_unix refuses, nothing reaches the daemon.
        #expect(try user.tresor(["lock"]).succeeded)
        #expect(try !user.screensaverUnlock(password: "login-Pw-typo").succeeded)
        let status = try user.status()
        #expect(status.keybag == .locked)
        #expect(status.loginLink?.failedAttempts == 0)
        #expect(status.loginLink?.stale == nil)
        user.expectNoSecretLeaked()
    }

    @Test func aPasswordReachesOnlyTheDaemonOfTheUserItAuthenticated() throws {
        // sudo -u bob: alice authenticates with her password, the session is bob's. Bob's link
        // opens with alice's password here, so a password handed to the wrong user would show.
        let bob = try linkedUser(password: "alice-Pw-1")
        let alice = try PAMUser(password: "alice-Pw-1")
        let sudo = try alice.sudo(to: bob, password: "alice-Pw-1")
        #expect(sudo.succeeded, "\(sudo.stdout) \(sudo.stderr)")
        #expect(bob.daemonPID == nil, "nothing was handed to bob's daemon, nor started for it")
        #expect(try bob.status().keybag == .lockedSinceStart)
        alice.expectNoSecretLeaked()
    }

    @Test func nothingInTresorEverFailsALogin() throws {
        let user = try linkedUser(password: "login-Pw-1")
        let everything = ["authenticate", "open_session", "close_session"]

        // The module named but not there.
        try user.writeService(module: "/nonexistent/pam_tresor.so")
        #expect(try user.pamtester(everything, input: "login-Pw-1\n").succeeded)

        // The module there, `tresor` not: nothing is started, the login goes on.
        try user.writeService(tresor: "/nonexistent/tresor")
        #expect(try user.pamtester(everything, input: "login-Pw-1\n").succeeded)
        #expect(user.daemonPID == nil)

        // A helper that hangs is stopped after the module's timeout.
        let hanging = user.root.appendingPathComponent("hanging-tresor")
        try "#!/bin/sh\nexec sleep 600\n".write(to: hanging, atomically: true, encoding: .utf8)
        chmod(hanging.path, 0o755)
        try user.writeService(tresor: hanging.path, options: "timeout=2")
        let started = Date()
        #expect(try user.pamtester(everything, input: "login-Pw-1\n", timeout: 30).succeeded)
        #expect(Date().timeIntervalSince(started) < 20, "the module's wait is bounded")

        // A password change with the daemon stopped and the tresor binary missing.
        user.secrets.append("login-Pw-2")
        try user.writeService(tresor: "/nonexistent/tresor")
        #expect(try user.pamtester(["chauthtok"], input: "login-Pw-2\nlogin-Pw-2\n").succeeded)

        // A home unlinked on purpose — with the passcode: another program of the user cannot
        // take the link away — so a login starts no daemon and asks nothing of it.
        try user.writeService()
        let guessed = try user.tresor(["passcode", "unlink-login", "--passcode-stdin"], input: "not-the-passcode\n")
        #expect(!guessed.succeeded && guessed.stderr.contains("wrong passcode"), "\(guessed.stderr)")
        #expect(try user.status().loginLink != nil, "a wrong passcode leaves the link")
        #expect(try user.tresor(["passcode", "unlink-login", "--passcode-stdin"], input: "\(Self.passcode)\n").succeeded)
        #expect(try user.status().loginLink == nil)
        user.stopDaemon()
        #expect(try user.pamtester(everything, input: "login-Pw-2\n").succeeded)
        #expect(user.daemonPID == nil, "no daemon started for a home that is not linked")

        // A user who never made a Tresor home: no home, no daemon.
        let stranger = try PAMUser(password: "stranger-Pw-1")
        #expect(try stranger.pamtester(everything, input: "stranger-Pw-1\n").succeeded)
        #expect(!FileManager.default.fileExists(atPath: stranger.home.appendingPathComponent(".local/share/tresor").path))
        #expect(stranger.daemonPID == nil)
    }
}

/// Root's own tools on the test user.
enum PAMUserCommand {
    /// Sets the user's password with chpasswd, outside the module (chpasswd's PAM service does not name it).
    static func chpasswd(_ user: PAMUser, _ password: String) throws -> Harness.Result {
        let (result, _) = try Harness.execute(
            URL(fileURLWithPath: "/usr/sbin/chpasswd"), [], input: "\(user.name):\(password)\n", environment: ProcessInfo.processInfo.environment,
            timeout: 60)
        #expect(result.succeeded, "\(result.stderr)")
        return result
    }
}
