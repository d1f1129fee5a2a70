import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// Notes for registered applications (docs/API.md, "Notes for applications"): an application
/// with its team's notes group works on its team's notes only — never the user's (the CLI's),
/// never another team's — and locked notes still need their passphrase.
@Suite(.blocksItsThread) struct NotesForApplicationsTests {
    static let passcode = "notes-apps-passcode"

    func registerCurl(_ harness: Harness, team: String, groups: [String]) throws {
        let curl = URL(fileURLWithPath: "/usr/bin/curl").resolvingSymlinksInPath().path
        let registered = try harness.tresor(
            ["app", "register", "--id", "\(team).curl", "--team", team, "--exe", curl, "--passcode-stdin"] + groups.flatMap { ["--group", $0] },
            input: Self.passcode + "\n")
        try #require(registered.succeeded, "\(registered.stderr)")
    }

    @Test func anApplicationSeesItsTeamsNotesOnly() throws {
        let harness = try Harness.initialized(passcode: Self.passcode, secrets: ["team-body-alpha", "local-body-beta", "team passphrase 9"])
        try harness.registerTestRunner(id: "TESTN.app", team: "TESTN", groups: ["TESTN.notes"], passcode: Self.passcode)
        let notes = Notes(client: try TresorKitClient.connect(harness))

        // The application's note, and the user's own.
        let teamNote = try notes.create(title: "Team note", body: "team-body-alpha")
        let local = try harness.json(NoteSummary.self, ["note", "new", "--title", "Local note", "--body-stdin"], input: "local-body-beta")
        #expect(try notes.list().map(\.id) == [teamNote.id])
        #expect(try notes.show(teamNote.id).body == "team-body-alpha")
        #expect(try harness.json([NoteSummary].self, ["note", "list"]).map(\.id) == [local.id], "the CLI does not see the team's notes")
        do {
            _ = try notes.show(local.id)
            Issue.record("an application opened the user's note")
        } catch let error as APIError {
            #expect(error.code == .notFound, "the user's note is as absent as a missing one")
        }
        #expect(try notes.search("local").isEmpty)

        // An application of another team: refused without its notes group, then its own empty notes.
        try registerCurl(harness, team: "TESTO", groups: [])
        #expect(try harness.curl("POST", Route.notesList, body: Data("{}".utf8)).status == 403)
        #expect(try harness.tresor(["app", "remove", "TESTO.curl", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        try registerCurl(harness, team: "TESTO", groups: ["TESTO.notes"])
        let list = try harness.curl("POST", Route.notesList, body: Data("{}".utf8))
        #expect(list.status == 200)
        #expect(!list.body.contains(teamNote.id) && !list.body.contains(local.id), "\(list.body)")
        #expect(try harness.curl("POST", Route.notesShow, body: Data(#"{"id": "\#(teamNote.id)"}"#.utf8)).status == 404)
        #expect(try harness.curl("POST", Route.notesDelete, body: Data(#"{"id": "\#(teamNote.id)"}"#.utf8)).status == 404)
        #expect(try notes.show(teamNote.id).body == "team-body-alpha", "another team could not delete it")

        // The user's own routes stay the CLI's.
        #expect(throws: APIError.self) { try notes.lockNow() }
    }

    @Test func lockedTeamNotesNeedTheirPassphrase() throws {
        let harness = try Harness.initialized(passcode: Self.passcode, secrets: ["locked-body-gamma", "team passphrase 9"])
        try harness.registerTestRunner(id: "TESTN.app", team: "TESTN", groups: ["TESTN.notes"], passcode: Self.passcode)
        let notes = Notes(client: try TresorKitClient.connect(harness))

        try notes.setPassphrase("team passphrase 9")
        #expect(try notes.passphraseStatus().status.isSet)
        #expect(
            try harness.json(NotesPassphraseStatus.self, ["note", "passphrase", "status"]).status.isSet == false,
            "the team's passphrase is not the user's")
        let note = try notes.create(title: "Recovery codes", body: "locked-body-gamma")
        try notes.lock(note.id, passphrase: "team passphrase 9")
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        #expect(throws: NotesClientError.self) { try notes.show(note.id) }
        #expect(throws: NotesClientError.self) { try notes.show(note.id, passphrase: "wrong passphrase") }
        #expect(try notes.show(note.id, passphrase: "team passphrase 9").body == "locked-body-gamma")
        withExtendedLifetime(harness) {}
    }

    /// The async notes calls from many tasks at once: each task's note arrives, whole.
    @Test func manyTasksWriteNotesAtOnce() async throws {
        let harness = try Harness.initialized(passcode: Self.passcode)
        try harness.registerTestRunner(id: "TESTN.app", team: "TESTN", groups: ["TESTN.notes"], passcode: Self.passcode)
        let notes = Notes(client: try TresorKitClient.connect(harness))
        let ids = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for n in 0..<24 {
                group.addTask {
                    let note = try await notes.create(title: "Task \(n)", body: "body of task \(n)")
                    try await notes.edit(note.id, body: "edited by task \(n)")
                    return (n, note.id)
                }
            }
            return try await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
        }
        #expect(Set(try await notes.list().map(\.id)) == Set(ids.values))
        for (n, id) in ids { #expect(try await notes.show(id).body == "edited by task \(n)") }
        withExtendedLifetime(harness) {}
    }
}
