import Foundation
import Testing
import TresorTestSupport

/// Revisions through the web API against a real daemon (docs/WEB.md, "Revisions"): a save
/// names its base; a late one is merged, or becomes a conflict copy the other participant sees
/// too — never a silent overwrite; the list carries previews and revisions.
@Suite(.blocksItsThread, .serialized) struct WebRevisionsAPITests {
    static let passcode = "e2e-web-revisions-passcode"

    @Test func lateSavesAreMergedOrKeptAsConflictCopies() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let alice = try WebBrowser.registered("alice", on: server, harness).browser
        let bob = try WebBrowser.registered("bob", on: server, harness).browser
        let created = try alice.post("/api/notes", ["title": "Trip", "body": "Trip\nday 1\nday 2\nday 3"])
        let id = try #require(created.json?["id"] as? String)
        #expect(try alice.post("/api/notes/\(id)/participants", ["name": "bob"]).status < 300)
        let detail = try #require(try bob.get("/api/notes/\(id)").json)
        let base = try #require((detail["summary"] as? [String: Any])?["revision"] as? Int)
        let original: [String: Any] = ["revision": base, "title": "Trip", "body": "Trip\nday 1\nday 2\nday 3"]

        let first = try alice.patch("/api/notes/\(id)", ["body": "Trip\nday 1: museum\nday 2\nday 3", "base": original])
        #expect(first.json?["outcome"] as? String == "saved")
        let late = try bob.patch("/api/notes/\(id)", ["body": "Trip\nday 1\nday 2\nday 3: beach", "base": original])
        #expect(late.json?["outcome"] as? String == "merged")
        #expect(late.json?["mergedBody"] as? String == "Trip\nday 1: museum\nday 2\nday 3: beach")

        let clash = try bob.patch("/api/notes/\(id)", ["body": "Trip\nday 1: zoo\nday 2\nday 3", "base": original])
        #expect(clash.json?["outcome"] as? String == "conflictCopy")
        let copy = try #require(clash.json?["conflictCopy"] as? [String: Any])
        #expect(copy["title"] as? String == "Trip (conflict copy from bob)")
        let copyID = try #require(copy["id"] as? String)
        #expect(try alice.get("/api/notes/\(copyID)").json?["body"] as? String == "Trip\nday 1: zoo\nday 2\nday 3", "the owner sees the copy")
        #expect(try alice.get("/api/notes/\(id)").json?["body"] as? String == "Trip\nday 1: museum\nday 2\nday 3: beach", "the note is unchanged")

        // Lists carry each note's revision and the first line after its title.
        let listed = try #require(try alice.get("/api/notes").json?["notes"] as? [[String: Any]])
        let note = try #require(listed.first { $0["id"] as? String == id })
        #expect(note["preview"] as? String == "day 1: museum" && (note["revision"] as? Int ?? 0) > base)
        try harness.expectNoSecretLeaked()
    }
}
