import Testing
import TresorModel
import TresorProtocol

/// What `tresor approve` and the desktop's prompter show of who asks: the process, its parents,
/// and a doubt about the program — never anything that draws on the user's screen.
@Suite struct ApprovalRequestTextTests {
    @Test func theProcessAndItsParentsAreShown() {
        let request = ApprovalRequest(
            id: "1", application: "TESTP.app", executable: "/usr/bin/python3", item: "genericPassword", created: 0,
            processes: [
                ApprovalProcess(pid: 4242, executable: "/usr/bin/python3", commandLine: ["python3", "sync.py", "--all"]),
                ApprovalProcess(pid: 4200, executable: "/usr/bin/bash", commandLine: ["-bash"]),
                ApprovalProcess(pid: 4100, executable: "/usr/sbin/sshd", commandLine: []),
            ])
        #expect(
            request.requesterLines == [
                "process 4242: python3 sync.py --all",
                "  started by 4200: -bash",
                "    started by 4100: /usr/sbin/sshd",
            ])
    }

    @Test func anUnverifiedIdentityIsSaidFirst() {
        let request = ApprovalRequest(
            id: "1", application: "secret-tool", executable: "/usr/bin/secret-tool", item: "x", created: 0,
            processes: [ApprovalProcess(pid: 7, executable: "/usr/bin/secret-tool", commandLine: ["secret-tool", "lookup"])],
            unverifiedIdentity: "process 7 started another program after it connected to the bus")
        #expect(
            request.requesterLines.first
                == "Tresor could not verify which program asks: process 7 started another program after it connected to the bus")
        #expect(request.requesterLines.count == 2)
    }

    /// A command line is the asker's own text: escape sequences, line breaks and direction
    /// overrides in it could paint a different request on the terminal.
    @Test func controlCharactersDrawNothing() {
        let forged = "evil\n/usr/bin/secret-tool asks for: nothing\u{1b}[2K\r\u{202e}txt.exe"
        let shown = TerminalText.printable(forged, limit: 300)
        #expect(!shown.contains("\n") && !shown.contains("\r") && !shown.contains("\u{1b}") && !shown.contains("\u{202e}"))
        #expect(shown == "evil?/usr/bin/secret-tool asks for: nothing?[2K??txt.exe")
        #expect(TerminalText.printable(String(repeating: "a", count: 50), limit: 10) == String(repeating: "a", count: 10) + "…")
        let request = ApprovalRequest(
            id: "1", application: "a", executable: "b", item: "c", created: 0,
            processes: [ApprovalProcess(pid: 1, executable: "x", commandLine: ["sh", "-c", forged])])
        #expect(request.requesterLines.allSatisfy { !$0.contains("\n") && !$0.contains("\u{1b}") })
    }
}
