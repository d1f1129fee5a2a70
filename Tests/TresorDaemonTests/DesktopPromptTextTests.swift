import Foundation
import Testing
import TresorSecretService

@testable import TresorDaemon

/// What the desktop's prompter shows for a Secret Service client (``DesktopUnlock``): who asks, by
/// command line and parents, and nothing a client chose drawn as a line of its own.
@Suite struct DesktopPromptTextTests {
    /// A Python process with a script on its command line, as an interpreter asks.
    private func python() throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", "import time; time.sleep(30)", "fetch-token"]
        try process.run()
        // Until its exec is done, /proc shows no command line of its own yet.
        let deadline = Date().addingTimeInterval(10)
        while (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/cmdline", encoding: .utf8))?.contains("fetch-token") != true,
            Date() < deadline
        {
            usleep(10_000)
        }
        return process
    }

    @Test func theUnlockPromptNamesTheCommandLineAndTheParentOfWhoWaits() throws {
        let process = try python()
        // SIGKILL: the test runner's children inherit a mask that blocks SIGTERM.
        defer { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        let who = DesktopUnlock.whoAsks(executable: "/usr/bin/python3.11", requester: PresenceRequester(pid: process.processIdentifier))
        let text = DesktopUnlock.unlockText(executable: "/usr/bin/python3.11", who: who, afterAWrongOne: false)
        #expect(text.message == "/usr/bin/python3.11 wants to use your keychain")
        #expect(text.description.contains("process \(process.processIdentifier): /usr/bin/python3 -c import time; time.sleep(30) fetch-token"))
        #expect(text.description.contains("started by \(getpid()):"), "the test runner, its parent")
        #expect(text.description.hasSuffix("Type your Tresor passcode to unlock the keybag."))
    }

    @Test func aDoubtAboutWhoAsksIsShownFirst() {
        let who = DesktopUnlock.whoAsks(
            executable: "/usr/bin/secret-tool",
            requester: PresenceRequester(pid: nil, unverified: "process 7 started another program after it connected to the bus"))
        #expect(who == "Tresor could not verify which program asks: process 7 started another program after it connected to the bus")
    }

    @Test func anItemsLabelOrAnExecutablesPathAddsNoLineToThePrompt() {
        // A label chosen to draw a reassuring line of its own under the real ones.
        let item = "Secret Service item \"token\nprocess 1: /usr/lib/firefox/firefox\u{202E}\" (service=x)"
        let executable = "/home/u/bin/tool\nprocess 1: /usr/bin/firefox"
        let approval = DesktopUnlock.approvalText(
            executable: executable, item: item, who: "process 42: tool", remembering: 8, afterAWrongOne: false)
        #expect(approval.message == "/home/u/bin/tool?process 1: /usr/bin/firefox wants a secret that needs you")
        let presence = DesktopUnlock.approvalText(executable: "/opt/app", item: "i", who: "", remembering: nil, afterAWrongOne: true)
        #expect(presence.message == "/opt/app wants a secret that needs you" && presence.warning == "That passcode was wrong.")
        #expect(!presence.description.contains("wrong"))
        #expect(
            approval.description
                == "Secret Service item \"token?process 1: /usr/lib/firefox/firefox?\" (service=x)\nprocess 42: tool\nType your Tresor passcode to allow this one read."
        )
        #expect(approval.choice == "_Remember this program under the same parent processes for 8 hours")
        // The hours the user chose in config.json; none offered for a client that is not generic.
        #expect(
            DesktopUnlock.approvalText(executable: "/usr/bin/git", item: "i", who: "", remembering: 1, afterAWrongOne: false).choice
                == "_Remember this program under the same parent processes for 1 hour")
        #expect(DesktopUnlock.approvalText(executable: "/usr/bin/x", item: "i", who: "", remembering: nil, afterAWrongOne: false).choice == nil)
        let unlock = DesktopUnlock.unlockText(executable: executable, who: "", afterAWrongOne: true)
        #expect(!unlock.message.contains("\n"))
        #expect(unlock.description == "Type your Tresor passcode to unlock the keybag." && unlock.warning == "That passcode was wrong.")
    }

    /// A generic client on the locked keybag: one question unlocks and allows its read, says
    /// so, names the read, and offers "for this session" as an approval does.
    @Test func anUnlockThatAllowsAGenericClientsReadSaysSo() {
        let text = DesktopUnlock.unlockText(
            executable: "/usr/bin/secret-tool", who: "process 42: secret-tool lookup", read: "1 secret with service=x\ny",
            remembering: 8, afterAWrongOne: false)
        #expect(text.title == "Unlock Tresor and allow a read" && text.message == "/usr/bin/secret-tool wants a secret of yours")
        #expect(
            text.description
                == "It asks for 1 secret with service=x?y.\nprocess 42: secret-tool lookup\nType your Tresor passcode to unlock the keybag and allow this one read."
        )
        #expect(text.choice == "_Remember this program under the same parent processes for 8 hours" && text.continueLabel == "_Unlock")
        #expect(DesktopUnlock.unlockText(executable: "/usr/bin/secret-tool", who: "", afterAWrongOne: false).choice == nil)
    }

    /// A generic client's change is put to the user as a change: allowing it must not read as
    /// allowing a read, nor the other way round.
    @Test func aReplacementOrADeletionSaysSo() {
        let replace = DesktopUnlock.approvalText(
            executable: "/usr/bin/secret-tool", item: "i", access: .replace, who: "", remembering: 8, afterAWrongOne: false)
        #expect(replace.title == "Allow a change to a secret" && replace.message == "/usr/bin/secret-tool wants to replace a secret")
        #expect(replace.description.hasSuffix("Type your Tresor passcode to allow this one change."))
        let delete = DesktopUnlock.approvalText(
            executable: "/usr/bin/python3", item: "i", access: .delete, who: "", remembering: nil, afterAWrongOne: false)
        #expect(delete.message == "/usr/bin/python3 wants to delete a secret" && delete.description.hasSuffix("to allow deleting it."))
    }
}
