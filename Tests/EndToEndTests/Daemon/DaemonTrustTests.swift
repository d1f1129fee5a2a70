import Foundation
import Testing
import TresorTestSupport

/// What the CLI checks of the daemon it talks to, and what the daemon records of who asked
/// (docs/SECURITY.md, "`tresor`, the CLI").
@Suite(.blocksItsThread, .serialized) struct DaemonTrustTests {
    /// A socket at the daemon's path served by another user (root here): the CLI refuses to talk
    /// to it — it would hand it the passcode — and says why, at once.
    @Test(.enabled(if: TestUser.available, "needs root, to run the CLI as another user than the socket's"))
    func theCLIRefusesASocketOfAnotherUser() throws {
        let user = try TestUser.shared.get()
        let harness = try Harness(user: user)
        let folder = harness.paths.socket.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try user.own(harness.root)
        let listener = try NeverAnsweringListener(at: harness.paths.socket)
        defer { listener.close() }
        // Anyone may connect: only the peer's uid tells the impostor.
        chmod(harness.paths.socket.path, 0o777)
        let passcode = "e2e-impostor-passcode"
        harness.secrets = [passcode]
        let unlock = try harness.run(
            harness.binaries.appendingPathComponent("tresor"), ["unlock", "--passcode-stdin"], input: passcode + "\n", timeout: 30)
        #expect(!unlock.succeeded)
        #expect(unlock.stderr.contains("belongs to a process of uid 0, not to this user"), "\(unlock.stderr)")
        try harness.expectNoSecretLeaked()
    }

    /// The daemon logs each keybag operation with the pid of the process that asked, and a
    /// failure with its reason — never the passcode.
    @Test func keybagOperationsAreLoggedWithTheCallersPid() throws {
        let passcode = "e2e-accountable-passcode"
        let harness = try Harness.initialized(passcode: passcode)
        #expect(try harness.tresor(["lock"]).succeeded)
        let tresor = harness.binaries.appendingPathComponent("tresor").path
        func unlock(_ typed: String) throws -> (pid: String, succeeded: Bool) {
            let run = try harness.run(
                URL(fileURLWithPath: "/bin/sh"), ["-c", "echo $$; exec \(tresor) unlock --passcode-stdin"], input: typed + "\n")
            return (String(run.stdout.split(separator: "\n").first ?? ""), run.succeeded)
        }
        let wrong = try unlock("e2e-not-the-passcode")
        #expect(!wrong.succeeded && !wrong.pid.isEmpty)
        let right = try unlock(passcode)
        #expect(right.succeeded && right.pid != wrong.pid)
        let lines = harness.daemonLog.split(separator: "\n")
        #expect(lines.contains { $0.contains("unlock failed") && $0.contains("pid=\(wrong.pid) ") }, "\(harness.daemonLog)")
        #expect(lines.contains { $0.contains("unlock succeeded") && $0.contains("pid=\(right.pid) ") }, "\(harness.daemonLog)")
        #expect(!harness.daemonLog.contains("e2e-not-the-passcode"))
        try harness.expectNoSecretLeaked()
    }
}
