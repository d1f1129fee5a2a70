import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// Debian's python3-dbusmock, whose logind template plays logind.
private let logindMockInstalled =
    SecretService.toolsInstalled && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/dbusmock/templates/logind.py")

/// Tresor locks with the desktop (docs/SECURITY.md, "The desktop session"): a login session of
/// its user locking (logind's `Lock`), the machine going to sleep (`PrepareForSleep`), the screen
/// saver starting (`ActiveChanged`). logind is Debian's python3-dbusmock with its logind template
/// on a private system bus; the screen saver's signal is sent on a private session bus.
@Suite(
    .blocksItsThread, .serialized, .enabled(if: logindMockInstalled, "needs dbus-daemon, dbus-send and python3-dbusmock (scripts/test installs them)")
)
struct ScreenLockTests {
    /// A private system bus with logind mocked on it, a session bus, and tresord on both, unlocked.
    final class Desktop {
        let system: PrivateBus
        let session: PrivateBus
        let harness: Harness
        let passcode = "e2e-screen-lock-passcode"
        /// The daemon's web server, when the desktop was made with one.
        private(set) var web: WebServerAddress?
        private let logind: Process

        init(configuration: String? = nil, web withWeb: Bool = false) throws {
            system = try PrivateBus()
            session = try PrivateBus()
            logind = Process()
            logind.executableURL = PythonClients.python
            logind.arguments = ["-m", "dbusmock", "--template", "logind"]
            logind.environment = ProcessInfo.processInfo.environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": system.address]) { $1 }
            logind.standardOutput = FileHandle.nullDevice
            logind.standardError = FileHandle.nullDevice
            try logind.run()
            try system.waitFor("org.freedesktop.login1", by: "dbusmock's logind")
            harness = try Harness(
                configuration: configuration,
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": system.address, "DBUS_SESSION_BUS_ADDRESS": session.address])
            harness.secrets = [passcode]
            if withWeb {
                web = try harness.startWebDaemon(passcode: passcode)
            } else {
                try harness.startDaemon()
                #expect(try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n").succeeded)
            }
            try addSession("c1", uid: getuid())
            try addSession("c2", uid: 4242)
        }

        deinit {
            harness.stopDaemon()
            kill(logind.processIdentifier, SIGKILL)
            logind.waitUntilEnded()
        }

        func addSession(_ id: String, uid: uid_t) throws {
            try send(
                system,
                [
                    "--print-reply", "--dest=org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.DBus.Mock.AddSession",
                    "string:\(id)", "string:seat0", "uint32:\(uid)", "string:user\(uid)", "boolean:true",
                ])
        }

        /// logind's `Lock` of session `id` (what `loginctl lock-session` makes it send).
        func lockSession(_ id: String) throws {
            try send(
                system,
                ["--print-reply", "--dest=org.freedesktop.login1", "/org/freedesktop/login1/session/\(id)", "org.freedesktop.login1.Session.Lock"])
        }

        /// The session's `LockedHint` set to `locked` (what a screen locker does through logind's
        /// `SetLockedHint`): logind signals the change with `PropertiesChanged`.
        func markSession(_ id: String, locked: Bool) throws {
            try send(
                system,
                [
                    "--print-reply", "--dest=org.freedesktop.login1", "/org/freedesktop/login1/session/\(id)",
                    "org.freedesktop.login1.Session.SetLockedHint", "boolean:\(locked)",
                ])
        }

        /// logind's `PrepareForSleep(sleeping)`, through the mock's EmitSignal: true before the
        /// machine sleeps, false once it woke.
        func prepareForSleep(_ sleeping: Bool = true) throws {
            let emitted = try Harness.execute(
                PythonClients.python,
                [
                    "-c",
                    """
                    import dbus
                    bus = dbus.bus.BusConnection(\"\(system.address)\")
                    manager = bus.get_object("org.freedesktop.login1", "/org/freedesktop/login1")
                    manager.EmitSignal("org.freedesktop.login1.Manager", "PrepareForSleep", "b", [\(sleeping ? "True" : "False")],
                                       dbus_interface="org.freedesktop.DBus.Mock")
                    """,
                ],
                environment: ProcessInfo.processInfo.environment, timeout: 30
            ).result
            #expect(emitted.succeeded, "\(emitted.stderr)")
        }

        /// The inhibitors logind holds now (what, who, why, mode). dbusmock's `Inhibit` hands out
        /// a pipe's write end and keeps the read end: an inhibitor leaves this list when its read
        /// end reports the hang-up, i.e. once every copy of the descriptor is closed.
        func inhibitors() throws -> [[String]] {
            let listed = try Harness.execute(
                PythonClients.python,
                [
                    "-c",
                    """
                    import dbus, json
                    bus = dbus.bus.BusConnection(\"\(system.address)\")
                    manager = bus.get_object("org.freedesktop.login1", "/org/freedesktop/login1")
                    held = manager.ListInhibitors(dbus_interface="org.freedesktop.login1.Manager")
                    print(json.dumps([[str(field) for field in inhibitor[:4]] for inhibitor in held]))
                    """,
                ],
                environment: ProcessInfo.processInfo.environment, timeout: 30
            ).result
            #expect(listed.succeeded, "\(listed.stderr)")
            return try JSONDecoder().decode([[String]].self, from: Data(listed.stdout.utf8))
        }

        /// Waits up to `seconds` for logind's inhibitors to satisfy `condition`; the last list seen.
        func inhibitors(within seconds: TimeInterval = 5, until condition: ([[String]]) -> Bool) throws -> [[String]] {
            let deadline = Date().addingTimeInterval(seconds)
            var held = try inhibitors()
            while !condition(held), Date() < deadline {
                usleep(50_000)
                held = try inhibitors()
            }
            return held
        }

        /// The session's screen saver saying it started.
        func screenSaverStarts(_ interface: String) throws {
            try send(session, ["--type=signal", "/org/freedesktop/ScreenSaver", "\(interface).ActiveChanged", "boolean:true"])
        }

        private func send(_ bus: PrivateBus, _ arguments: [String]) throws {
            let sent = try Harness.execute(
                PrivateBus.dbusSend, ["--bus=\(bus.address)"] + arguments, environment: ProcessInfo.processInfo.environment, timeout: 30
            ).result
            #expect(sent.succeeded, "dbus-send \(arguments.joined(separator: " ")): \(sent.stderr)")
        }

        func unlock() throws {
            #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: passcode + "\n").succeeded)
            #expect(try harness.status().keybag == .unlocked)
        }

        /// Whether the keybag becomes locked within `seconds`.
        func becomesLocked(within seconds: TimeInterval = 5) throws -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if try harness.status().keybag == .locked { return true }
                usleep(50_000)
            }
            return false
        }
    }

    @Test func aLockedSessionOfTheUserLocksTheKeybagAndAnotherUsersDoesNot() throws {
        let desktop = try Desktop()
        try desktop.lockSession("c2")
        #expect(try !desktop.becomesLocked(within: 2), "another user's session locking locks nothing here")
        try desktop.lockSession("c1")
        #expect(try desktop.becomesLocked(), "the user's session locked: so is the keybag")
        #expect(desktop.harness.daemonLog.contains("locked: the login session locked"))
        try desktop.harness.expectNoSecretLeaked()
    }

    @Test func aSessionOfTheUserMarkedLockedLocksTheKeybagAndAnotherUsersDoesNot() throws {
        let desktop = try Desktop()
        try desktop.markSession("c2", locked: true)
        try desktop.markSession("c1", locked: false)
        #expect(try !desktop.becomesLocked(within: 2), "another user's session marked locked, or the user's marked unlocked, locks nothing")
        try desktop.markSession("c1", locked: true)
        #expect(try desktop.becomesLocked(), "the user's session marked locked: so is the keybag")
        #expect(desktop.harness.daemonLog.contains("locked: the login session's screen locked"))
        try desktop.markSession("c1", locked: false)
        usleep(500_000)
        #expect(try desktop.harness.status().keybag == .locked, "the hint turning false unlocks nothing")
        try desktop.harness.expectNoSecretLeaked()
    }

    @Test func sleepAndTheScreenSaverLockTheKeybag() throws {
        let desktop = try Desktop()
        try desktop.prepareForSleep()
        #expect(try desktop.becomesLocked(), "the machine going to sleep locks the keybag")
        for interface in ["org.freedesktop.ScreenSaver", "org.gnome.ScreenSaver"] {
            try desktop.unlock()
            try desktop.screenSaverStarts(interface)
            #expect(try desktop.becomesLocked(), "\(interface) ActiveChanged(true) locks the keybag")
        }
        try desktop.harness.expectNoSecretLeaked()
    }

    /// The machine waits for the lock: tresord holds a delay inhibitor from its start, and its
    /// descriptor is closed — logind sees the pipe hang up — only once the keybag is locked;
    /// awake again, tresord holds a new one.
    @Test func sleepWaitsForTheLockThroughADelayInhibitor() throws {
        let desktop = try Desktop()
        let tresors = ["sleep", "Tresor", "lock the keychain before sleep", "delay"]
        #expect(try desktop.inhibitors { !$0.isEmpty } == [tresors], "tresord holds logind's delay inhibitor for sleep")
        #expect(try desktop.harness.status().keybag == .unlocked)

        try desktop.prepareForSleep(true)
        let afterSleep = try desktop.inhibitors { $0.isEmpty }
        let keybagWhenReleased = try desktop.harness.status().keybag
        #expect(afterSleep.isEmpty, "the inhibitor is released once locked: the machine may sleep")
        #expect(keybagWhenReleased == .locked, "the keybag was locked when the inhibitor's descriptor closed")

        try desktop.prepareForSleep(false)
        #expect(try desktop.inhibitors { !$0.isEmpty } == [tresors], "awake again: a new inhibitor holds the next sleep back")
        #expect(try desktop.harness.status().keybag == .locked, "waking unlocks nothing")
        try desktop.harness.expectNoSecretLeaked()
    }

    /// The notes' secure sessions end with the screen, the CLI's and a browser's alike, whether or
    /// not the keybag locks with it.
    @Test func withLockWithScreenOffOnlyTheNotesSessionsEnd() throws {
        let desktop = try Desktop(configuration: #"{"lockWithScreen": false}"#, web: true)
        let harness = desktop.harness
        let passphrase = "e2e-screen-lock-notes-passphrase", password = "e2e-screen-lock-web-password"
        harness.secrets += [passphrase, password]
        // Setting the passphrase opens the CLI's secure session.
        #expect(try harness.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(passphrase)\n\(passphrase)\n").succeeded)
        #expect(try harness.json(NotesPassphraseStatus.self, ["note", "passphrase", "status"]).status.sessionOpen)
        var browser = WebBrowser(try #require(desktop.web))
        #expect(try browser.register("alice", password).status == 201)
        harness.secrets.append(browser.token ?? "")
        #expect(try browser.post("/api/secure-session", ["open": true]).status == 204)
        #expect(try browser.get("/api/widget").json?["secureSession"] as? Bool == true)

        try desktop.lockSession("c1")
        let deadline = Date().addingTimeInterval(60)
        let said = "notes sessions ended (the keybag stays unlocked: lockWithScreen is off): the login session locked"
        while !harness.daemonLog.contains(said), Date() < deadline { usleep(50_000) }
        #expect(harness.daemonLog.contains(said))
        #expect(!harness.daemonLog.contains("locked: the login session locked"), "nothing said it locked")
        #expect(try harness.status().keybag == .unlocked, "lockWithScreen false keeps the keybag unlocked")
        #expect(try harness.json(NotesPassphraseStatus.self, ["note", "passphrase", "status"]).status.sessionOpen == false)
        #expect(try browser.get("/api/widget").json?["secureSession"] as? Bool == false, "the browser's secure session ended too")
        try harness.expectNoSecretLeaked()
    }
}
