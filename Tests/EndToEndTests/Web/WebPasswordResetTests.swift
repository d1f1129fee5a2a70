import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// A forgotten web password against a real daemon (docs/WEB.md, "A forgotten password"): the
/// owner's code sets a new one, once, for that account only, and every session of the account
/// ends; a wrong or used code, another account's name and an unknown name get one same answer;
/// the code and the passwords are in no log.
@Suite(.blocksItsThread, .serialized) struct WebPasswordResetTests {
    static let passcode = "e2e-web-reset-passcode"

    @Test func theOwnersCodeSetsAForgottenPasswordOnce() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let (erin, old) = try WebBrowser.registered("erin", on: server, harness)
        let (frank, _) = try WebBrowser.registered("frank", on: server, harness)
        let noteID = try erin.createNote(title: "Erin's groceries", body: "milk\n")

        let made = try harness.tresor(["web", "reset-password", "Erin", "--json"])
        #expect(made.succeeded, "\(made.stderr)")
        let check = try JSONSchemaCheck(file: Repository.root.appendingPathComponent("docs/cli-json.schema.json"))
        let violations = check.violations(
            of: try JSONTree(parsing: Data(made.stdout.utf8)), against: try #require(check.schema(forCommand: "web reset-password")))
        #expect(violations.isEmpty, "\(violations)\n\(made.stdout)")
        let reset = try CLIJSON.decode(WebPasswordReset.self, from: Data(made.stdout.utf8))
        defer { #expect(!harness.daemonLog.contains(reset.code), "the reset code is in the daemon log") }
        #expect(reset.name == "erin" && reset.code.count == 43)
        #expect((23 * 3600...24 * 3600 + 60).contains(reset.expires.timeIntervalSinceNow), "a day: \(reset.expires)")
        let new = "e2e-erin-new-password-\(UUID().uuidString.prefix(8))"
        harness.secrets.append(new)

        // A made-up code, Erin's code with another name (taken, free or `local`): one answer, nothing changes.
        var stranger = WebBrowser(server)
        var answers: Set<String> = []
        for (name, code) in [("erin", String(repeating: "A", count: 43)), ("frank", reset.code), ("zed", reset.code), ("local", reset.code)] {
            let refused = try stranger.resetPassword(name, code: code, new)
            #expect(refused.status == 401 && refused.code == "authFailed", "\(name): \(refused.text)")
            answers.insert(refused.text)
        }
        #expect(answers.count == 1, "\(answers)")
        let mismatch = try stranger.post(
            "/api/account/password-reset", ["name": "erin", "code": reset.code, "newPassword": new, "newPasswordAgain": new + "x"])
        #expect(mismatch.status == 400 && mismatch.code == "param")
        #expect(try erin.get("/api/session").status == 200, "nothing refused ended a session")

        var erinAgain = WebBrowser(server)
        let done = try erinAgain.resetPassword("Erin", code: reset.code, new)
        #expect(done.status == 200 && erinAgain.account?["name"] as? String == "erin", "\(done.text)")
        harness.secrets += [erinAgain.token, erinAgain.originToken].compactMap { $0 }
        #expect(try erin.get("/api/session").status == 401, "the account's sessions ended")
        #expect(try frank.get("/api/session").status == 200, "another account's session stays")
        #expect(try erinAgain.get("/api/notes/\(noteID)").json?["body"] as? String == "milk\n", "the notes stay")
        var later = WebBrowser(server)
        #expect(try later.signIn("erin", old).status == 401)
        #expect(try later.signIn("erin", new).status == 200)
        var reuser = WebBrowser(server)
        #expect(try reuser.resetPassword("erin", code: reset.code, new + "-again").status == 401, "a code works once")
        #expect(harness.daemonLog.contains("password set with the owner's reset code"))

        // The owner is told which accounts exist; `local` signs in with the passcode.
        let unknown = try harness.tresor(["web", "reset-password", "nobody", "--json"])
        #expect(!unknown.succeeded && unknown.stdout.contains("notFound"), "\(unknown.stdout)")
        let local = try harness.tresor(["web", "reset-password", "local"])
        #expect(!local.succeeded && local.stderr.contains("tresor passcode change"), "\(local.stderr)")
        try harness.expectNoSecretLeaked()
    }
}
