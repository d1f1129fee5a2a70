import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// The widget in the browser (`GET /api/widget`) and the terminal (`tresor widget`): titles
/// only while the keybag is unlocked and a secure session is open; the whole widget a
/// placeholder before the first unlock (or while locked) when its protection level says so.
@Suite(.blocksItsThread, .serialized) struct WebWidgetTests {
    static let passcode = "e2e-web-widget-passcode"

    func widget(_ harness: Harness) throws -> Widget { try harness.json(Widget.self, ["widget"]) }

    @Test func titlesOnlyWithUnlockedKeybagAndSecureSession() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let passphrase = "e2e-widget-passphrase-\(UUID().uuidString.prefix(8))"
        harness.secrets.append(passphrase)
        let title = "e2e-widget-title-\(UUID().uuidString.prefix(8))"
        let created = try harness.json(NoteSummaryProbe.self, ["note", "new", "--title", title, "--pin", "--body-stdin"], input: "body")

        // No secure session: counts and dates, no title — in JSON and in the text box.
        var shown = try widget(harness)
        #expect(!shown.placeholder && shown.noteCount == 1 && shown.redacted && !shown.secureSession)
        #expect(shown.recent.count == 1 && shown.recent.allSatisfy { $0.title == nil && $0.redacted })
        #expect(shown.pinned.count == 1 && shown.pinned.allSatisfy { $0.title == nil })
        let text = try harness.tresor(["widget"])
        #expect(text.succeeded && text.stdout.contains("1 note") && text.stdout.contains(Widget.redactedText) && !text.stdout.contains(title))

        // Setting the passphrase opens the CLI's session: titles appear.
        #expect(try harness.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(passphrase)\n\(passphrase)\n").succeeded)
        shown = try widget(harness)
        #expect(shown.secureSession && !shown.redacted && shown.recent.first?.title == title && shown.pinned.first?.title == title)
        #expect(try harness.tresor(["widget"]).stdout.contains(title))

        // Lock Now, or a keybag lock: redacted again.
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        #expect(try widget(harness).redacted)
        // Entering the passphrase (here: to lock the note) opens a session again.
        #expect(try harness.tresor(["note", "lock", created.id, "--passphrase-stdin"], input: passphrase + "\n").succeeded)
        shown = try widget(harness)
        #expect(!shown.redacted && shown.recent.first?.title == title && shown.recent.first?.isLocked == true)
        #expect(try harness.tresor(["lock"]).succeeded)
        shown = try widget(harness)
        #expect(shown.redacted && shown.keybag == .locked && shown.recent.allSatisfy { $0.title == nil })

        // A browser's secure session counts for its account while the keybag is unlocked.
        let alicePassword = "e2e-alice-password-\(UUID().uuidString.prefix(8))"
        harness.secrets.append(alicePassword)
        var alice = WebBrowser(server)
        #expect(try alice.register("alice", alicePassword).status == 201)
        harness.secrets.append(alice.token ?? "")
        let aliceTitle = "e2e-alice-title-\(UUID().uuidString.prefix(8))"
        _ = try alice.createNote(title: aliceTitle, body: "b")
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        var web = try #require(try alice.get("/api/widget").json)
        let redactedText = try alice.get("/api/widget").text
        #expect(web["redacted"] as? Bool == true && web["noteCount"] as? Int == 1 && !redactedText.contains(aliceTitle))
        #expect(try alice.post("/api/secure-session", ["open": true]).status == 204)
        web = try #require(try alice.get("/api/widget").json)
        #expect(web["redacted"] as? Bool == false && (web["recent"] as? [[String: Any]])?.first?["title"] as? String == aliceTitle)
        #expect(try widget(harness).noteCount == 1, "the CLI sees the local account's widget, not alice's")
        #expect(try !harness.tresor(["widget", "--json"]).stdout.contains(aliceTitle))
        #expect(try alice.post("/api/secure-session", ["open": false]).status == 204)
        #expect(try alice.get("/api/widget").json?["redacted"] as? Bool == true)
        #expect(try alice.post("/api/secure-session", ["open": true]).status == 204)
        #expect(try harness.tresor(["lock"]).succeeded)
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        // The keybag lock ended the browser's secure session too.
        #expect(try alice.get("/api/widget").json?["redacted"] as? Bool == true)
        try harness.expectNoSecretLeaked()
    }

    @Test func protectionLevelsHideTheWholeWidget() throws {
        for (level, whileLocked) in [("complete", true), ("completeUnlessOpen", false), ("completeUntilFirstUserAuthentication", false)] {
            let harness = try Harness(configuration: #"{"widgetProtection": "\#(level)"}"#)
            _ = try harness.startWebDaemon(passcode: Self.passcode)
            #expect(try harness.tresor(["note", "new", "--title", "secret title", "--body-stdin"], input: "b").succeeded)
            // Before any unlock since the daemon started.
            harness.stopDaemon()
            _ = try harness.startWebDaemon(passcode: Self.passcode)
            var shown = try widget(harness)
            #expect(try harness.status().keybag == .lockedSinceStart)
            if level == "completeUntilFirstUserAuthentication" {
                #expect(!shown.placeholder && shown.noteCount == 1 && shown.redacted && shown.recent.isEmpty, "counts only")
            } else {
                #expect(shown.placeholder && shown.reason == .protectionLevel && shown.noteCount == nil && shown.recent.isEmpty, "\(level)")
                #expect(try harness.tresor(["widget"]).stdout.contains(Widget.redactedText))
            }
            #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
            shown = try widget(harness)
            #expect(!shown.placeholder && shown.noteCount == 1 && shown.redacted, "\(level) after the first unlock")
            #expect(try harness.tresor(["lock"]).succeeded)
            shown = try widget(harness)
            #expect(shown.placeholder == whileLocked, "\(level) while locked again")
            try harness.expectNoSecretLeaked()
        }
    }
}
