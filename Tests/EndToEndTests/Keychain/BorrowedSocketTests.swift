import Foundation
import Testing
import TresorTestSupport

/// The process that asks is the process that was identified (docs/SECURITY.md §3.4): the
/// daemon checks the sender of every read (`SCM_CREDENTIALS`) against the process that
/// connected, pinned by a pidfd, and refuses a traced client. The attacks are a C program,
/// `Tests/Fixtures/BorrowedSocket/borrowed-socket.c`, built here with `cc`.
@Suite(.blocksItsThread, .serialized) struct BorrowedSocketTests {
    static let passcode = "e2e-borrowed-passcode"
    static let secret = "borrowed-socket-secret"
    static var isRoot: Bool { getuid() == 0 }
    static var haveCC: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/cc") }
    static let lookup = "/v1/items/secret?class=genp&service=svc&account=acct"

    /// The fixture, compiled once per test process.
    static let fixture: Result<URL, any Error> = Result {
        let source = Repository.file("Tests/Fixtures/BorrowedSocket/borrowed-socket.c")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-e2e-borrowed-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        atexit {
            try? FileManager.default.removeItem(at: FileManager.default.temporaryDirectory.appendingPathComponent("tresor-e2e-borrowed-\(getpid())"))
        }
        let binary = folder.appendingPathComponent("borrowed-socket")
        let built = try Harness.execute(
            URL(fileURLWithPath: "/usr/bin/cc"), ["-O1", "-Wall", "-o", binary.path, source.path],
            environment: ProcessInfo.processInfo.environment, timeout: 120
        ).result
        guard built.succeeded else { throw FixtureError.build(built.stderr) }
        return binary
    }

    enum FixtureError: Error { case build(String) }

    /// A daemon with a passcode and ProbeAlpha registered as `TEAMA.alpha`, which stored
    /// `secret` under svc/acct.
    func setUp() throws -> (Harness, alpha: URL, fixture: URL) {
        let harness = try Harness.initialized(passcode: Self.passcode, secrets: [Self.secret])
        let folder = harness.root.appendingPathComponent("apps")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let alpha = folder.appendingPathComponent("alpha")
        try FileManager.default.copyItem(at: Harness.binaries.appendingPathComponent("ProbeAlpha"), to: alpha)
        try register(harness, alpha, id: "TEAMA.alpha")
        #expect(try harness.run(alpha, ["add", "svc", "acct"], input: Self.secret).stdout.hasPrefix("added"))
        return (harness, alpha, try Self.fixture.get())
    }

    func register(_ harness: Harness, _ executable: URL, id: String) throws {
        let result = try harness.tresor(
            ["app", "register", "--id", id, "--team", "TEAMA", "--exe", executable.path, "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(result.succeeded, "\(result.stderr)")
    }

    /// A child connects and execs the registered application, stopped before it runs; the
    /// parent asks for the application's secret on the socket they share. Before per-message
    /// credentials the daemon answered it: the connection's pid named the application.
    @Test(.enabled(if: haveCC, "needs cc to build the fixture"))
    func aParentCannotSpeakForTheRegisteredApplicationItForkedAndExeced() throws {
        let (harness, alpha, fixture) = try setUp()
        let attack = try harness.run(fixture, ["exec-stopped", harness.paths.socket.path, Self.lookup, alpha.path])
        #expect(attack.stdout.contains("stopped at exec"), "\(attack.stdout) \(attack.stderr)")
        #expect(attack.stdout.contains("parent: closed"), "the parent's request must not be served: \(attack.stdout)")
        #expect(!attack.stdout.contains(Self.secret))
        #expect(harness.daemonLog.contains("refused a request not sent by the connected process"))
        // The application itself is served as before.
        #expect(try harness.run(alpha, ["get", "svc", "acct"], revealing: [Self.secret]).stdout == Self.secret + "\n")
        try harness.expectNoSecretLeaked()
    }

    /// The identified process exits and a new process is given its pid, then sends on the
    /// connection. The pid matches; the pidfd taken at connect says its process has exited.
    @Test(.enabled(if: haveCC && isRoot, "needs cc, and root to choose the next pid (ns_last_pid)"))
    func aProcessGivenAnExitedClientsPidIsRefused() throws {
        let (harness, _, fixture) = try setUp()
        // The fixture is the registered application here: its first child is served as it.
        try register(harness, fixture, id: "TEAMA.reuse")
        let attack = try harness.run(fixture, ["pid-reuse", harness.paths.socket.path, Self.lookup], timeout: 120)
        try #require(attack.stdout.contains("reused"), "\(attack.stdout) \(attack.stderr)")
        // The first, identified process was served as TEAMA.reuse: nothing under svc/acct in its
        // groups (an unidentified one would get missingEntitlement).
        #expect(attack.stdout.contains("first: 404"), "\(attack.stdout)")
        #expect(attack.stdout.contains("itemNotFound"), "\(attack.stdout)")
        #expect(attack.stdout.contains("second: closed"), "the process with the reused pid must not be served: \(attack.stdout)")
        #expect(harness.daemonLog.contains("after the connected process"))
        try harness.expectNoSecretLeaked()
    }

    /// A registered application run under ptrace: its tracer controls it, so it is refused.
    @Test(.enabled(if: haveCC, "needs cc to build the fixture"))
    func aTracedClientIsRefused() throws {
        let (harness, alpha, fixture) = try setUp()
        let traced = try harness.run(fixture, ["traced", alpha.path, "get", "svc", "acct"])
        #expect(traced.stdout.contains("error missingEntitlement"), "\(traced.stdout) \(traced.stderr)")
        #expect(!traced.stdout.contains(Self.secret))
        #expect(try harness.run(alpha, ["get", "svc", "acct"], revealing: [Self.secret]).stdout == Self.secret + "\n")
        try harness.expectNoSecretLeaked()
    }
}
