import Foundation
import Testing
import TresorKit
import TresorTestSupport

/// User presence answered through `tresor approve` (docs/API.md, "Approvals"): the application
/// asks for a user-presence item without any passcode, the user types the passcode into
/// `tresor`, and the application learns only yes or no.
@Suite(.blocksItsThread) struct ApprovalTests {
    static let passcode = "approval-passcode"
    static let item = ItemQuery.genericPassword(service: "vault.example.com", account: "recovery")

    /// A daemon, this test runner registered as `TESTP.app`, and its user-presence item.
    func setUp() throws -> (Harness, Keychain) {
        let harness = try Harness.initialized(passcode: Self.passcode, secrets: ["presence-secret", "wrong-passcode-typed"])
        try harness.registerTestRunner(id: "TESTP.app", team: "TESTP", passcode: Self.passcode)
        let keychain = Keychain(client: try TresorKitClient.connect(harness))
        try keychain.add(Self.item, secret: Data("presence-secret".utf8)) { $0.accessControl = .userPresence }
        return (harness, keychain)
    }

    /// Runs `tresor approve --once` answering `answer`, and meanwhile asks for the secret (again
    /// while no approver listens yet). - Returns: what the application got, and what `tresor approve` printed.
    func askWhileApproving(_ harness: Harness, _ keychain: Keychain, answer: String) throws -> (Result<Data, any Error>, Harness.Result) {
        var outcome: Result<Data, any Error> = .failure(CancellationError())
        let approver = try harness.approving(answer: answer) {
            outcome = Result { try keychain.secret(Self.item) }
            // Before the approver waits, the daemon answers at once that the passcode is needed.
            guard case .failure(let error as APIError) = outcome, error.code == .passcodeRequired else { return true }
            return error.message.contains("did not allow")
        }
        return (outcome, approver)
    }

    /// Runs `command` (an approver where the user is not) in the background, and meanwhile asks
    /// for the secret until the approver has finished or the request was answered.
    /// - Returns: what the application got, and what the approver printed.
    func askWhileElsewhere(_ harness: Harness, _ keychain: Keychain, _ command: [String]) throws -> (Result<Data, any Error>, Harness.Result) {
        var outcome: Result<Data, any Error> = .failure(CancellationError())
        let environment = harness.environment(withScripts: ["PATH": Harness.binaries.path + ":/usr/bin:/bin"])
        let approver = try harness.inBackground(command) {
            try Harness.execute(
                URL(fileURLWithPath: command[0]), Array(command.dropFirst()), input: "\n", environment: environment, timeout: 60
            ).result
        } while: {
            outcome = Result { try keychain.secret(Self.item) }
            guard case .failure(let error as APIError) = outcome, error.code == .passcodeRequired else { return true }
            return error.message.contains("did not allow")
        }
        return (outcome, approver)
    }

    /// What an approver where the user is not got: refused at once, it saw no request — not the
    /// application, not the item — and the application was never put to anyone.
    func expectNothingTaken(_ harness: Harness, _ outcome: Result<Data, any Error>, _ approver: Harness.Result) {
        let shown = approver.stdout + approver.stderr
        #expect(!shown.contains("vault.example.com") && !shown.contains("recovery") && !shown.contains("TESTP.app"), "it saw the request: \(shown)")
        #expect(!shown.contains("Refused."), "\(shown)")
        #expect(shown.contains("only in the foreground of a terminal"), "a clear refusal: \(shown)")
        #expect(!approver.succeeded)
        guard case .failure(let error as APIError) = outcome else {
            Issue.record("the application got the secret")
            return
        }
        #expect(error.code == .passcodeRequired && !error.message.contains("did not allow"), "nobody was asked: \(error)")
        #expect(!harness.daemonLog.contains("approvals: asking the user"))
    }

    /// The attack: any process of the user runs the genuine `tresor approve` without a terminal
    /// (here `setsid`). Before, it took the application's request first — printing which
    /// application asked for which item — and refused it; the user's own approver never saw it.
    @Test func anApproverWithoutATerminalGetsNoRequest() throws {
        let (harness, keychain) = try setUp()
        let (outcome, approver) = try askWhileElsewhere(
            harness, keychain,
            ["/usr/bin/setsid", "--wait", Harness.binaries.appendingPathComponent("tresor").path, "approve", "--once", "--passcode-stdin"])
        expectNothingTaken(harness, outcome, approver)
    }

    /// A background job of a terminal (job control on, `&`) is not the user either: what the
    /// user types goes to the terminal's foreground process group, not to it. Everything runs as
    /// an unprivileged user, as on a desktop — the daemon, the application (ProbeAlpha, registered
    /// as `TESTP.app`) and the attacker's approver.
    @Test(.enabled(if: TestUser.available, "needs root, to run the daemon and its clients as an unprivileged user"))
    func aBackgroundJobOfATerminalGetsNoRequest() throws {
        let harness = try Harness(user: try TestUser.shared.get())
        harness.secrets = [Self.passcode, "presence-secret"]
        try harness.startDaemon()
        try #require(try harness.tresor(["init", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        let probe = harness.root.appendingPathComponent("alpha")
        try FileManager.default.copyItem(at: Harness.binaries.appendingPathComponent("ProbeAlpha"), to: probe)
        try #require(
            try harness.tresor(
                ["app", "register", "--id", "TESTP.app", "--team", "TESTP", "--exe", probe.path, "--passcode-stdin"],
                input: Self.passcode + "\n"
            ).succeeded)
        let added = try harness.tresor(
            [
                "item", "add", "--service", "vault.example.com", "--account", "recovery", "--group", "TESTP.app", "--user-presence",
                "--secret-stdin", "--passcode-stdin",
            ], input: Self.passcode + "\npresence-secret")
        try #require(added.succeeded, "\(added.stderr)")

        var outcome: Result<Data, any Error> = .failure(CancellationError())
        let (script, arguments) = harness.user!.wrapping(
            URL(fileURLWithPath: "/usr/bin/script"),
            [
                "-qec", "set -m; printf '\\n' | tresor approve --once --passcode-stdin & wait $!", "/dev/null",
            ])
        let environment = harness.environment(withScripts: ["PATH": harness.binaries.path + ":/usr/bin:/bin"])
        let approver = try harness.inBackground([script.path] + arguments) {
            try Harness.execute(script, arguments, input: "\n", environment: environment, timeout: 60).result
        } while: {
            // ProbeAlpha prints the secret, or `error CODE OSSTATUS MESSAGE`.
            let read = try harness.run(probe, ["get", "vault.example.com", "recovery", "TESTP.app"], revealing: ["presence-secret"])
            let words = read.stdout.split(separator: " ", maxSplits: 3).map(String.init)
            if read.succeeded {
                outcome = .success(Data(read.stdout.utf8))
            } else if words.count == 4, let code = APIError.Code(rawValue: words[1]) {
                outcome = .failure(APIError(code, words[3].trimmingCharacters(in: .newlines)))
            } else {
                outcome = .failure(CancellationError())
            }
            guard case .failure(let error as APIError) = outcome, error.code == .passcodeRequired else { return true }
            return error.message.contains("did not allow")
        }
        expectNothingTaken(harness, outcome, approver)
    }

    /// The request shows who asks: the process (here this test runner), its command line, and
    /// the processes that started it.
    @Test func theRequestShowsTheProcessAndItsParents() throws {
        let (harness, keychain) = try setUp()
        let (outcome, approver) = try askWhileApproving(harness, keychain, answer: "")
        #expect(throws: APIError.self) { try outcome.get() }
        let runner = ProcessInfo.processInfo.arguments[0]
        #expect(approver.stdout.contains("process \(getpid()): \(runner)"), "\(approver.stdout)")
        #expect(approver.stdout.contains("started by \(getppid()): "), "\(approver.stdout)")
        #expect(!approver.stdout.contains("could not verify"), "the socket's peer is who asks")
    }

    @Test func withoutAnApproverTheApplicationIsToldAtOnce() throws {
        let (harness, keychain) = try setUp()
        #expect { try keychain.secret(Self.item) } throws: { ($0 as? APIError)?.code == .passcodeRequired }
        withExtendedLifetime(harness) {}
    }

    /// A daemon on a desktop session's bus would ask in the desktop's prompter, but none answers
    /// there, and no `tresor approve` waits: the application is told nobody could be asked, not
    /// that the user said no.
    @Test(.enabled(if: SecretService.toolsInstalled, "needs dbus-daemon")) func withNobodyToAskOnTheDesktopTheApplicationIsToldSo() throws {
        let provider = try TresorProvider()
        provider.harness.secrets.append("presence-secret")
        try provider.harness.registerTestRunner(id: "TESTP.app", team: "TESTP", passcode: provider.passcode)
        let keychain = Keychain(client: try TresorKitClient.connect(provider.harness))
        try keychain.add(Self.item, secret: Data("presence-secret".utf8)) { $0.accessControl = .userPresence }
        #expect {
            try keychain.secret(Self.item)
        } throws: { error in
            guard let error = error as? APIError else { return false }
            return error.code == .passcodeRequired && error.message.contains("nobody could be asked") && !error.message.contains("did not allow")
        }
        #expect(provider.harness.daemonLog.contains("approvals: asking the user"), "the desktop was tried")
        try provider.harness.expectNoSecretLeaked()
    }

    @Test func theUserAllowsWithThePasscodeTypedIntoTresor() throws {
        let (harness, keychain) = try setUp()
        let (outcome, approver) = try askWhileApproving(harness, keychain, answer: Self.passcode)
        #expect(try outcome.get() == Data("presence-secret".utf8))
        #expect(approver.succeeded, "\(approver.stderr)")
        #expect(approver.stdout.contains("TESTP.app") && approver.stdout.contains("vault.example.com"), "\(approver.stdout)")
        #expect(approver.stdout.contains("Allowed."))
        // One approval is one request: the next read asks again.
        #expect { try keychain.secret(Self.item) } throws: { ($0 as? APIError)?.code == .passcodeRequired }
    }

    @Test func theUserRefusesOrTypesAWrongPasscode() throws {
        let (harness, keychain) = try setUp()
        for (answer, said) in [("", "Refused."), ("wrong-passcode-typed", "Wrong passcode: refused.")] {
            let (outcome, approver) = try askWhileApproving(harness, keychain, answer: answer)
            #expect(throws: APIError.self) { try outcome.get() }
            if case .failure(let error as APIError) = outcome {
                #expect(error.code == .passcodeRequired && error.message.contains("did not allow"), "\(error)")
            }
            #expect(approver.stdout.contains(said), "\(approver.stdout)")
        }
        let status = try harness.status()
        #expect(status.failedAttempts == 1, "the wrong passcode counted as one at unlock does")
    }
}
