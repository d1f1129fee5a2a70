import Foundation
import Testing
import TresorKit

/// User presence answered through `tresor approve` (docs/API.md, "Approvals"): the application
/// asks for a user-presence item without any passcode, the user types the passcode into
/// `tresor`, and the application learns only yes or no.
@Suite struct ApprovalTests {
    static let passcode = "approval-passcode"
    static let item = ItemQuery.genericPassword(service: "vault.example.com", account: "recovery")

    /// A daemon, this test runner registered as `TESTP.app`, and its user-presence item.
    func setUp() throws -> (Harness, Keychain) {
        let harness = try Harness()
        harness.secrets = [Self.passcode, "presence-secret", "wrong-passcode-typed"]
        try harness.startDaemon()
        try #require(try harness.tresor(["init", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
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

    @Test func withoutAnApproverTheApplicationIsToldAtOnce() throws {
        let (harness, keychain) = try setUp()
        #expect { try keychain.secret(Self.item) } throws: { ($0 as? APIError)?.code == .passcodeRequired }
        withExtendedLifetime(harness) {}
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
