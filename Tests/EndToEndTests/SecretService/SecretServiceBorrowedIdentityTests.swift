import Foundation
import Testing
import TresorSystem
import TresorTestSupport

/// A same-user attacker borrowing another program's Secret Service identity
/// (docs/SECURITY.md, "Borrowed bus connections"). Everything runs as an unprivileged user — the
/// bus, `tresord`, the victims and the attacker (`Tests/Fixtures/SecretService/borrow_bus.py`) —
/// since a daemon running as root never trusts a path. Each attack read the victim's secrets
/// before the provider checked what it checks now.
@Suite(
    .blocksItsThread,
    .serialized,
    .enabled(
        if: SecretService.toolsInstalled && TestUser.available,
        "needs root (to run everything as another user), setpriv, dbus-daemon, secret-tool, gcc and python3-jeepney")
)
struct SecretServiceBorrowedIdentityTests {
    static let attacker = PythonClients.fixtures.appendingPathComponent("borrow_bus.py")

    /// A provider run as the test user, and the attack script where that user can read it.
    func provider() throws -> (TresorProvider, script: URL) {
        let provider = try TresorProvider(user: try TestUser.shared.get())
        let script = provider.harness.root.appendingPathComponent("borrow_bus.py")
        try FileManager.default.copyItem(at: Self.attacker, to: script)
        try provider.harness.user?.own(script)
        return (provider, script)
    }

    /// What an attack printed: the secrets it read, and whether it was refused.
    struct Findings {
        var output: String
        var secrets: [String] { output.split(separator: "\n").filter { $0.hasPrefix("secret ") }.map { String($0.dropFirst(7)) } }
        var refused: Bool { output.contains("refused org.freedesktop.DBus.Error.AccessDenied") }
    }

    func expectNothingRead(_ findings: Findings, of secret: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!findings.secrets.contains(secret), "the attacker read the victim's secret: \(findings.output)", sourceLocation: sourceLocation)
        #expect(!findings.output.contains(secret), sourceLocation: sourceLocation)
    }

    @Test func pythonBindMountedOverSecretToolInAPrivateNamespaceIsNotSecretTool() throws {
        let (provider, script) = try provider()
        let secret = provider.marker("namespace")
        let attributes: KeyValuePairs = ["tresor-e2e": "namespace"]
        try provider.secretTool.store(label: "E2E namespace victim", attributes, secret: secret)

        // In its own user and mount namespaces the attacker puts python at /usr/bin/secret-tool,
        // so /proc/<pid>/exe reads "/usr/bin/secret-tool" — a root-owned path in the daemon's view.
        // A nested user namespace maps its uid back, so the bus's EXTERNAL check passes.
        let user = try #require(provider.harness.user)
        let attack = try provider.harness.run(
            URL(fileURLWithPath: "/usr/bin/unshare"),
            [
                "-Urm", "/bin/sh", "-c",
                "mount --bind /usr/bin/python3 /usr/bin/secret-tool && exec unshare --user --map-user=\(user.uid) --map-group=\(user.gid) /usr/bin/secret-tool -B \"$0\" read",
                script.path,
            ],
            timeout: clientTimeout)
        let findings = Findings(output: attack.stdout)
        #expect(findings.output.contains("items "), "the attack did not run: \(attack.stdout) \(attack.stderr)")
        expectNothingRead(findings, of: secret)
        // The genuine secret-tool still reads its own.
        #expect(try provider.secretTool.lookup(attributes, expecting: secret) == secret)
        try provider.harness.expectNoSecretLeaked()
    }

    /// The attacker's connection, opened while the provider was stopped, so the provider first sees
    /// it with the victim already running in the connected process: only what holds the connection
    /// now can tell.
    func borrowWhileTheProviderIsStopped(
        _ provider: TresorProvider, script: URL, keepSocket: Bool, victim: [String], revealing: [String] = []
    ) throws -> Findings {
        provider.harness.stopDaemon()
        try provider.bus.waitFor(SecretService.busName, owned: false, by: "tresord", log: { provider.harness.daemonLog })
        let go = provider.harness.root.appendingPathComponent("go-\(UUID().uuidString.prefix(8))")
        let attack = try BackgroundAttack(
            provider.harness, python: ["-B", script.path, "fork-exec"] + (keepSocket ? ["--keep"] : []) + ["--go", go.path] + victim)
        try attack.waitFor(URL(fileURLWithPath: go.path + ".ready"))
        try provider.start()
        try provider.unlock()
        try #require(FileManager.default.createFile(atPath: go.path, contents: nil))
        return Findings(output: try attack.finish(revealing: revealing))
    }

    @Test func aChildSpeakingOnTheConnectionItsParentOpenedBeforeRunningSecretToolIsRefused() throws {
        let (provider, script) = try provider()
        let secret = provider.marker("forked")
        try provider.secretTool.store(label: "E2E forked victim", ["tresor-e2e": "forked"], secret: secret)
        // The parent's socket closes at exec (close-on-exec): the process the bus names holds no
        // connection to the bus, and the child speaks on the one it opened.
        let findings = try borrowWhileTheProviderIsStopped(
            provider, script: script, keepSocket: false, victim: ["/usr/bin/secret-tool", "store", "--label=never", "tresor-e2e", "never"])
        #expect(findings.output.contains("borrowed /usr/bin/secret-tool"), "\(findings.output)")
        expectNothingRead(findings, of: secret)
        #expect(findings.refused, "\(findings.output)")
        #expect(provider.harness.daemonLog.contains("does not hold the bus connection it opened"), "the daemon logs why")
        try provider.harness.expectNoSecretLeaked()
    }

    /// A connection is served as the program it was identified by only while its process runs
    /// that program (`BusClients`' later-call check). The attacker's python makes the connection's
    /// first call itself — identified as python, it reads python's item — then forks a child that
    /// keeps the connection and executes secret-tool in the connected process. The child's next
    /// call is served as neither: not as secret-tool, whose pid the bus now names, nor as python,
    /// which that pid no longer runs. It is refused.
    @Test func aConnectionWhoseProcessRunsAnotherProgramAfterItsFirstCallIsServedAsNeither() throws {
        let (provider, script) = try provider()
        let victims = provider.marker("later-call-victim")
        try provider.secretTool.store(label: "E2E later call victim", ["tresor-e2e": "later-call"], secret: victims)
        let pythons = provider.marker("later-call-python")
        let stored = try provider.python.secretstorage(.dh, "store", ["E2E later call python", "tresor-e2e=later-call-python"], secret: pythons)
        #expect(stored.succeeded, "\(stored.stderr)")

        // The provider runs throughout: it identifies the connection at the first call, before the fork.
        let attack = try BackgroundAttack(
            provider.harness,
            python: ["-B", script.path, "fork-exec", "--first", "/usr/bin/secret-tool", "store", "--label=never", "tresor-e2e", "never"])
        let output = try attack.finish(revealing: [pythons])
        let borrowed = try #require(output.range(of: "borrowed "), "the parent never ran secret-tool: \(output)")
        let first = Findings(output: String(output[..<borrowed.lowerBound]))
        let later = Findings(output: String(output[borrowed.lowerBound...]))
        #expect(first.secrets == [pythons], "the first call is served as python, its own program: \(first.output)")
        #expect(later.output.hasPrefix("borrowed /usr/bin/secret-tool"), "\(output)")
        expectNothingRead(later, of: victims)
        expectNothingRead(later, of: pythons)
        #expect(later.refused, "\(later.output)")
        #expect(provider.harness.daemonLog.contains("started another program after it connected to the bus"), "the daemon logs why")
        try provider.harness.expectNoSecretLeaked()
    }

    /// git's helper is a generic client: any process of the user executes it with the input of its
    /// choosing, where it stands, and is served what the helper is. A process borrowing the
    /// helper's connection gets that much and no more, so the provider does not pay for the scan
    /// of every descriptor of the user that would find the borrower (`BusConnections.doubt`); a
    /// program with an identity of its own is still looked for holders
    /// (`aRegisteredApplicationsGroupsAreServedOnTheBusOnlyWhenRegisteredForItAndNeverToABorrower`).
    @Test func aChildSharingTheConnectionOfGitsHelperGetsWhatRunningTheHelperGets() throws {
        let (provider, script) = try provider()
        let helper = try GitCredentialHelper(harness: provider.harness)
        let password = provider.marker("git")
        _ = try helper.run("store", ["protocol": "https", "host": "git.example", "username": "ada", "password": password], revealing: [password])
        // The socket stays open across the exec: git's helper holds it, and so does the attacker's child.
        let findings = try borrowWhileTheProviderIsStopped(
            provider, script: script, keepSocket: true, victim: [helper.executable.path, "get"], revealing: [password])
        #expect(findings.output.contains("borrowed \(helper.executable.path)"), "\(findings.output)")
        #expect(!findings.refused, "\(findings.output)")
        #expect(findings.secrets == [password], "served as git's helper, which the provider trusts here: \(findings.output)")
        #expect(!provider.harness.daemonLog.contains("holds the bus connection"))
        // What any process of the user gets by running the helper itself.
        #expect(
            try helper.run("get", ["protocol": "https", "host": "git.example", "username": "ada"], revealing: [password])["password"] == password)
        try provider.harness.expectNoSecretLeaked()
    }

    /// A registered application on the bus: its groups are served there only when it was
    /// registered for the Secret Service, and even then not to a process borrowing its connection.
    @Test func aRegisteredApplicationsGroupsAreServedOnTheBusOnlyWhenRegisteredForItAndNeverToABorrower() throws {
        let (provider, script) = try provider()
        let harness = provider.harness
        let apps = harness.root.appendingPathComponent("apps")
        try FileManager.default.createDirectory(at: apps, withIntermediateDirectories: true)
        let alpha = apps.appendingPathComponent("alpha")
        try FileManager.default.copyItem(at: Harness.binaries.appendingPathComponent("ProbeAlpha"), to: alpha)
        // A python of its own hash and name, registered in the same team: the bus client whose
        // groups are at stake. (Named python3, it would be a generic client, which is never
        // registered for the bus: `aGenericClientIsNeverRegisteredForTheSecretService`.)
        let python = apps.appendingPathComponent("bus-app")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath())
        bytes.append(Data("\ntresor-e2e: a registered application\n".utf8))
        try bytes.write(to: python)
        chmod(python.path, 0o755)
        try harness.user?.own(apps)
        func register(_ executable: URL, _ id: String, secretService: Bool) throws {
            let registered = try harness.tresor(
                ["app", "register", "--id", id, "--team", "TEAMA", "--exe", executable.path, "--group", "TEAMA.shared", "--passcode-stdin"]
                    + (secretService ? ["--secret-service"] : []), input: provider.passcode + "\n")
            #expect(registered.succeeded, "\(registered.stderr)")
        }
        try register(alpha, "TEAMA.alpha", secretService: true)
        try register(python, "TEAMA.python", secretService: false)
        let secret = provider.marker("registered")
        let added = try harness.run(alpha, ["add", "svc", "acct", "TEAMA.shared"], input: secret)
        #expect(added.stdout.hasPrefix("added"), "\(added.stdout) \(added.stderr)")

        // Not registered for the Secret Service: on the bus it is an executable like any other.
        let plain = Findings(output: try harness.run(python, ["-B", script.path, "read"], timeout: clientTimeout).stdout)
        #expect(plain.output.contains("items 0"), "\(plain.output)")
        expectNothingRead(plain, of: secret)
        // Registered for it: its team's group is served on the bus.
        #expect(try harness.tresor(["app", "remove", "TEAMA.python", "--passcode-stdin"], input: provider.passcode + "\n").succeeded)
        try register(python, "TEAMA.python", secretService: true)
        let served = Findings(output: try harness.run(python, ["-B", script.path, "read"], timeout: clientTimeout, revealing: [secret]).stdout)
        #expect(served.secrets == [secret], "\(served.output)")

        // A process that borrows the connection of the registered application (registered for the
        // bus now) gets nothing: neither when the application's process no longer holds the
        // connection (closed at exec) nor when it holds it beside the borrower. The victim waits
        // on its input before it does anything.
        for keepSocket in [false, true] {
            let findings = try borrowWhileTheProviderIsStopped(
                provider, script: script, keepSocket: keepSocket, victim: [python.path, "-c", "import sys; sys.stdin.read()"])
            #expect(findings.output.contains("borrowed \(python.path)"), "\(findings.output)")
            expectNothingRead(findings, of: secret)
            #expect(findings.refused, "keepSocket \(keepSocket): \(findings.output)")
        }
        #expect(harness.daemonLog.contains("does not hold the bus connection it opened"))
        #expect(harness.daemonLog.contains("another program, holds the bus connection"))
        try harness.expectNoSecretLeaked()
    }

    /// secret-tool, an interpreter, or a name the user added to the generic clients: any process
    /// of the user runs them with arguments of its choosing, so registering one for the bus would
    /// hand its groups to every process.
    @Test func aGenericClientIsNeverRegisteredForTheSecretService() throws {
        let (provider, _) = try provider()
        let harness = provider.harness
        for executable in [SecretTool.system.path, "/usr/bin/python3"] {
            let refused = try harness.tresor(
                [
                    "app", "register", "--id", "TEAMG.client", "--team", "TEAMG", "--exe", executable, "--group", "TEAMG.shared", "--secret-service",
                    "--passcode-stdin",
                ],
                input: provider.passcode + "\n")
            #expect(refused.status != 0 && refused.stderr.contains("is a generic client"), "\(executable): \(refused.stderr)")
        }
        #expect(try !harness.tresor(["app", "list"]).stdout.contains("TEAMG.client"))
        // Not for the bus, it is an executable of the socket API like any other.
        let socketOnly = try harness.tresor(
            ["app", "register", "--id", "TEAMG.client", "--team", "TEAMG", "--exe", SecretTool.system.path, "--passcode-stdin"],
            input: provider.passcode + "\n")
        #expect(socketOnly.succeeded, "\(socketOnly.stderr)")
        try harness.expectNoSecretLeaked()
    }
}

/// An attack run in the background as the harness's user: its output is read when it ends, and
/// kept in the harness's transcript for the secret scan.
final class BackgroundAttack {
    private let process = Process()
    private let output: PipeDrain
    private let pipe = Pipe()
    private let harness: Harness
    private let arguments: [String]

    init(_ harness: Harness, python arguments: [String]) throws {
        self.harness = harness
        self.arguments = arguments
        let (program, programArguments) = harness.user?.wrapping(PythonClients.python, arguments) ?? (PythonClients.python, arguments)
        process.executableURL = program
        process.arguments = programArguments
        process.environment = harness.environment
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        output = PipeDrain(pipe.fileHandleForReading.fileDescriptor)
        try pipe.fileHandleForWriting.close()
    }

    /// Waits until `file` exists (the attacker made it), at most `timeout` seconds.
    func waitFor(_ file: URL, timeout: TimeInterval = 90) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !FileManager.default.fileExists(atPath: file.path) {
            guard Date() < deadline else {
                kill(process.processIdentifier, SIGKILL)
                throw SecretServiceTestError.fixture("the attacker did not get ready within \(Int(timeout)) s")
            }
            usleep(20_000)
        }
    }

    /// Its whole output, once every process of it has ended (at most `timeout` seconds).
    /// `revealing`: the secrets it is meant to read (its own), kept out of the transcript so that
    /// the secret scan still checks everything else.
    func finish(timeout: TimeInterval = 60, revealing: [String] = []) throws -> String {
        let watchdog = Watchdog(process, after: timeout)
        let text = String(decoding: output.data(), as: UTF8.self)
        process.waitUntilEnded()
        harness.record(PythonClients.python, arguments, output: text, revealing: revealing)
        if watchdog.fired { throw HarnessError.timedOut("the attack", after: timeout) }
        return text
    }
}
