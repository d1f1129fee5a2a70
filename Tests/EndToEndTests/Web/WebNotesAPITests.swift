import Foundation
import Testing
import TresorTestSupport

/// The notes part of the web API against a real daemon: notes, folders, search, attachments,
/// bad input (oversized, malformed, path tricks in names, HTML in titles), and what one
/// account may do with another's notes — nothing, unless shared, and then only what a
/// participant may.
@Suite(.blocksItsThread, .serialized) struct WebNotesAPITests {
    static let passcode = "e2e-web-notes-passcode"

    func notes(_ browser: WebBrowser, query: String = "") throws -> [[String: Any]] {
        try #require(try browser.get("/api/notes\(query)").json?["notes"] as? [[String: Any]])
    }

    @Test func notesFoldersSearchEditAndDelete() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let alice = try WebBrowser.registered("alice", on: server, harness).browser

        let hostile = #"<script>alert(1)</script><img src=x onerror="alert(2)">&amp;"#
        let created = try alice.post("/api/notes", ["title": hostile, "body": "first <b>body</b>", "folder": "Work", "isPinned": true])
        #expect(created.status == 201 && created.headers["content-type"]?.hasPrefix("application/json") == true)
        let id = try #require(created.json?["id"] as? String)
        #expect(created.json?["title"] as? String == hostile, "stored and answered verbatim, as JSON")
        #expect(created.json?["isPinned"] as? Bool == true && created.json?["canManage"] as? Bool == true)
        #expect(created.json?["isShared"] as? Bool == false && created.json?["folder"] as? String == "Work")
        let created2 = try #require(created.json?["created"] as? String)
        #expect(ISO8601DateFormatter().date(from: created2) != nil, "dates are ISO 8601")
        let second = try alice.createNote(title: "Groceries", body: "Groceries\nmilk and bread\nsix eggs")

        let folders = try #require(try alice.get("/api/folders").jsonArray)
        let work = try #require(folders.first { $0["name"] as? String == "Work" })
        let workID = try #require(work["id"] as? String)
        #expect(work["noteCount"] as? Int == 1 && created.json?["folderID"] as? String == workID)
        #expect(try notes(alice).map { $0["id"] as? String } == [id, second], "pinned first")
        #expect(try notes(alice, query: "?folder=\(workID)").map { $0["id"] as? String } == [id])
        #expect(try notes(alice, query: "?search=eggs").map { $0["id"] as? String } == [second])
        // A search's preview is the line that matched; a list's, the first after the title.
        #expect(try notes(alice, query: "?search=eggs").first?["preview"] as? String == "six eggs")
        #expect(try notes(alice).last?["preview"] as? String == "milk and bread")
        #expect(try alice.get("/api/notes?folder=nope").status == 404)

        let shown = try alice.get("/api/notes/\(id)")
        #expect(shown.status == 200 && shown.json?["body"] as? String == "first <b>body</b>")
        #expect((shown.json?["summary"] as? [String: Any])?["title"] as? String == hostile)
        #expect((shown.json?["attachments"] as? [Any])?.isEmpty == true && shown.json?["locked"] == nil)

        let edited = try alice.patch("/api/notes/\(id)", ["title": "Renamed", "body": "new body", "isPinned": false, "folder": NSNull()])
        #expect(edited.status == 200 && edited.json?["title"] as? String == "Renamed" && edited.json?["folder"] == nil)
        #expect(try alice.get("/api/notes/\(id)").json?["body"] as? String == "new body")
        let moved = try alice.patch("/api/notes/\(id)", ["folderID": workID])
        #expect(moved.json?["folder"] as? String == "Work")

        // Deleting a folder keeps its notes.
        #expect(try alice.delete("/api/folders/\(workID)").status == 204)
        #expect(try alice.get("/api/folders").jsonArray?.isEmpty == true)
        #expect(try alice.get("/api/notes/\(id)").json.flatMap { ($0["summary"] as? [String: Any])?["folder"] } == nil)
        #expect(try alice.delete("/api/folders/\(workID)").status == 404)
        let folder = try alice.post("/api/folders", ["name": "Ideas"])
        #expect(folder.status == 201 && folder.json?["name"] as? String == "Ideas")

        // Deleting moves it to Recently Deleted: still shown to its owner, restored, deleted for good.
        #expect(try alice.delete("/api/notes/\(id)").status == 204)
        let deleted = try alice.get("/api/notes/\(id)")
        #expect(deleted.status == 200 && (deleted.json?["summary"] as? [String: Any])?["deleted"] != nil)
        #expect(try alice.get("/api/recently-deleted").json.flatMap { ($0["notes"] as? [[String: Any]])?.compactMap { $0["id"] as? String } } == [id])
        #expect(try alice.patch("/api/notes/\(id)", ["title": "x"]).code == "param", "nothing changes it there")
        #expect(try alice.delete("/api/notes/\(id)").code == "param")
        #expect(try alice.post("/api/notes/\(id)/restore", [:]).status == 200)
        #expect(try alice.delete("/api/notes/\(id)").status == 204)
        #expect(try alice.delete("/api/recently-deleted/\(id)").status == 204)
        let gone = try alice.get("/api/notes/\(id)")
        #expect(gone.status == 404 && gone.code == "notFound")
        #expect(try alice.delete("/api/notes/\(id)").status == 404)
        try harness.expectNoSecretLeaked()
    }

    @Test func badInputIsRefusedAndNothingIsStored() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let alice = try WebBrowser.registered("alice", on: server, harness).browser
        let id = try alice.createNote(title: "Target", body: "unchanged")

        // Malformed JSON, wrong types, missing fields: 400 param.
        for raw in ["{", "[]", "null", #"{"title": 5, "body": "x"}"#, #"{"body": "x"}"#, ""] {
            let response = try alice.request("POST", "/api/notes", raw: Data(raw.utf8), headers: [("Content-Type", "application/json")])
            #expect(response.status == 400 && response.code == "param", "\(raw) → \(response.status)")
        }
        let badPatch = try alice.request(
            "PATCH", "/api/notes/\(id)", raw: Data(#"{"title": ["x"]}"#.utf8), headers: [("Content-Type", "application/json")])
        #expect(badPatch.status == 400)
        #expect(try alice.patch("/api/notes/\(id)", ["title": ""]).status == 400, "an empty title")
        #expect(try alice.patch("/api/notes/\(id)", ["title": String(repeating: "t", count: 4097)]).status == 400)
        // Over the store's 1 MiB body limit, within the JSON limit: 400. Over 8 MiB of JSON: 413.
        let longBody = String(repeating: "b", count: 1024 * 1024 + 1)
        #expect(try alice.patch("/api/notes/\(id)", ["body": longBody]).status == 400)
        #expect(try alice.post("/api/notes", ["title": "long", "body": longBody]).status == 400)
        let huge = try alice.post("/api/notes", ["title": "huge", "body": String(repeating: "h", count: 9 * 1024 * 1024)])
        #expect(huge.status == 413 && huge.code == "requestTooLarge")

        // Attachments: bad kind, names with path tricks, oversized.
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + Data(repeating: 7, count: 3000)
        for query in [
            "kind=bogus&name=a.png", "name=a.png", "kind=image", "kind=image&name=..", "kind=image&name=.",
            "kind=image&name=..%2F..%2Fetc%2Fpasswd", "kind=image&name=a%2Fb.png", "kind=image&name=a%5Cb.png",
            "kind=image&name=a%00b.png", "kind=image&name=a%0Ab.png", "kind=file&name=invoice%E2%80%AEfdp.exe",
            "kind=image&name=\(String(repeating: "n", count: 256))",
        ] {
            let response = try alice.request("POST", "/api/notes/\(id)/attachments?\(query)", raw: png)
            #expect(response.status == 400 && response.code == "param", "\(query) → \(response.status)")
        }
        let oversized = try alice.request("POST", "/api/notes/\(id)/attachments?kind=file&name=big.bin", raw: Data(count: 32 * 1024 * 1024 + 1))
        #expect(oversized.status == 413 && oversized.code == "requestTooLarge")

        // Nothing of it was stored.
        let listed = try notes(alice)
        #expect(listed.count == 1 && listed.first?["attachmentCount"] as? Int == 0 && listed.first?["title"] as? String == "Target")
        #expect(try alice.get("/api/notes/\(id)").json?["body"] as? String == "unchanged")

        // A good attachment round-trips as opaque bytes.
        let added = try alice.request("POST", "/api/notes/\(id)/attachments?kind=image&name=%3Cimg%3E%20photo.png", raw: png)
        #expect(added.status == 201 && added.json?["name"] as? String == "<img> photo.png" && added.json?["byteCount"] as? Int == png.count)
        let attachmentID = try #require(added.json?["id"] as? String)
        // Listed in the note as docs/WEB.md, "Shapes" has it: the store's own AttachmentInfo.
        let listedAttachment = try #require((try alice.get("/api/notes/\(id)").json?["attachments"] as? [[String: Any]])?.first)
        #expect(Set(listedAttachment.keys) == ["id", "kind", "name", "byteCount", "created"], "\(listedAttachment.keys)")
        #expect(listedAttachment["id"] as? String == attachmentID && listedAttachment["kind"] as? String == "image")
        let downloaded = try alice.get("/api/notes/\(id)/attachments/\(attachmentID)")
        #expect(downloaded.status == 200 && downloaded.body == png && downloaded.headers["content-type"] == "application/octet-stream")
        expectSecurityHeaders(downloaded, api: true)
        #expect(try alice.get("/api/notes/\(id)/attachments/nope").status == 404)
        // Left out of backups and put back (docs/WEB.md, "Attachments"); nothing else of it changes.
        let excluded = try alice.patch("/api/notes/\(id)/attachments/\(attachmentID)", ["excludedFromBackup": true])
        #expect(excluded.status == 200 && excluded.json?["excludedFromBackup"] as? Bool == true && excluded.json?["byteCount"] as? Int == png.count)
        let relisted = try #require((try alice.get("/api/notes/\(id)").json?["attachments"] as? [[String: Any]])?.first)
        #expect(relisted["excludedFromBackup"] as? Bool == true)
        for bad in [[:], ["excludedFromBackup": "yes"]] as [[String: Any]] {
            let refused = try alice.patch("/api/notes/\(id)/attachments/\(attachmentID)", bad)
            #expect(refused.status == 400, "\(bad) → \(refused.status)")
        }
        #expect(try alice.patch("/api/notes/\(id)/attachments/nope", ["excludedFromBackup": true]).status == 404)
        let included = try alice.patch("/api/notes/\(id)/attachments/\(attachmentID)", ["excludedFromBackup": false])
        #expect(included.status == 200 && included.json?["excludedFromBackup"] == nil)
        #expect(try alice.get("/api/notes/\(id)/attachments/\(attachmentID)").body == png)
        #expect(try alice.delete("/api/notes/\(id)/attachments/\(attachmentID)").status == 204)
        #expect(try alice.get("/api/notes/\(id)/attachments/\(attachmentID)").status == 404)
        try harness.expectNoSecretLeaked()
    }

    @Test func anotherAccountsNoteIsNotFoundUnlessShared() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let alice = try WebBrowser.registered("alice", on: server, harness).browser
        let bob = try WebBrowser.registered("bob", on: server, harness).browser
        let id = try alice.createNote(title: "Alice's", body: "alice body")
        let png = Data(repeating: 1, count: 100)
        let attachment = try #require(
            try alice.request("POST", "/api/notes/\(id)/attachments?kind=image&name=a.png", raw: png).json?["id"] as? String)
        let missing = "00000000-0000-0000-0000-000000000000"

        // Every note route: bob gets exactly what a missing note gives (well-formed bodies, so
        // what answers is the access check, not the decoder).
        let zeros32 = Data(count: 32).base64EncodedString()
        let proof: [String: Any] = ["passphraseID": 1, "proof": zeros32]
        func attempts(_ note: String) throws -> [(String, WebResponse)] {
            [
                ("show", try bob.get("/api/notes/\(note)")),
                ("edit", try bob.patch("/api/notes/\(note)", ["title": "bob was here", "body": "bob"])),
                ("delete", try bob.delete("/api/notes/\(note)")),
                ("attach", try bob.request("POST", "/api/notes/\(note)/attachments?kind=image&name=b.png", raw: png)),
                ("attachment", try bob.get("/api/notes/\(note)/attachments/\(attachment)")),
                ("detach", try bob.delete("/api/notes/\(note)/attachments/\(attachment)")),
                (
                    "lock",
                    try bob.post(
                        "/api/notes/\(note)/lock",
                        [
                            "passphraseProof": proof, "wrappedKey": Data(count: 24).base64EncodedString(), "noteProofHash": zeros32,
                            "iv": Data(count: 12).base64EncodedString(), "tag": Data(count: 16).base64EncodedString(), "ciphertext": "",
                            "attachments": [] as [Any],
                        ])
                ),
                (
                    "locked body",
                    try bob.put(
                        "/api/notes/\(note)/locked-body",
                        [
                            "iv": Data(count: 12).base64EncodedString(), "tag": Data(count: 16).base64EncodedString(), "ciphertext": "",
                            "noteProof": zeros32,
                        ])
                ),
                (
                    "rewrap",
                    try bob.post(
                        "/api/notes/\(note)/rewrap",
                        [
                            "passphraseProof": proof, "wrappedKey": Data(count: 24).base64EncodedString(), "noteProof": zeros32,
                        ])
                ),
                ("wrapped key", try bob.post("/api/notes/\(note)/wrapped-key", proof)),
                ("share", try bob.post("/api/notes/\(note)/participants", ["name": "bob"])),
                ("unshare", try bob.delete("/api/notes/\(note)/participants/alice")),
            ]
        }
        let forAlices = try attempts(id), forMissing = try attempts(missing)
        for ((what, response), (_, reference)) in zip(forAlices, forMissing) {
            #expect(response.status == 404 && response.code == "notFound", "\(what) → \(response.status)")
            #expect(response.status == reference.status && response.code == reference.code, "\(what) differs from a missing note")
        }
        #expect(try notes(bob).isEmpty && (try bob.get("/api/notes?search=alice").json?["notes"] as? [Any])?.isEmpty == true)
        let untouched = try alice.get("/api/notes/\(id)").json
        #expect(untouched?["body"] as? String == "alice body" && (untouched?["attachments"] as? [Any])?.count == 1)

        // Shared: bob reads and edits title and body; owner-only operations are 403.
        let shared = try alice.post("/api/notes/\(id)/participants", ["name": "bob"])
        #expect(shared.status == 201 && shared.json?["participants"] as? [String] == ["bob"] && shared.json?["owner"] as? String == "alice")
        #expect(try alice.post("/api/notes/\(id)/participants", ["name": "nobody"]).status == 404)
        // Alice's pin, like her folder, is hers: Bob's list does not pin her note.
        #expect(try alice.patch("/api/notes/\(id)", ["isPinned": true]).json?["isPinned"] as? Bool == true)
        let seen = try #require(try notes(bob).first)
        #expect(
            seen["id"] as? String == id && seen["owner"] as? String == "alice" && seen["canManage"] as? Bool == false
                && seen["isShared"] as? Bool == true)
        #expect(seen["isPinned"] as? Bool == false)
        #expect((try bob.get("/api/notes/\(id)").json?["summary"] as? [String: Any])?["isPinned"] as? Bool == false)
        // Nor does the order of his list: his newer note comes first.
        let bobs = try bob.createNote(title: "Bob's own", body: "his")
        #expect(try notes(bob).map { $0["id"] as? String } == [bobs, id], "the owner's pin ordered a participant's list")
        // He finds the shared note by its text, not only by its title.
        #expect(try notes(bob, query: "?search=body").map { $0["id"] as? String } == [id], "a participant searched the shared note's title only")
        #expect(try bob.get("/api/notes/\(id)").json?["body"] as? String == "alice body")
        #expect(try bob.patch("/api/notes/\(id)", ["title": "Edited by Bob", "body": "bob's edit"]).status == 200)
        #expect(try alice.get("/api/notes/\(id)").json?["body"] as? String == "bob's edit")
        #expect(try bob.get("/api/notes/\(id)/attachments/\(attachment)").body == png)
        for (what, response) in [
            ("delete", try bob.delete("/api/notes/\(id)")),
            ("share onwards", try bob.post("/api/notes/\(id)/participants", ["name": "alice"])),
            ("remove the owner", try bob.delete("/api/notes/\(id)/participants/alice")),
            ("pin", try bob.patch("/api/notes/\(id)", ["isPinned": true])),
            ("move", try bob.patch("/api/notes/\(id)", ["folder": "Bob's"])),
            (
                "lock",
                try bob.post(
                    "/api/notes/\(id)/lock",
                    [
                        "passphraseProof": proof, "wrappedKey": Data(count: 24).base64EncodedString(), "noteProofHash": zeros32,
                        "iv": Data(count: 12).base64EncodedString(), "tag": Data(count: 16).base64EncodedString(), "ciphertext": "",
                        "attachments": [] as [Any],
                    ])
            ),
        ] {
            #expect(response.status == 403 && response.code == "forbidden", "participant \(what) → \(response.status)")
        }
        #expect(try alice.get("/api/notes/\(id)").status == 200, "still there")

        // Bob leaves; then it is gone for him again.
        #expect(try bob.delete("/api/notes/\(id)/participants/bob").status == 204)
        #expect(try bob.get("/api/notes/\(id)").status == 404 && (try notes(bob)).map { $0["id"] as? String } == [bobs])
        #expect(try alice.post("/api/notes/\(id)/participants", ["name": "bob"]).status == 201)
        #expect(try alice.delete("/api/notes/\(id)/participants/bob").status == 204)
        #expect(try bob.get("/api/notes/\(id)").status == 404)
        try harness.expectNoSecretLeaked()
    }
}
