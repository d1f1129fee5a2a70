import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// A daemon started before the desktop session had a bus — at login by the PAM module, where no
/// systemd user manager runs, or by a `tresor` command — answers the Secret Service once a
/// `tresord --secret-service` of the session, started by hand or by the bus on a program's first
/// use, hands it the session's bus (docs/SECRET-SERVICE.md, "Turning it on").
@Suite(
    .blocksItsThread, .serialized,
    .enabled(if: SecretService.toolsInstalled, "needs dbus-daemon, dbus-send and secret-tool (scripts/test installs them)"))
struct SecretServiceBusHandOverTests {
    static let passcode = "e2e-bus-hand-over-passcode"

    /// A daemon with no session bus in its environment, its keybag initialised and secret-tool trusted.
    func daemonWithoutABus() throws -> Harness {
        // An empty address is none (`DBusConnection.sessionBusAddress`).
        let harness = try Harness(environment: ["DBUS_SESSION_BUS_ADDRESS": ""])
        harness.secrets = [Self.passcode]
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        let trusted = try harness.tresor(["secret-service", "trust", "add", SecretTool.system.path, "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(trusted.succeeded, "\(trusted.stderr)")
        return harness
    }

    /// Runs `tresord --secret-service` for `harness`'s home with `environment` (a session's bus):
    /// what the bus runs on a program's first use, handing that bus to the daemon running.
    func handOver(_ harness: Harness, environment: [String: String]) throws -> Harness.Result {
        try harness.run(
            harness.binaries.appendingPathComponent("tresord"), ["--home", harness.paths.home.path, "--secret-service"], environment: environment,
            timeout: 30)
    }

    /// The pid owning `name` on `bus`, asked as `harness`'s user (a bus serves its own user only).
    func owner(of name: String, on bus: PrivateBus, askedBy harness: Harness) throws -> Int32? {
        let asked = try harness.run(
            PrivateBus.dbusSend,
            [
                "--bus=\(bus.address)", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:\(name)",
            ], environment: ProcessInfo.processInfo.environment, timeout: 10)
        return asked.stdout.split(separator: " ").last.flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// As a user's own processes, not root's: the daemon running identifies the `tresord` that
    /// hands it the bus by its executable, which the kernel shows another process of the user
    /// only while the handing one has not yet made itself undumpable.
    @Test(.enabled(if: TestUser.available, "needs a user to run as (root makes one)"))
    func anUnprivilegedUsersSessionHandsItsBusToTheDaemonAlreadyRunning() throws {
        let user = try TestUser.shared.get()
        let harness = try Harness(environment: ["DBUS_SESSION_BUS_ADDRESS": ""], user: user)
        harness.secrets = [Self.passcode]
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        let daemon = try harness.status().pid
        let bus = try PrivateBus(user: user)
        let handed = try handOver(harness, environment: harness.environment.merging(bus.environment) { $1 })
        #expect(handed.succeeded, "\(handed.stderr)")
        #expect(handed.stderr.contains("answers the Secret Service on this session bus now"), "\(handed.stderr)")
        #expect(try owner(of: SecretService.busName, on: bus, askedBy: harness) == daemon, "the daemon that was running answers")
        #expect(try harness.status().serving?.secretService == "answering on the session bus")
    }

    /// A desktop session ends — its bus goes away — while the daemon keeps running: `tresor
    /// status` says the Secret Service stopped, and the next session's `tresord --secret-service`
    /// hands the daemon its own bus.
    @Test func theNextSessionsBusIsTakenOnceTheLastOneWentAway() throws {
        let harness = try daemonWithoutABus()
        let daemon = try harness.status().pid
        var first: PrivateBus? = try PrivateBus()
        let firstAddress = try #require(first?.environment)
        let handed = try handOver(harness, environment: harness.environment.merging(firstAddress) { $1 })
        #expect(handed.succeeded, "\(handed.stderr)")
        #expect(try harness.status().serving?.secretService == "answering on the session bus")

        first = nil  // the session ends: its bus is killed
        try waitUntil("tresor status says the Secret Service stopped") {
            try harness.status().serving?.secretService?.hasPrefix("stopped") == true
        }
        let next = try PrivateBus()
        let again = try handOver(harness, environment: harness.environment.merging(next.environment) { $1 })
        #expect(again.succeeded && again.stderr.contains("on this session bus now"), "\(again.stderr)")
        #expect(try owner(of: SecretService.busName, on: next, askedBy: harness) == daemon)
        #expect(try harness.status().serving?.secretService == "answering on the session bus")
    }

    /// `tresor daemon restart` of a daemon the session handed its bus: the new daemon, whose own
    /// environment names no bus, is handed the same one and answers there.
    @Test func aRestartedDaemonAnswersOnTheBusItWasHanded() throws {
        let harness = try daemonWithoutABus()
        let bus = try PrivateBus()
        let onBus = harness.environment.merging(bus.environment) { $1 }
        let handed = try handOver(harness, environment: onBus)
        #expect(handed.succeeded, "\(handed.stderr)")
        #expect(try harness.status().serving?.secretServiceBus == bus.address)

        let restarted = try harness.tresor(["daemon", "restart"])
        #expect(
            restarted.succeeded && restarted.stdout.contains("Secret Service: answering on the session bus."),
            "\(restarted.stdout) \(restarted.stderr)")
        let daemon = try harness.status().pid
        #expect(try owner(of: SecretService.busName, on: bus, askedBy: harness) == daemon, "the new daemon answers")
        #expect(try harness.status().serving?.secretService == "answering on the session bus")
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        // What was trusted ended with the daemon (docs/SECRET-SERVICE.md): trusted again.
        let trusted = try harness.tresor(["secret-service", "trust", "add", SecretTool.system.path, "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(trusted.succeeded, "\(trusted.stderr)")
        let secret = "e2e-bus-restart-secret"
        harness.secrets.append(secret)
        let tool = SecretTool(harness: harness, environment: onBus)
        try tool.store(label: "after a restart", ["service": "restart"], secret: secret)
        #expect(try tool.lookup(["service": "restart"], expecting: secret) == secret)
    }

    @Test func aSecretServiceStartedInTheSessionHandsItsBusToTheDaemonAlreadyRunning() throws {
        let harness = try daemonWithoutABus()
        let daemon = try harness.status().pid
        #expect(try harness.status().serving?.secretService == nil, "no bus: nothing answers")
        let bus = try PrivateBus()
        let onBus = harness.environment.merging(bus.environment) { $1 }

        let handed = try handOver(harness, environment: onBus)
        #expect(handed.succeeded, "\(handed.stderr)")
        #expect(handed.stderr.contains("answers the Secret Service on this session bus now"), "\(handed.stderr)")
        #expect(try owner(of: SecretService.busName, on: bus, askedBy: harness) == daemon, "the daemon that was running answers, not a second one")
        #expect(try harness.status().serving?.secretService == "answering on the session bus")

        let secret = "e2e-bus-hand-over-secret"
        harness.secrets.append(secret)
        let tool = SecretTool(harness: harness, environment: onBus)
        try tool.store(label: "handed over", ["service": "hand-over"], secret: secret)
        #expect(try tool.lookup(["service": "hand-over"], expecting: secret) == secret)

        // Again, as a second activation would: nothing to do, and no error.
        let again = try handOver(harness, environment: onBus)
        #expect(again.succeeded && again.stderr.contains("answers the Secret Service on this session bus"), "\(again.stderr)")
        #expect(!again.stderr.contains("session bus now"))

        // Another session's bus: the daemon answers on one only, and says how to move it.
        let other = try PrivateBus()
        let refused = try handOver(harness, environment: harness.environment.merging(other.environment) { $1 })
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("another session bus") && refused.stderr.contains("tresor daemon restart"), "\(refused.stderr)")
        #expect(try !other.hasOwner(SecretService.busName))

        // Without --secret-service (nor "secretService" in config.json), a second tresord still only says how to go on.
        let plain = try harness.run(
            harness.binaries.appendingPathComponent("tresord"), ["--home", harness.paths.home.path], environment: onBus, timeout: 30)
        #expect(plain.status == 1 && plain.stderr.contains("already running"), "\(plain.stderr)")
        try harness.expectNoSecretLeaked()
    }

    /// The bus starts `tresord --secret-service` when a program first asks for the Secret Service
    /// (`Support/dbus/org.freedesktop.secrets.service`): with a daemon already running, that one
    /// answers, and the program's call goes through.
    @Test func theBusActivatingTheSecretServiceReachesTheDaemonAlreadyRunning() throws {
        let harness = try daemonWithoutABus()
        let daemon = try harness.status().pid
        let exec = [
            "/usr/bin/env", "XDG_RUNTIME_DIR=\(harness.environment["XDG_RUNTIME_DIR"] ?? "")",
            harness.binaries.appendingPathComponent("tresord").path, "--home", harness.paths.home.path, "--secret-service",
        ].joined(separator: " ")
        let bus = try PrivateBus(services: [SecretService.busName: exec])
        #expect(try !bus.hasOwner(SecretService.busName))
        let secret = "e2e-bus-activation-secret"
        harness.secrets.append(secret)
        let tool = SecretTool(harness: harness, environment: harness.environment.merging(bus.environment) { $1 })
        try tool.store(label: "activated", ["service": "activation"], secret: secret)
        #expect(try owner(of: SecretService.busName, on: bus, askedBy: harness) == daemon)
        #expect(try tool.lookup(["service": "activation"], expecting: secret) == secret)
        try harness.expectNoSecretLeaked()
    }
}
