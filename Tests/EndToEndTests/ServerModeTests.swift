import Foundation
import Testing

/// `tresord` as a server (issue 22; docs/WEB.md, "Running a Tresor server"): what it refuses
/// to start with, in words, before it touches a database.
@Suite struct ServerModeTests {
    func tresord(_ harness: Harness, _ arguments: [String], environment: [String: String]? = nil) throws -> Harness.Result {
        try harness.run(Harness.binaries.appendingPathComponent("tresord"), ["--home", harness.paths.home.path] + arguments, environment: environment, timeout: 30)
    }

    @Test func misconfiguredServersAreRefusedInWords() throws {
        let harness = try Harness()
        let port = "\(try Harness.freePort())"
        let key = harness.paths.home.deletingLastPathComponent().appendingPathComponent("server.key").path
        let database = "postgres://tresor@127.0.0.1:5432/tresor"

        let withPassword = try tresord(harness, ["--web", port, "--database", "postgres://tresor:db-password-on-argv@127.0.0.1/tresor", "--server-key-file", key])
        #expect(withPassword.status == 1 && withPassword.stderr.contains("must not carry a password"), "\(withPassword.stderr)")
        #expect(!withPassword.stderr.contains("db-password-on-argv"), "the password is not repeated")

        let noKey = try tresord(harness, ["--web", port, "--database", database])
        #expect(noKey.status == 1 && noKey.stderr.contains("--server-key-file FILE"), "\(noKey.stderr)")
        let noDatabase = try tresord(harness, ["--web", port, "--server-key-file", key])
        #expect(noDatabase.status == 1 && noDatabase.stderr.contains("name its database too"), "\(noDatabase.stderr)")
        let noWeb = try tresord(harness, ["--database", database, "--server-key-file", key])
        #expect(noWeb.status == 1 && noWeb.stderr.contains("add --web PORT"), "\(noWeb.stderr)")
        let notAURL = try tresord(harness, ["--web", port, "--database", "mysql://tresor@127.0.0.1/tresor", "--server-key-file", key])
        #expect(notAURL.status == 1 && notAURL.stderr.contains("postgres://"), "\(notAURL.stderr)")
    }
}
