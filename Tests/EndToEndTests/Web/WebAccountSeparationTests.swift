import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// docs/SECURITY.md, "Accounts are separate everywhere": the CLI is the
/// local account — it reaches its own notes and those shared with it, never another web
/// account's by id; a participant edits a shared note's title and body but not the owner's
/// attachments; registration needs the owner's invite, and its answers are the same for a
/// taken name and a free one.
@Suite(.blocksItsThread, .serialized) struct WebAccountSeparationTests {
    static let passcode = "e2e-separation-passcode"

    func password(_ who: String) -> String { "e2e-\(who)-password-\(UUID().uuidString.prefix(8))" }

    @Test func cliCannotReachAnotherAccountsNote() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let alicePassword = password("alice"), passphrase = "e2e-separation-passphrase"
        harness.secrets += [alicePassword, passphrase]
        var alice = WebBrowser(server)
        // Registration is open here: the page is told it needs no invite field.
        #expect(try alice.get("/api/registration").text == #"{"needsInvite":false}"#)
        #expect(try alice.register("alice", alicePassword).status == 201)
        let id = try alice.createNote(title: "alice title", body: "alice body")
        let attachment = Data("alice's attachment".utf8)
        #expect(try alice.request("POST", "/api/notes/\(id)/attachments?kind=file&name=a.txt", raw: attachment).status == 201)
        // The local account has a passphrase, so `lock` would succeed on a note it may lock.
        #expect(try harness.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(passphrase)\n\(passphrase)\n").succeeded)
        let file = harness.paths.home.deletingLastPathComponent().appendingPathComponent("cli-attachment.txt")
        try Data("from the cli".utf8).write(to: file)

        for (what, arguments, input) in [
            ("show", ["note", "show", id], nil as String?),
            ("edit", ["note", "edit", id, "--body-stdin"], "overwritten by the cli"),
            ("lock", ["note", "lock", id], nil),
            ("attach", ["note", "attach", id, "--kind", "file", "--file", file.path], nil),
            ("export-attachment", ["note", "export-attachment", id, "x", "--out", "-"], nil),
            ("delete", ["note", "delete", id], nil),
        ] {
            let result = try harness.tresor(arguments + ["--json"], input: input)
            #expect(!result.succeeded && result.stdout.contains("notFound"), "CLI \(what): \(result.stdout)")
            #expect(!result.stdout.contains("alice body"), "CLI \(what) showed alice's note")
        }
        let listed = try harness.json([NoteSummaryProbe].self, ["note", "list"])
        #expect(!listed.contains { $0.id == id })

        // Alice's note is untouched.
        let after = try alice.get("/api/notes/\(id)").json
        #expect(after?["body"] as? String == "alice body" && (after?["attachments"] as? [Any])?.count == 1)
        #expect((after?["summary"] as? [String: Any])?["lock"] == nil)

        // Shared with the local account, the CLI reads and edits its body — and no more.
        #expect(try alice.post("/api/notes/\(id)/participants", ["name": "local"]).status == 201)
        #expect(try harness.tresor(["note", "show", id, "--json"]).stdout.contains("alice body"))
        #expect(try harness.tresor(["note", "edit", id, "--body-stdin"], input: "edited from the cli").succeeded)
        #expect(try alice.get("/api/notes/\(id)").json?["body"] as? String == "edited from the cli")
        for (what, arguments) in [
            ("delete", ["note", "delete", id]), ("pin", ["note", "edit", id, "--pin"]),
            ("attach", ["note", "attach", id, "--kind", "file", "--file", file.path]),
        ] {
            let result = try harness.tresor(arguments + ["--json"])
            #expect(!result.succeeded && result.stdout.contains("forbidden"), "CLI \(what) on a shared note: \(result.stdout)")
        }
        #expect((try alice.get("/api/notes/\(id)").json?["attachments"] as? [Any])?.count == 1)
        try harness.expectNoSecretLeaked()
    }

    @Test func participantCannotAddOrRemoveTheOwnersAttachments() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let alicePassword = password("alice"), bobPassword = password("bob")
        harness.secrets += [alicePassword, bobPassword]
        var alice = WebBrowser(server), bob = WebBrowser(server)
        #expect(try alice.register("alice", alicePassword).status == 201)
        #expect(try bob.register("bob", bobPassword).status == 201)
        let id = try alice.createNote(title: "shared", body: "shared body")
        let original = Data("the owner's file".utf8)
        let attachment = try #require(
            try alice.request("POST", "/api/notes/\(id)/attachments?kind=file&name=a.txt", raw: original).json?["id"] as? String)
        #expect(try alice.post("/api/notes/\(id)/participants", ["name": "bob"]).status == 201)

        let removed = try bob.delete("/api/notes/\(id)/attachments/\(attachment)")
        #expect(removed.status == 403 && removed.code == "forbidden", "participant removed an attachment: \(removed.status)")
        let flagged = try bob.patch("/api/notes/\(id)/attachments/\(attachment)", ["excludedFromBackup": true])
        #expect(flagged.status == 403 && flagged.code == "forbidden", "participant left an attachment out of backups: \(flagged.status)")
        let added = try bob.request("POST", "/api/notes/\(id)/attachments?kind=file&name=b.txt", raw: Data("bob's".utf8))
        #expect(added.status == 403 && added.code == "forbidden", "participant added an attachment: \(added.status)")
        // Title and body stay editable by the participant.
        #expect(try bob.patch("/api/notes/\(id)", ["title": "bob's title", "body": "bob's body"]).status == 200)

        let after = try alice.get("/api/notes/\(id)").json
        let attachments = after?["attachments"] as? [[String: Any]]
        #expect(attachments?.count == 1 && attachments?.first?["id"] as? String == attachment)
        #expect(attachments?.first?["excludedFromBackup"] == nil)
        #expect(try alice.get("/api/notes/\(id)/attachments/\(attachment)").body == original)
        try harness.expectNoSecretLeaked()
    }

    /// By default registration needs an invite the owner made for the name; without one, a
    /// taken name and a free one get the very same answer.
    @Test func registrationNeedsAnInviteAndTellsNoNames() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode, openRegistration: false)
        let alicePassword = password("alice"), strangerPassword = password("stranger")
        harness.secrets += [alicePassword, strangerPassword]

        let invite = try harness.json(WebInvite.self, ["web", "invite", "Alice"])
        // The code is printed for the owner by design; it must appear nowhere else.
        defer { #expect(!harness.daemonLog.contains(invite.code), "the invite code is in the daemon log") }
        #expect(invite.name == "alice" && invite.code.count == 43 && invite.registration == "invite")
        let stranger = WebBrowser(server)
        // Anyone may ask how one registers here, before any session: the page shows the field.
        let registration = try stranger.get("/api/registration")
        #expect(registration.status == 200 && registration.text == #"{"needsInvite":true}"#, "\(registration.text)")
        // Someone else's code is not an invite for another name.
        let wrongName = try stranger.post(
            "/api/accounts", ["name": "mallory", "password": strangerPassword, "passwordAgain": strangerPassword, "invite": invite.code])
        #expect(wrongName.status == 403)
        var alice = WebBrowser(server)
        let registered = try alice.post(
            "/api/accounts", ["name": "alice", "password": alicePassword, "passwordAgain": alicePassword, "invite": invite.code])
        #expect(registered.status == 201, "\(registered.text)")
        #expect(try alice.signIn("alice", alicePassword).status == 200)
        // Sharing says whether a name exists, so trying names is slowed: past the free ones, a
        // share waits before any name is looked up — one that exists too.
        let note = try alice.createNote(title: "probe", body: "b")
        for index in 0..<20 {
            let unknown = try alice.post("/api/notes/\(note)/participants", ["name": "nobody\(index)"])
            #expect(unknown.status == 404 && unknown.code == "notFound", "name \(index): \(unknown.text)")
        }
        let slowed = try alice.post("/api/notes/\(note)/participants", ["name": "local"])
        #expect(slowed.status == 429 && slowed.code == "throttled", "\(slowed.text)")
        // Used once only.
        let again = try stranger.post(
            "/api/accounts", ["name": "alice", "password": strangerPassword, "passwordAgain": strangerPassword, "invite": invite.code])
        #expect(again.status == 403)
        // The owner is told a name is taken; nobody else is.
        let taken = try harness.tresor(["web", "invite", "alice", "--json"])
        #expect(!taken.succeeded && taken.stdout.contains("conflict"))
        // `local` is never registered — a server has no such account, and still refuses it.
        let reserved = try harness.tresor(["web", "invite", "local"])
        #expect(!reserved.succeeded && reserved.stderr.contains("reserved"), "\(reserved.stderr)")

        // Taken ("alice", "local") or free ("zed"), with no invite or a made-up one: one answer.
        var answers: [String: (Int, String)] = [:]
        for name in ["alice", "local", "zed"] {
            for invite in [nil, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"] as [String?] {
                var body: [String: Any] = ["name": name, "password": strangerPassword, "passwordAgain": strangerPassword]
                if let invite { body["invite"] = invite }
                let response = try WebBrowser(server).post("/api/accounts", body)
                answers["\(name) \(invite == nil ? "none" : "made-up")"] = (response.status, response.text)
            }
        }
        let distinct = Set(answers.values.map { "\($0.0) \($0.1)" })
        #expect(distinct.count == 1, "registration answers differ by name: \(answers)")
        #expect(answers.values.first?.0 == 403)
        try harness.expectNoSecretLeaked()
    }
}
